"""One real injection turn: the blocks (indexer.injection.turn.build, the same function the
Memory Console's recall test calls) and the snapshot the turn leaves for `!memory` and the
console's Injection tab, `<vault>/.memvault/snapshots/` (vault.writes.snapshots).
"""

from __future__ import annotations

import logging
from concurrent.futures import Future
from datetime import datetime
from pathlib import Path

from indexer.engine import Engine
from indexer.injection import prompting
from indexer.injection.route import plan
from indexer.injection.turn import Turn, TurnInput, build, empty, ltm_context
from indexer.retrieval.outcome import failed, unavailable
from vault.layout.keys import ScopeId
from vault.writes.operations import Vault
from vault.writes.snapshots import write_snapshot_later

from .memory_service import PluginSettings

log = logging.getLogger(__name__)


def prepare(vault: Vault, engine: Engine, turn: TurnInput, settings: PluginSettings) -> Turn:
    """The turn's blocks, and (not for a command) its snapshot, queued. A turn whose recall
    raised leaves a snapshot saying so (the injector logs it and goes on without memory)."""
    try:
        result = build(vault, engine, turn, settings.turn())
    except Exception as exc:
        if not turn.is_command:
            failed_turn = empty(failed(exc), settings.injection_chars)
            _save_snapshot(vault, turn, settings, failed_turn, failed_turn.at)
        raise
    if not turn.is_command:
        # Queued, not written: the turn does not wait for the file (vault.writes.snapshots orders
        # it before the retrieve of this turn that records what it served).
        _save_snapshot(vault, turn, settings, result, result.at)
    return result


def save_unavailable(vault: Vault, turn: TurnInput, settings: PluginSettings, message: str) -> None:
    """The snapshot of a turn that had no index to search (the vault opened, the index did
    not): nothing was injected, and why."""
    result = empty(unavailable(message), settings.injection_chars)
    _save_snapshot(vault, turn, settings, result, result.at)


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
        "session_profile": context_now["session_profile"],
        "speaker_profile": context_now["speaker_profile"],
        "episodes": context_now["episodes"],
        "episode_count": len(shown.shown),
        "block_count": result.blocks,
        "injected": result.injection.chars > 0,
        "injection_chars": result.injection.chars,
        # MemVault's additions. Where each block went (prompt_route), the memories in the
        # memory block, and what the runner's retrieve served in this turn: filled in by
        # retrieve for this query_id (kb_retrieve, vault.writes.snapshots.update_snapshot), null
        # until it runs.
        "placed": plan(result.injection.profile, shown.text, result.events.text).record(),
        "episode_ids": list(result.placed_ids),
        "recalled_ids": list(result.recalled_ids),
        # Why recall brought what it did, in indexer.retrieval.verdict's words (as `!memory search`,
        # the console and `memvault search --explain` say it): "gate: skipped: greeting",
        # "floor 0.44 for a single message" ("" when no recall ran).
        "gate": result.verdict.gate,
        "floor": result.verdict.floor,
        # Why recall brought nothing (indexer.retrieval.outcome, with its numbers; null when
        # it brought something or no recall ran) and why the prompt got no memory block
        # (that reason, or the budget): `!memory` and the console say "nothing injected: ...".
        "why": result.why.as_json() if result.why else None,
        "nothing_injected": result.nothing_injected.as_json() if result.nothing_injected else None,
        # Every MemVault KB attached to the pipeline and the settings the turn ran with:
        # the console's recall test searches the same libraries with the same settings.
        "kb_ids": list(turn.kb_ids),
        "turn_settings": settings.turn().as_json(),
        "critical_ids": list(result.critical_ids),
        "retrieve": None,
        "recalled_count": result.recalled,
        "left_out": shown.left_out,
        "budget_chars": settings.injection_chars,
        "profile_chars": len(result.injection.profile),
        "episode_chars": len(shown.text),
        # The exact texts put into default_prompt, so the console can show what the model saw.
        "profile_text": result.injection.profile,
        "episode_text": shown.text,
        # The speaker's open key events placed after the memories (events_block).
        "event_ids": list(result.events.ids),
        "events_chars": len(result.events.text),
        "events_text": result.events.text,
        # The linked person whose profile and events this turn used (linked_people), or null.
        "person": result.person.id if result.person else None,
    }
    try:
        job = write_snapshot_later(vault.root, turn.scope, snapshot)
    except (OSError, ValueError) as exc:
        _snapshot_failed(turn.scope, exc)
        return

    def done(job: Future[Path]) -> None:
        exc = job.exception()
        if exc is not None:
            _snapshot_failed(turn.scope, exc)

    job.add_done_callback(done)


def _snapshot_failed(scope: ScopeId, exc: BaseException) -> None:
    log.warning("memvault=snapshot_failed scope=%s error=%r", scope.session_key, str(exc))
