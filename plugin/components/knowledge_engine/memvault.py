"""A LangBot knowledge base backed by the MemVault vault.

`retrieve` runs MemVault's hybrid search inside the chat's scope (from the host's
`retrieval_settings`: session_name, bot_uuid, sender_id) plus this KB's own library of
uploaded documents; it never searches without a session name, and never serves what the
injector already put into this turn's prompt (kb_retrieve, turn_ledger). `ingest` turns an uploaded
JSON export, Markdown or text file into episodes; `delete_document` removes exactly what one
upload wrote. Which scope an upload goes to: see knowledge_store's module docstring.

Settings have one home each: isolation, half-life, top-k and the embedding model live in the
plugin settings (the vault has one layout and one index). The creation form shows the
upstream fields for people coming from LongTermMemory; each defaults to "plugin setting",
and a value that disagrees is refused at creation with a message saying where to change it.
The form is the only home of `import_scope`; the retrieval form of `top_k` (per retrieval).
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from langbot_plugin.api.definition.components.knowledge_engine.engine import (
    KnowledgeEngine,
    KnowledgeEngineCapability,
)
from langbot_plugin.api.entities.builtin.rag.context import RetrievalContext, RetrievalResponse
from langbot_plugin.api.entities.builtin.rag.enums import DocumentStatus
from langbot_plugin.api.entities.builtin.rag.models import IngestionContext, IngestionResult
from memvault_plugin import kb_retrieve as kr
from memvault_plugin import kb_upload as up
from memvault_plugin import knowledge_store as ks
from memvault_plugin import pipeline_memory as pm
from memvault_plugin import turn_ledger as tl
from memvault_plugin.memory_service import MemoryUnavailableError

from vault.errors import BadRequestError, MemVaultError
from vault.format.redact_forms import redacted_name
from vault.layout.names import UnsafeNameError

log = logging.getLogger(__name__)

DEFAULT_TOP_K = 5
MAX_TOP_K = 50


def _int(value: Any, default: int, low: int, high: int) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        return default
    return max(low, min(high, number))


class MemVaultKnowledgeEngine(KnowledgeEngine):
    @classmethod
    def get_capabilities(cls) -> list[str]:
        return [KnowledgeEngineCapability.DOC_INGESTION]

    # -- lifecycle ------------------------------------------------------------------

    async def on_knowledge_base_create(self, kb_id: str, config: dict) -> None:
        """Refuse settings that would disagree with the plugin's; remember the KB (its id is
        how the injector knows a pipeline uses memory). Also called when the form is saved
        again, so it overwrites."""
        memory = await self.plugin.settled()
        problem = ks.settings_conflict(memory.settings, config or {})
        if problem:
            log.warning("memvault=kb_create_refused kb=%s reason=%r", kb_id, problem)
            raise BadRequestError(problem)
        import_scope = str((config or {}).get("import_scope") or "").strip()
        if import_scope:
            try:
                ks.parse_session_key(import_scope, self._isolation())
            except (BadRequestError, UnsafeNameError, ValueError) as exc:
                raise BadRequestError(f"import_scope: {exc}") from exc
        configs = await pm.memory_kb_configs(self.plugin)
        configs[kb_id] = dict(config or {})
        await self.plugin.set_plugin_storage(ks.KB_CONFIGS_KEY, json.dumps(configs).encode())
        self.plugin.kb_cache.changed(configs)  # the next turn injects from this KB
        log.info("memvault=kb_created kb=%s import_scope=%r", kb_id, import_scope or "library")

    async def on_knowledge_base_delete(self, kb_id: str) -> None:
        """Forget the KB; its library documents go with it (nothing recalls them any more;
        git history keeps them). Documents imported into chats stay: they are chat memory."""
        await self.plugin.settled()
        configs = await pm.memory_kb_configs(self.plugin)
        if configs.pop(kb_id, None) is not None:
            await self.plugin.set_plugin_storage(ks.KB_CONFIGS_KEY, json.dumps(configs).encode())
        self.plugin.kb_cache.changed(configs)  # the next turn no longer sees it
        try:
            vault, _ = self.plugin.memory.require()
        except MemoryUnavailableError as exc:
            log.warning("memvault=kb_delete kb=%s library_kept reason=%r", kb_id, str(exc))
            return
        removed = await self.plugin.memory.run(self._drop_library, vault, kb_id)
        log.info("memvault=kb_deleted kb=%s library_episodes_removed=%d", kb_id, removed)

    @staticmethod
    def _drop_library(vault: Any, kb_id: str) -> int:
        docs = ks.DocumentMap(vault.root, kb_id)
        removed = 0
        for doc in docs.all():
            if doc.target == "library":
                removed += ks.delete_episodes(vault, doc)
            docs.pop(doc.doc_id)
        return removed

    # -- retrieval --------------------------------------------------------------------

    async def retrieve(self, context: RetrievalContext) -> RetrievalResponse:
        """The runner's retrieval (LocalAgent calls it for the KBs in ITS config). The
        injector owns recall: what it already placed in this turn's prompt is never served
        again, and the same question it answered is not searched twice (turn_ledger)."""
        started = time.perf_counter()
        kb_id = context.knowledge_base_id or ""
        settings = context.retrieval_settings or {}
        query = (context.query or "").strip()
        session = str(settings.get("session_name") or "").strip()
        if not session:
            log.warning("memvault=retrieve_refused kb=%s reason=no_session_name", kb_id)
            return RetrievalResponse(results=[], total_found=0)
        if not query:
            return RetrievalResponse(results=[], total_found=0)
        sender = str(settings.get("sender_id") or "").strip()
        if sender == "None":
            # LangBot 4.11 sends str(query.sender_id), "None" when the turn has no sender;
            # the injector knows that turn as "" (no speaker), and the ledger must match it.
            sender = ""
        memory = await self.plugin.settled()
        try:
            vault, engine = memory.require()
            scope = memory.scope(session, str(settings.get("bot_uuid") or "") or None)
            library = ks.library_scope(kb_id) if kb_id else None
        except (MemoryUnavailableError, ValueError) as exc:
            log.warning("memvault=retrieve_failed kb=%s error=%r", kb_id, str(exc))
            return RetrievalResponse(results=[], total_found=0)
        req = kr.RetrieveInput(
            kb_id=kb_id,
            query=query,
            scope=scope,
            library=library,
            sender_id=sender,
            top_k=_int(settings.get("top_k"), DEFAULT_TOP_K, 1, MAX_TOP_K),
            half_life_days=memory.settings.half_life_days,
            floor=memory.settings.relevance_floor,
            now=int(time.time()),
            gate=memory.settings.gate,
            linked_people=memory.settings.linked_people,
        )
        key = tl.ledger_key(scope, sender)
        turn = self.plugin.turns.lookup(key)
        plan = tl.plan_retrieve(turn, query, kb_id)
        try:
            served = await memory.run(kr.serve, vault, engine, req, plan, turn)
        except Exception as exc:  # noqa: BLE001 - a failed search must not fail the turn
            log.warning("memvault=retrieve_failed kb=%s error=%r", kb_id, str(exc))
            return RetrievalResponse(results=[], total_found=0)
        ids = [r.doc.episode_id for r in served.results]
        if turn is not None:
            self.plugin.turns.note_served(key, turn.query_id, ids)
        results = [kr.entry(r, req.now, sender, scope, library) for r in served.results]
        log.info(
            "memvault=retrieve kb=%s scope=%s top_k=%d results=%d found=%d withheld=%d "
            "searched=%s injector_turn=%s floor=%.2f ms=%.1f",
            kb_id,
            scope.user_key,
            req.top_k,
            len(results),
            served.found,
            len(served.withheld),
            served.searched,
            turn.query_id if turn is not None else "-",
            req.floor,
            (time.perf_counter() - started) * 1000,
        )
        return RetrievalResponse(results=results, total_found=len(results))

    # -- ingestion ----------------------------------------------------------------------

    async def ingest(self, context: IngestionContext) -> IngestionResult:
        meta = context.file_object.metadata
        doc_id = meta.document_id
        kb_id = context.knowledge_base_id
        # The name is stored (the document map, the audit line) and logged: redacted once,
        # here, as a name (vault.format.redact_forms); a suffix such as .json survives.
        filename = redacted_name(meta.filename or doc_id) or doc_id

        def failed(message: str) -> IngestionResult:
            log.warning("memvault=ingest_failed kb=%s doc=%s error=%r", kb_id, doc_id, message)
            return IngestionResult(
                document_id=doc_id, status=DocumentStatus.FAILED, error_message=message
            )

        memory = await self.plugin.settled()
        try:
            vault, _ = memory.require()
        except MemoryUnavailableError as exc:
            return failed(str(exc))
        parsed = context.parsed_content.text if context.parsed_content else ""
        if parsed and not filename.lower().endswith(".json"):
            text = parsed
        else:
            try:
                raw = await self.plugin.get_knowledge_file_stream(context.file_object.storage_path)
            except Exception as exc:  # noqa: BLE001 - the host's transfer errors vary
                return failed(f"Could not read file: {exc}")
            try:
                text = up.decode_upload(raw, filename)
            except up.UnsupportedFile as exc:
                return failed(str(exc))
        settings = context.creation_settings or {}
        try:
            result = await memory.run(
                up.ingest_document,
                vault,
                self._isolation(),
                kb_id,
                doc_id,
                filename,
                meta.mime_type,
                text,
                settings,
            )
        except (MemVaultError, ValueError) as exc:  # any kind: the document fails, saying why
            return failed(str(exc))
        scope, target, ids = result
        log.info(
            "memvault=ingest kb=%s doc=%s file=%r scope=%s target=%s episodes=%d",
            kb_id,
            doc_id,
            filename,
            scope.user_key,
            target,
            len(ids),
        )
        return IngestionResult(
            document_id=doc_id,
            status=DocumentStatus.COMPLETED,
            chunks_created=len(ids),
            metadata={"scope_key": scope.session_key, "user_key": scope.user_key, "target": target},
        )

    async def delete_document(self, kb_id: str, document_id: str) -> bool:
        """True once the document's episodes are gone (also when it wrote none, or when it
        is unknown here: the host keeps a file whose deletion is not confirmed, forever)."""
        memory = await self.plugin.settled()
        try:
            vault, _ = memory.require()
        except MemoryUnavailableError as exc:
            log.warning("memvault=delete_document_failed doc=%s error=%r", document_id, str(exc))
            return False

        def delete() -> int:
            docs = ks.DocumentMap(vault.root, kb_id)
            doc = docs.get(document_id)
            if doc is None:
                return -1
            removed = ks.delete_episodes(vault, doc)
            docs.pop(document_id)
            return removed

        removed = await memory.run(delete)
        log.info(
            "memvault=delete_document kb=%s doc=%s episodes_removed=%s",
            kb_id,
            document_id,
            "unknown_document" if removed < 0 else removed,
        )
        return True

    # -- settings -----------------------------------------------------------------------

    def _isolation(self) -> str:
        return self.plugin.memory.settings.isolation


__all__ = ["MemVaultKnowledgeEngine"]
