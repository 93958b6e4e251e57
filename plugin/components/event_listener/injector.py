"""PromptPreProcessing: put the chat's memory into the prompt, like LongTermMemory does.

Per turn, in a pipeline that opted in (a MemVault knowledge base is attached to it):
- `_knowledge_base_uuids` loses MemVault's KBs, so LangBot's naive RAG does not recall the
  same memories a second time;
- `default_prompt` gets ONE system message: the session profile, the current speaker's
  profile and the current speaker's identity;
- `prompt` gets ONE system message: the top-k episodes recalled for `user_message_text`
  (one hybrid search in the chat's scope, the current speaker's episodes ranked up), fenced
  as data and cut to the character budget (see prompting.py);
- the query var `_ltm_context` is set with upstream's schema (speaker, session_profile,
  speaker_profile or None, episodes: [{"content": <decorated display line>}]);
- a snapshot of what was injected is written to `<vault>/.memvault/snapshots/` for
  `!memory` and the console.
Messages starting with `!` (commands) get the profile but no recall and no new snapshot, so
`!memory` shows the last real turn. Any failure is logged with its context and the turn goes
on without memory.

Cost on the hot path: four host calls in parallel, one worker-thread hop that reads at most
two profile files, runs one search (plus one per attached KB library that exists) and writes
the snapshot. Nothing scans the scope's episode files.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import knowledge_store as ks
import pipeline_memory as pm
from injection_turn import Turn, TurnInput, ltm_context, prepare
from langbot_plugin.api.definition.components.common.event_listener import EventListener
from langbot_plugin.api.entities import context, events
from langbot_plugin.api.entities.builtin.provider.message import Message

log = logging.getLogger(__name__)

COMMAND_PREFIXES = ("!", "！")  # LangBot's default command prefixes
KB_UUIDS_VAR = "_knowledge_base_uuids"
CONTEXT_VAR = "_ltm_context"


class MemoryInjector(EventListener):
    def __init__(self) -> None:
        super().__init__()

        @self.handler(events.PromptPreProcessing)
        async def on_prompt_preprocessing(event_ctx: context.EventContext) -> None:
            await self.inject(event_ctx)

    async def inject(self, ctx: context.EventContext) -> None:
        started = time.perf_counter()
        session_name = ctx.event.session_name
        log.info(
            "memvault=injection_started query_id=%s session_name=%s", ctx.query_id, session_name
        )
        try:
            configs, pipeline_kbs, query_vars, bot_uuid = await asyncio.gather(
                pm.memory_kb_configs(self.plugin),
                ctx.list_pipeline_knowledge_bases(),
                ctx.get_query_vars(),
                ctx.get_bot_uuid(),
            )
        except Exception:  # noqa: BLE001 - the host failed us; the turn goes on
            log.exception(
                "memvault=injection_failed query_id=%s session_name=%s stage=host_calls",
                ctx.query_id,
                session_name,
            )
            return
        if not configs:
            log.info("memvault=injection_skipped query_id=%s reason=no_kb_config", ctx.query_id)
            return
        attached = pm.attached_kbs(configs, pipeline_kbs)
        if not attached:
            log.info(
                "memvault=injection_skipped query_id=%s kb_ids=%s reason=kb_not_in_pipeline",
                ctx.query_id,
                ",".join(configs),
            )
            return
        sender_id, sender_name = pm.sender_of(query_vars)
        try:
            await self._inject(ctx, configs, attached, query_vars, bot_uuid, started)
        except Exception:  # noqa: BLE001 - memory must never break a turn
            log.exception(
                "memvault=injection_failed query_id=%s session_name=%s kb_id=%s sender_id=%s",
                ctx.query_id,
                session_name,
                attached[0],
                sender_id,
            )
            await self._set_context(ctx, ltm_context(sender_id, sender_name))

    async def _inject(
        self,
        ctx: context.EventContext,
        configs: dict[str, Any],
        attached: list[str],
        query_vars: dict[str, Any],
        bot_uuid: str | None,
        started: float,
    ) -> None:
        sender_id, sender_name = pm.sender_of(query_vars)
        memory = getattr(self.plugin, "memory", None)
        # Suppressing naive RAG (a host call) runs while the file and index work does.
        suppress = asyncio.ensure_future(self._suppress_naive_rag(ctx, configs, query_vars))
        try:
            result = await self._prepare(ctx, memory, attached, query_vars, bot_uuid)
        finally:
            await suppress
        if result is None:
            await self._set_context(ctx, ltm_context(sender_id, sender_name))
            return
        turn, prepared = result
        injection = prepared.injection
        shown = injection.episodes
        await self._set_context(
            ctx,
            ltm_context(
                sender_id,
                sender_name,
                prepared.session_profile,
                prepared.speaker_profile,
                shown.displays,
            ),
        )
        if injection.profile:
            ctx.event.default_prompt.append(Message(role="system", content=injection.profile))
        if shown.text:
            ctx.event.prompt.append(Message(role="system", content=shown.text))
        log.info(
            "memvault=injection_ready query_id=%s kb_id=%s scope_key=%s user_key=%s "
            "sender_id=%s recall=%s block_count=%d episodes=%d recalled=%d left_out=%d "
            "profile_chars=%d episode_chars=%d injection_chars=%d ms=%.1f",
            ctx.query_id,
            turn.kb_id,
            turn.scope.session_key,
            turn.scope.user_key,
            sender_id,
            "skipped_command" if turn.is_command else ("done" if turn.text else "no_text"),
            prepared.blocks,
            len(shown.shown),
            prepared.recalled,
            shown.left_out,
            len(injection.profile),
            len(shown.text),
            injection.chars,
            (time.perf_counter() - started) * 1000,
        )

    async def _prepare(
        self,
        ctx: context.EventContext,
        memory: Any,
        attached: list[str],
        query_vars: dict[str, Any],
        bot_uuid: str | None,
    ) -> tuple[TurnInput, Turn] | None:
        """None when memory is unavailable (logged); the turn then goes on without it."""
        try:
            if memory is None:
                raise RuntimeError("memory is unavailable: the plugin did not initialise")
            vault, engine = memory.require()
        except RuntimeError as exc:
            log.warning(
                "memvault=injection_skipped query_id=%s kb_id=%s reason=memory_unavailable "
                "error=%r",
                ctx.query_id,
                attached[0],
                str(exc),
            )
            return None
        sender_id, sender_name = pm.sender_of(query_vars)
        text = str(query_vars.get("user_message_text", "") or "")
        is_command = text.lstrip().startswith(COMMAND_PREFIXES)
        turn = TurnInput(
            query_id=ctx.query_id,
            session_name=ctx.event.session_name,
            kb_id=attached[0],
            libraries=tuple(ks.library_scope(kb_id) for kb_id in attached),
            scope=memory.scope(ctx.event.session_name, bot_uuid),
            sender_id=sender_id,
            sender_name=sender_name,
            text="" if is_command else text.strip(),
            is_command=is_command,
            naive_rag_var=KB_UUIDS_VAR in query_vars,
        )
        return turn, await memory.run(prepare, vault, engine, turn, memory.settings)

    @staticmethod
    async def _suppress_naive_rag(
        ctx: context.EventContext, configs: dict[str, Any], query_vars: dict[str, Any]
    ) -> None:
        """Take MemVault's KBs out of `_knowledge_base_uuids` (the injector recalls them)."""
        if KB_UUIDS_VAR not in query_vars:
            log.warning(
                "memvault=naive_rag_suppression_unavailable query_id=%s "
                "reason=missing_kb_uuid_query_var",
                ctx.query_id,
            )
            return
        uuids = query_vars[KB_UUIDS_VAR]
        if not isinstance(uuids, list):
            log.warning(
                "memvault=naive_rag_suppression_skipped query_id=%s "
                "reason=invalid_kb_uuid_query_var",
                ctx.query_id,
            )
            return
        kept = [u for u in uuids if u not in configs]
        if len(kept) == len(uuids):
            return
        try:
            ours = [u for u in uuids if u in configs]
            await ctx.set_query_var(pm.OPTED_IN_VAR, ours)
            await ctx.set_query_var(KB_UUIDS_VAR, kept)
        except Exception:  # noqa: BLE001 - runs as a task next to the turn's work
            log.exception("memvault=naive_rag_suppression_failed query_id=%s", ctx.query_id)

    @staticmethod
    async def _set_context(ctx: context.EventContext, value: dict[str, Any]) -> None:
        try:
            await ctx.set_query_var(CONTEXT_VAR, value)
        except Exception:  # noqa: BLE001
            log.exception("memvault=ltm_context_failed query_id=%s", ctx.query_id)
