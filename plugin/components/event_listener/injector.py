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
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import knowledge_store as ks
import pipeline_memory as pm
import prompting
from langbot_plugin.api.definition.components.common.event_listener import EventListener
from langbot_plugin.api.entities import context, events
from langbot_plugin.api.entities.builtin.provider.message import Message
from memory_service import PluginSettings

from indexer.engine import Engine
from indexer.ranking import RankWeights
from vault.keys import ScopeId
from vault.model import Profile
from vault.operations import Vault
from vault.snapshots import write_snapshot

log = logging.getLogger(__name__)

COMMAND_PREFIXES = ("!", "！")  # LangBot's default command prefixes
KB_UUIDS_VAR = "_knowledge_base_uuids"
CONTEXT_VAR = "_ltm_context"


def ltm_context(
    sender_id: str,
    sender_name: str,
    session_profile: Profile | None = None,
    speaker_profile: Profile | None = None,
    displays: Sequence[str] = (),
) -> dict[str, Any]:
    """Upstream's `_ltm_context`: speaker_profile is None exactly when there is no sender."""
    return {
        "speaker": {"id": sender_id, "name": sender_name},
        "session_profile": prompting.profile_summary(session_profile),
        "speaker_profile": prompting.profile_summary(speaker_profile) if sender_id else None,
        "episodes": [{"content": line} for line in displays],
    }


@dataclass(frozen=True)
class TurnInput:
    query_id: int
    session_name: str
    kb_id: str
    libraries: tuple[ScopeId, ...]  # attached KBs' own reference-memory scopes
    scope: ScopeId
    sender_id: str
    sender_name: str
    text: str  # "" = no recall
    is_command: bool
    naive_rag_var: bool


@dataclass(frozen=True)
class Turn:
    session_profile: Profile | None
    speaker_profile: Profile | None
    injection: prompting.Injection
    blocks: int
    recalled: int


def _profile(vault: Vault, scope: ScopeId, speaker: str | None) -> Profile | None:
    """A profile that cannot be read (a broken hand edit) is left out, not fatal."""
    try:
        return vault.read_profile(scope, speaker)
    except (ValueError, OSError) as exc:
        log.warning(
            "memvault=profile_unreadable scope=%s speaker=%s error=%r",
            scope.session_key,
            speaker or "-",
            str(exc),
        )
        return None


def recall(
    vault: Vault, engine: Engine, turn: TurnInput, settings: PluginSettings, now: int
) -> list[prompting.Recalled]:
    weights = RankWeights(half_life_days=settings.half_life_days)
    found = engine.search(
        turn.text,
        turn.scope,
        top_k=settings.top_k,
        speaker_id=turn.sender_id,
        weights=weights,
        now=now,
    )
    for library in turn.libraries:
        if vault.layout.episodes_dir(library).is_dir():  # a stat, not a scan
            found += engine.search(
                turn.text, library, top_k=settings.top_k, weights=weights, now=now
            )
    found.sort(key=lambda r: -r.score)
    return [prompting.recalled_from(r) for r in found[: settings.top_k]]


def prepare(vault: Vault, engine: Engine, turn: TurnInput, settings: PluginSettings) -> Turn:
    """Everything that touches files or indexes, in one worker-thread hop."""
    now_dt = datetime.now(UTC).replace(microsecond=0)
    now = int(now_dt.timestamp())
    session_profile = _profile(vault, turn.scope, None)
    speaker_profile = _profile(vault, turn.scope, turn.sender_id) if turn.sender_id else None
    records = recall(vault, engine, turn, settings, now) if turn.text else []
    blocks = prompting.profile_blocks(
        session_profile, speaker_profile, turn.sender_id, turn.sender_name, now_dt
    )
    injection = prompting.fit(blocks, records, now, turn.sender_id, settings.injection_chars)
    result = Turn(session_profile, speaker_profile, injection, len(blocks), len(records))
    if not turn.is_command:
        _save_snapshot(vault, turn, settings, result, now_dt)
    return result


def _save_snapshot(
    vault: Vault, turn: TurnInput, settings: PluginSettings, result: Turn, now: datetime
) -> None:
    shown = result.injection.episodes
    context_now = ltm_context(
        turn.sender_id,
        turn.sender_name,
        result.session_profile,
        result.speaker_profile,
        shown.displays,
    )
    snapshot = {
        # upstream's keys
        "recorded_at": prompting.iso(now),
        "query_id": turn.query_id,
        "session_name": turn.session_name,
        "scope_key": turn.scope.session_key,
        "user_key": turn.scope.user_key,
        "kb_id": turn.kb_id,
        "isolation": turn.scope.isolation,
        "speaker": context_now["speaker"],
        "naive_rag_suppressed": turn.naive_rag_var,
        "session_profile": context_now["session_profile"],
        "speaker_profile": context_now["speaker_profile"],
        "episodes": context_now["episodes"],
        "episode_count": len(shown.shown),
        "block_count": result.blocks,
        "injected": result.injection.chars > 0,
        "injection_chars": result.injection.chars,
        # MemVault's additions
        "episode_ids": [r.id for r in shown.shown],
        "recalled_count": result.recalled,
        "left_out": shown.left_out,
        "budget_chars": settings.injection_chars,
        "profile_chars": len(result.injection.profile),
        "episode_chars": len(shown.text),
        # The exact text put into the prompt, so the console can show what the model saw.
        "profile_text": result.injection.profile,
        "episode_text": shown.text,
    }
    try:
        write_snapshot(vault.root, turn.scope.session_key, snapshot)
    except (OSError, ValueError) as exc:
        log.warning("memvault=snapshot_failed scope=%s error=%r", turn.scope.session_key, str(exc))


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
