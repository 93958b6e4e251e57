"""PromptPreProcessing: put the chat's memory into the prompt, like LongTermMemory does.

Per turn, in a pipeline that opted in (a MemVault knowledge base is attached to it), two
system messages are appended to `default_prompt`, where LangBot 4.11's runner keeps them
(`event.prompt` is dropped by the host: see prompt_route, the one place that decides this):
- the profile block: the session profile, the current speaker's profile and identity;
- the memory block: the top-k episodes recalled for `user_message_text` (one hybrid search
  in the chat's scope and the attached KBs' libraries, the current speaker's episodes ranked
  up, only what reaches the relevance floor), fenced as data and cut to the character budget
  (see prompting.py). Nothing relevant: no memory block.
- the key-events block (only when the plugin setting event_types lists types): the current
  speaker's open key events of this bot, from any chat, fenced as data (events_block.py).
The injector owns recall: it records what it recalled and placed in the turn ledger
(turn_ledger.py), so the runner's own `retrieve` of a MemVault KB in the same turn serves
none of it again. `_knowledge_base_uuids` is left alone (pruning it does not stop 4.11's
runner, and the tools read the pipeline's KBs from it).
Also: the query var `_ltm_context` is set with upstream's schema (speaker, session_profile,
speaker_profile or None, episodes: [{"content": <decorated display line>}]), and a snapshot
of what was placed where is written to `<vault>/.memvault/snapshots/` for `!memory` and the
console (retrieve adds what it served in the same turn).
Messages starting with `!` (commands) get the profile but no recall, no ledger entry and no
new snapshot, so `!memory` shows the last real turn. Any failure is logged with its context,
leaves no ledger entry (retrieve then serves as without an injector) and the turn goes on
without memory.

Cost on the hot path: two host calls in parallel (query vars, bot; the two KB lists are kept
in process between turns: pipeline_memory.turn_facts), one worker-thread hop that reads at
most two profile files, runs one search (the chat and its attached libraries together) and
queues the snapshot (written after the turn is handed back, before any later snapshot
write of the plugin: vault.writes.snapshots). Nothing scans the scope's episode files.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from langbot_plugin.api.definition.components.common.event_listener import EventListener
from langbot_plugin.api.entities import context, events
from memvault_plugin import pipeline_memory as pm
from memvault_plugin import prompt_route
from memvault_plugin import turn_ledger as tl
from memvault_plugin.injection_snapshot import prepare, save_unavailable
from memvault_plugin.memory_service import MemoryUnavailableError

from indexer.injection.turn import Turn, TurnInput, ltm_context, message_input

log = logging.getLogger(__name__)

CONTEXT_VAR = "_ltm_context"


class MemoryInjector(EventListener):
    def __init__(self) -> None:
        super().__init__()

        @self.handler(events.PromptPreProcessing)
        async def on_prompt_preprocessing(event_ctx: context.EventContext) -> None:
            await self.inject(event_ctx)

        # Registered here: LangBot dispatches only ONE EventListener component per plugin.
        # It queues candidate extraction and returns (turn_candidates): LangBot sends the
        # reply only after this handler returned.
        @self.handler(events.NormalMessageResponded)
        async def on_normal_message_responded(event_ctx: context.EventContext) -> None:
            await self.plugin.candidates.on_responded(event_ctx)

    async def inject(self, ctx: context.EventContext) -> None:
        started = time.perf_counter()
        session_name = ctx.event.session_name
        ledger: tl.TurnLedger = self.plugin.turns
        log.info(
            "memvault=injection_started query_id=%s session_name=%s", ctx.query_id, session_name
        )
        try:
            await self.plugin.settled()  # the settings LangBot holds now (live_settings)
            facts = await pm.turn_facts(self.plugin, ctx)  # the KB lists mostly kept in process
            configs, pipeline_kbs = facts.configs, facts.pipeline_kbs
            query_vars, bot_uuid = facts.query_vars, facts.bot_uuid
        except Exception:  # noqa: BLE001 - the host failed us; the turn goes on
            log.exception(
                "memvault=injection_failed query_id=%s session_name=%s stage=host_calls",
                ctx.query_id,
                session_name,
            )
            # Bot and sender are unknown: void the chat's entries, so the runner's retrieve
            # of this turn is not held back by what an earlier turn injected.
            ledger.forget_session(session_name)
            return
        sender_id, sender_name = pm.sender_of(query_vars)
        key = self._ledger_key(session_name, bot_uuid, sender_id)
        # A new turn: whatever the last one recorded is void until this one succeeds.
        if key is None:
            ledger.forget_session(session_name)
        else:
            ledger.clear(key)
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
        try:
            await self._inject(ctx, attached, query_vars, bot_uuid, started, key)
        except Exception:  # noqa: BLE001 - memory must never break a turn
            log.exception(
                "memvault=injection_failed query_id=%s session_name=%s kb_id=%s sender_id=%s",
                ctx.query_id,
                session_name,
                attached[0],
                sender_id,
            )
            await self._set_context(ctx, ltm_context(sender_id, sender_name))

    def _ledger_key(
        self, session_name: str, bot_uuid: str | None, sender_id: str
    ) -> tl.LedgerKey | None:
        """The same key retrieve builds from its retrieval_settings; None without memory."""
        memory = getattr(self.plugin, "memory", None)
        try:
            return tl.ledger_key(memory.scope(session_name, bot_uuid), sender_id)
        except (AttributeError, ValueError):
            return None

    async def _inject(
        self,
        ctx: context.EventContext,
        attached: list[str],
        query_vars: dict[str, Any],
        bot_uuid: str | None,
        started: float,
        key: tl.LedgerKey | None,
    ) -> None:
        sender_id, sender_name = pm.sender_of(query_vars)
        memory = getattr(self.plugin, "memory", None)
        result = await self._prepare(ctx, memory, attached, query_vars, bot_uuid)
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
        prompt_route.place(ctx.event, injection.profile, shown.text, prepared.events.text)
        if key is not None and not turn.is_command:
            self.plugin.turns.record(key, self._ledger_entry(turn, prepared, attached))
        log.info(
            "memvault=injection_ready query_id=%s kb_id=%s scope_key=%s user_key=%s "
            "sender_id=%s recall=%s block_count=%d episodes=%d recalled=%d left_out=%d "
            "profile_chars=%d episode_chars=%d injection_chars=%d events=%d ms=%.1f",
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
            len(prepared.events.ids),
            (time.perf_counter() - started) * 1000,
        )

    @staticmethod
    def _ledger_entry(turn: TurnInput, prepared: Turn, attached: list[str]) -> tl.InjectorTurn:
        return tl.InjectorTurn(
            query_id=turn.query_id,
            session_name=turn.session_name,
            query=tl.normalise(turn.text),
            kb_ids=frozenset(attached),
            recalled_ids=prepared.recalled_ids,
            placed_ids=prepared.placed_ids,
        )

    async def _prepare(
        self,
        ctx: context.EventContext,
        memory: Any,
        attached: list[str],
        query_vars: dict[str, Any],
        bot_uuid: str | None,
    ) -> tuple[TurnInput, Turn] | None:
        """None when memory is unavailable (logged, and the snapshot says why nothing was
        recalled when the vault is there but its index is not); the turn goes on without it."""
        sender_id, sender_name = pm.sender_of(query_vars)
        text = str(query_vars.get("user_message_text", "") or "")

        def turn_in(memory: Any) -> TurnInput:
            scope = memory.scope(ctx.event.session_name, bot_uuid)
            session = ctx.event.session_name
            return message_input(
                ctx.query_id, session, scope, attached, sender_id, sender_name, text
            )

        try:
            if memory is None:
                raise MemoryUnavailableError("memory is unavailable: the plugin did not initialise")
            vault, engine = memory.require()
        except MemoryUnavailableError as exc:
            log.warning(
                "memvault=injection_skipped query_id=%s kb_id=%s reason=memory_unavailable "
                "error=%r",
                ctx.query_id,
                attached[0],
                str(exc),
            )
            # The vault opened but its index did not: the snapshot says why nothing came.
            if memory is not None and memory.vault is not None:
                turn = turn_in(memory)
                if not turn.is_command:
                    settings = memory.settings
                    await memory.run(save_unavailable, memory.vault, turn, settings, str(exc))
            return None
        turn = turn_in(memory)
        return turn, await memory.run(prepare, vault, engine, turn, memory.settings)

    @staticmethod
    async def _set_context(ctx: context.EventContext, value: dict[str, Any]) -> None:
        try:
            await ctx.set_query_var(CONTEXT_VAR, value)
        except Exception:  # noqa: BLE001
            log.exception("memvault=ltm_context_failed query_id=%s", ctx.query_id)
