"""FAKE LangBot host (named as such): answers the runtime actions the plugin uses, so
components run through the SDK's real context types without a LangBot process. The real
host is exercised by the separate real-host suite (see README)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from langbot_plugin.api.entities.builtin.provider.session import LauncherTypes, Session
from langbot_plugin.api.proxies.event_context import EventContextProxy
from langbot_plugin.api.proxies.execute_context import ExecuteContextProxy
from langbot_plugin.api.proxies.invocation import bind_invocation, invocation_capability
from langbot_plugin.entities.io.actions.enums import PluginToRuntimeAction as A
from langbot_plugin.runtime.io.handler import Handler


class FakeHost(Handler):
    """Stand-in for the runtime handler. Skips Handler.__init__ on purpose (no transport)."""

    def __init__(self, bot_uuid: str | None = "bot-1", embedder: Any = None) -> None:
        self.bot_uuid = bot_uuid
        # The embedder a plugin started by `started_plugin` with the local embedding uses
        # (tests/plugin/conftest.py `plugin_embedder`); None: the embedded model, as shipped.
        self.embedder = embedder
        self.query_vars: dict[str, Any] = {
            "user_message_text": "hello",
            "sender_id": "u1",
            "sender_name": "Alice",
            "launcher_type": "group",
            "launcher_id": "123",
            "_knowledge_base_uuids": ["kb-memvault", "kb-other"],
        }
        self.storage: dict[str, str] = {}
        self.files: dict[str, bytes] = {}
        self.replies: list[Any] = []
        self.calls: list[str] = []
        self.embedding_calls = 0
        # LangBot 4.11.2 answers list_pipeline_knowledge_bases from the turn's
        # `_knowledge_base_uuids` query var; tests switch that on to reproduce it.
        self.kbs_from_query_var = False
        self.pipeline_kbs = [{"uuid": "kb-memvault", "name": "memory", "description": ""}]
        # Every knowledge base of the workspace (`list_knowledge_bases`), not just the pipeline's.
        self.workspace_kbs: list[dict[str, Any]] = list(self.pipeline_kbs)
        # FAKE LLM behind INVOKE_LLM (it stands for the host's remote model, which cannot run
        # here): scripted answers in order; an exception in the script is raised instead;
        # every call sleeps `llm_sleep` seconds first; `llm_requests` logs each call's data.
        self.llm_script: list[str | BaseException] = []
        self.llm_sleep = 0.0
        # Set to a threading.Event: every call waits for it first (the model "thinks" until
        # the test releases it; a condition instead of a fixed sleep).
        self.llm_gate: threading.Event | None = None
        self.llm_requests: list[dict[str, Any]] = []
        self.llm_models = ["model-fake"]
        # The plugin config LangBot holds: every invocation carries it, as the runtime binds
        # each action to the container's config (cli/run/handler.py action_invocation_scope).
        # None: invocations carry none and the plugin reads its own (as under `lbp run`).
        self.config: dict[str, Any] | None = None
        # The host's vector database (`index: host`): a FakeMilvusHost once a test sets one,
        # reachable only through the knowledge bases in `vector_kbs`, as on LangBot.
        self.vector_db: Any = None
        self.vector_kbs: set[str] = set()
        self.vector_filters_ignored = False

    async def call_action(
        self, action: A, data: dict[str, Any], timeout: float = 15.0, **kw: Any
    ) -> Any:
        self.calls.append(action.value)
        # As the real Handler.call_action: a call made under an SDK invocation that has
        # ended (a task an event handler left behind) raises "Plugin invocation has ended".
        invocation = invocation_capability(self)
        if action == A.INVOKE_LLM:
            return await self._invoke_llm(data, invocation)
        if action == A.GET_LLM_MODELS:
            return {"llm_models": list(self.llm_models)}
        if action == A.GET_BOT_UUID:
            return {"bot_uuid": self.bot_uuid}
        if action == A.GET_QUERY_VARS:
            return {"vars": dict(self.query_vars)}
        if action == A.GET_QUERY_VAR:
            return {"value": self.query_vars.get(data["key"])}
        if action == A.SET_QUERY_VAR:
            self.query_vars[data["key"]] = data["value"]
            return {}
        if action == A.SET_PLUGIN_STORAGE:
            self.storage[data["key"]] = data["value_base64"]
            return {}
        if action == A.GET_PLUGIN_STORAGE:
            return {"value_base64": self.storage[data["key"]]}
        if action == A.GET_PLUGIN_STORAGE_KEYS:
            return {"keys": list(self.storage)}
        if action == A.DELETE_PLUGIN_STORAGE:
            self.storage.pop(data["key"], None)
            return {}
        if action == A.GET_KNOWLEDEGE_FILE_STREAM:  # (sic: the SDK's spelling)
            return {"file_key": data["storage_path"]}
        if action == A.INVOKE_EMBEDDING:
            # The fake host embeds with the real embedded model, like a host model would.
            from indexer.backends.embeddings import default_embedder

            self.embedding_calls += 1
            vectors = default_embedder().embed_documents(data["texts"])
            return {"vectors": vectors.tolist()}
        if action == A.LIST_PIPELINE_KNOWLEDGE_BASES:
            if self.kbs_from_query_var:  # what LangBot 4.11.2 does (seen on the real host)
                wanted = self.query_vars.get("_knowledge_base_uuids") or []
                return {"knowledge_bases": [kb for kb in self.pipeline_kbs if kb["uuid"] in wanted]}
            return {"knowledge_bases": list(self.pipeline_kbs)}
        if action == A.LIST_KNOWLEDGE_BASES:
            return {"knowledge_bases": list(self.workspace_kbs)}
        if action == A.REPLY_MESSAGE:
            self.replies.append(data)
            return {}
        if action.value.startswith("vector_") and self.vector_db is not None:
            return await self._vector(action, data)
        raise NotImplementedError(f"fake host does not answer {action}")

    async def _vector(self, action: A, data: dict[str, Any]) -> Any:
        """The host's vector database: the FAKE Milvus-like one (tests/helpers/fake_host_vectors);
        `vector_filters_ignored` makes it a backend that filters on nothing at all."""
        db, kb = self.vector_db, data["collection_id"]
        assert db is not None
        if kb not in self.vector_kbs:
            raise RuntimeError("Knowledge base not found")  # as RAGRuntimeService answers
        if action == A.VECTOR_UPSERT:
            await db.vector_upsert(kb, data["vectors"], data["ids"], data.get("metadata"))
            return {}
        if action == A.VECTOR_SEARCH:
            filters = None if self.vector_filters_ignored else data.get("filters")
            found = await db.vector_search(kb, data["query_vector"], data["top_k"], filters)
            return {"results": found}
        if action == A.VECTOR_LIST:
            return await db.vector_list(kb, data.get("filters"), data["limit"], data["offset"])
        count = await db.vector_delete(kb, data.get("file_ids"), data.get("filters"))
        return {"count": count}

    async def _invoke_llm(self, data: dict[str, Any], invocation: Any) -> dict[str, Any]:
        self.llm_requests.append(data)
        if self.llm_sleep:
            await asyncio.sleep(self.llm_sleep)
        if self.llm_gate is not None:
            await asyncio.to_thread(self.llm_gate.wait, 60)
        if invocation is not None:
            invocation.require_active()
        answer = self.llm_script.pop(0) if self.llm_script else '{"candidates": []}'
        if isinstance(answer, BaseException):
            raise answer
        return {"message": {"role": "assistant", "content": answer}}

    # Uploaded knowledge files: the runtime transfers them in chunks and the SDK reads the
    # local copy by key; the fake keeps them in `self.files` (storage_path -> bytes).
    async def read_local_file(self, file_key: str, **kw: Any) -> bytes:
        return self.files[file_key]

    async def delete_local_file(self, file_key: str, **kw: Any) -> None:
        return None

    def register_memory_kb(
        self, kb_id: str = "kb-memvault", config: dict[str, Any] | None = None
    ) -> None:
        """Record a MemVault KB in plugin storage as on_knowledge_base_create does
        (`kb_configs`, upstream's `{kb_id: creation_config}`); attaching it to the pipeline
        is `pipeline_kbs`."""
        import base64
        import json

        raw = self.storage.get("kb_configs")
        configs = json.loads(base64.b64decode(raw)) if raw else {}
        configs[kb_id] = dict(config or {})
        self.storage["kb_configs"] = base64.b64encode(json.dumps(configs).encode()).decode()

    # -- context builders, as the runtime builds them --------------------------------

    def session(self, launcher_type: str = "group", launcher_id: str = "123") -> Session:
        kind = LauncherTypes.GROUP if launcher_type == "group" else LauncherTypes.PERSON
        return Session(
            launcher_type=kind, launcher_id=launcher_id, sender_id=self.query_vars.get("sender_id")
        )

    def prompt_event(self, session_name: str = "group_123", query_id: int = 7) -> EventContextProxy:
        return EventContextProxy.model_validate(
            {
                "event_name": "PromptPreProcessing",
                "query_id": query_id,
                "eid": 1,
                "event": {
                    "event_name": "PromptPreProcessing",
                    "session_name": session_name,
                    "default_prompt": [{"role": "system", "content": "You are a helpful bot."}],
                    "prompt": [{"role": "user", "content": self.query_vars["user_message_text"]}],
                },
                "plugin_runtime_handler": self,
            }
        )

    def responded_event(
        self,
        reply: str,
        launcher_type: str = "group",
        launcher_id: str = "123",
        query_id: int = 7,
        funcs_called: list[str] | None = None,
    ) -> EventContextProxy:
        """NormalMessageResponded as LangBot 4.11.2 emits it (after the runner answered,
        before the reply is sent); the user's text is the query var `user_message_text`."""
        session = {
            "launcher_type": launcher_type,
            "launcher_id": launcher_id,
            "sender_id": self.query_vars.get("sender_id"),
            "bot_uuid": self.bot_uuid,
        }
        return EventContextProxy.model_validate(
            {
                "event_name": "NormalMessageResponded",
                "query_id": query_id,
                "eid": 2,
                "event": {
                    "event_name": "NormalMessageResponded",
                    "launcher_type": launcher_type,
                    "launcher_id": launcher_id,
                    "sender_id": self.query_vars.get("sender_id"),
                    "session": session,
                    "prefix": "",
                    "response_text": reply,
                    "finish_reason": "stop",
                    "funcs_called": list(funcs_called or []),
                },
                "plugin_runtime_handler": self,
            }
        )

    async def emit(self, handler: Any, ctx: Any) -> None:
        """Run an event handler as the SDK's runtime does: inside an invocation scope that
        is revoked when the handler returns (cli/run/handler.py action_invocation_scope)."""
        with self.invocation():
            await handler(ctx)

    def invocation(self) -> Any:
        """The scope the runtime gives one action: LangBot's config for the plugin."""
        return bind_invocation(self, config=self.config)

    async def start_plugin(
        self, plugin: Any, config: dict[str, Any], stale: dict[str, Any]
    ) -> None:
        """Start `plugin` as langbot-plugin 0.7.16 does for an installed (dedicated) worker:
        the instance gets `config`, but `initialize()` runs inside an invocation bound to
        the container's config from BEFORE it was stored (`stale`: {} in a new process)."""
        self.config = dict(config)
        with bind_invocation(self, config=stale):
            plugin.config = dict(config)
            plugin.plugin_runtime_handler = self
            await plugin.initialize()

    def command(
        self, text: str, launcher_type: str = "group", launcher_id: str = "123"
    ) -> ExecuteContextProxy:
        """`text` like "!memory list 2"; params as the host splits them."""
        words = text.lstrip("!").split()
        params = words[1:]
        return ExecuteContextProxy.model_validate(
            {
                "query_id": 7,
                "session": {"launcher_type": launcher_type, "launcher_id": launcher_id},
                "command_text": text[1:],
                "full_command_text": text,
                "command": words[0],
                "crt_command": words[0],
                "params": params,
                "crt_params": list(params),
                "privilege": 1,
                "plugin_runtime_handler": self,
            }
        )


async def started_plugin(host: FakeHost, vault_path: Path, **config: Any) -> Any:
    """MemVaultPlugin with the given config, started without its watcher thread."""
    import main  # the plugin's main.py, as the runtime imports it
    from memvault_plugin.live_settings import SettingsRecord

    plugin = main.MemVaultPlugin()
    plugin.plugin_runtime_handler = host
    plugin.watch = False
    plugin.config = {"vault_path": str(vault_path), **config}
    plugin.memory = main.MemoryService(main.PluginSettings.from_config(plugin.config))
    plugin.memory.record = SettingsRecord(applied=dict(plugin.config), held=dict(plugin.config))
    local = plugin.memory.settings.embedding == "local"  # openai / langbot: as configured
    embedder = host.embedder if local else None
    await asyncio.to_thread(plugin.memory.start, embedder, watch=False)
    await plugin.wire_llm()  # as initialize() does: the FAKE LLM when a model is set
    return plugin
