"""One injection turn without the host: what the injector reads (profiles, one recall in
the chat's scope and its attached libraries), what it puts into the prompt (where:
prompt_route) and the snapshot it leaves for `!memory` and the Memory Console. Pure of
LangBot types, so it runs in a worker thread.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from indexer.engine import Engine
from indexer.gate.rules import decide
from indexer.retrieval.ranking import RankWeights
from indexer.retrieval.search import SearchResult
from indexer.retrieval.search_query import SearchQuery
from indexer.retrieval.verdict import gate_words, joined, verdict_parts
from vault.format.model import Profile
from vault.format.redact_forms import redacted_name
from vault.layout.keys import ScopeId
from vault.persons import Person, identity_of
from vault.redaction.redact import redact
from vault.writes.operations import Vault
from vault.writes.snapshots import write_snapshot_later

from . import events_block, prompt_route, prompting
from . import knowledge_store as ks
from .memory_service import PluginSettings, relevant

log = logging.getLogger(__name__)


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


@dataclass(frozen=True)
class Verdict:
    """What decided this turn's recall, in indexer.retrieval.verdict's words (every surface shows
    these): the message gate ("gate: skipped: greeting", "gate: off") and the floor that
    applied ("floor 0.44 for a single message"). "" = no recall ran (a command, no text)."""

    gate: str = ""
    floor: str = ""

    def line(self) -> str:
        """indexer.retrieval.verdict.verdict_words' joining of the two."""
        return joined(self.gate, self.floor)


def verdict_of(found: Sequence[SearchResult], text: str, gate: bool) -> Verdict:
    """The gate and floor as the search's explain records them. A search that found nothing
    judged nothing: the gate's decision is then the one it takes on a chat with no
    candidates (no names, no known terms), so a snapshot still says why."""
    parts = verdict_parts([r.explain for r in found])
    if parts is not None:
        return Verdict(_stored(parts[0]), parts[1])
    if not gate:
        return Verdict(gate_words(None))
    return Verdict(_stored(gate_words(decide(text, (), ()).explain())))


def _stored(words: str) -> str:
    # The reason can quote the message ("passed: names Alice"): the snapshot and the log
    # are storage, so it is redacted like everything else they hold.
    return redact(words).text


@dataclass(frozen=True)
class Turn:
    session_profile: Profile | None
    speaker_profile: Profile | None
    injection: prompting.Injection
    blocks: int
    recalled_ids: tuple[str, ...]  # passed the floor, best first; the block holds those
    # that fit the budget (placed_ids), the rest is left out
    critical_ids: tuple[str, ...] = ()  # the chat's critical memories, placed first
    # The speaker's open key events (a block of its own after the memories; events_block).
    events: events_block.EventsBlock = events_block.EventsBlock("")
    verdict: Verdict = Verdict()
    # The speaker's linked person (setting linked_people; vault.persons), None when off or
    # unlinked: its profile block, its senders' key events and speaker-first recall.
    person: Person | None = None

    @property
    def recalled(self) -> int:
        return len(self.recalled_ids)

    @property
    def placed_ids(self) -> tuple[str, ...]:
        return tuple(r.id for r in self.injection.episodes.shown)


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
    vault: Vault,
    engine: Engine,
    turn: TurnInput,
    settings: PluginSettings,
    now: int,
    linked: Sequence[str] = (),
) -> list[prompting.Recalled]:
    return recall_judged(vault, engine, turn, settings, now, linked)[0]


def recall_judged(
    vault: Vault,
    engine: Engine,
    turn: TurnInput,
    settings: PluginSettings,
    now: int,
    linked: Sequence[str] = (),
) -> tuple[list[prompting.Recalled], Verdict]:
    """What automatic recall brings for the turn's message, and the verdict that decided it."""
    # The chat's memories and its attached libraries' in ONE search: one candidate pool,
    # scored once, so a library record competes on the same scale as the chat's own.
    found = engine.search(
        SearchQuery(
            turn.text,
            turn.scope,
            top_k=settings.top_k,
            speaker_id=turn.sender_id,
            # The same person's other sender ids rank as the speaker (ranking only: the
            # scope above is the chat's, whoever is linked).
            linked_speakers=tuple(linked),
            weights=RankWeights(half_life_days=settings.half_life_days),
            now=now,
            libraries=ks.present_libraries(vault, turn.libraries),
            floor=settings.relevance_floor,
            # The message gate (setting recall_gate): "thanks!" or "what's 17 times 23?" needs
            # no memory; with it on, no result of a skipped message passes.
            gate=settings.gate,
        ),
    )
    verdict = verdict_of(found, turn.text, settings.gate)
    # Only what reaches the floor goes in: "hi" or "Tokyo flight?" in a chat that holds no
    # such memory gets no memory block at all (the profile block still goes in).
    passed = relevant(found)
    if len(passed) < len(found):
        log.info(
            "memvault=recall_floor scope=%s found=%d passed=%d floor=%.2f verdict=%r",
            turn.scope.session_key,
            len(found),
            len(passed),
            settings.relevance_floor,
            verdict.line(),
        )
    return [prompting.recalled_from(r) for r in passed[: settings.top_k]], verdict


def critical_records(engine: Engine, turn: TurnInput, now: int) -> list[prompting.Recalled]:
    """The chat's active, unexpired critical memories (Engine.critical: its own scope only)."""
    return [prompting.recalled_from(r) for r in engine.critical(turn.scope, now)]


def prepare(vault: Vault, engine: Engine, turn: TurnInput, settings: PluginSettings) -> Turn:
    """Everything that touches files or indexes, in one worker-thread hop."""
    now_dt = datetime.now(UTC).replace(microsecond=0)
    now = int(now_dt.timestamp())
    session_profile = _profile(vault, turn.scope, None)
    speaker_profile = _profile(vault, turn.scope, turn.sender_id) if turn.sender_id else None
    who = identity_of(vault.layout, turn.scope.bot, turn.sender_id, settings.linked_people)
    linked = who.senders[1:]
    recalled, verdict = (
        recall_judged(vault, engine, turn, settings, now, linked) if turn.text else ([], Verdict())
    )
    # `priority: critical` memories go first into every turn whatever the message (budget
    # permitting: fit drops from the end), then the recalled ones not already among them.
    critical = [] if turn.is_command else critical_records(engine, turn, now)
    shown_ids = {r.id for r in critical}
    records = [*critical, *(r for r in recalled if r.id not in shown_ids)]
    # The blocks go to the model: redacted here, once (the host's sender name, a profile a
    # person wrote by hand). Memories come from the index, which holds the redacted text.
    blocks = [
        redact(block).text
        for block in prompting.profile_blocks(
            session_profile,
            speaker_profile,
            turn.sender_id,
            redacted_name(turn.sender_name) or "",
            now_dt,
            who.person.profile if who.person else None,
        )
    ]
    current = who.senders or turn.sender_id
    injection = prompting.fit(blocks, records, now, current, settings.injection_chars)
    recalled_ids = tuple(r.id for r in recalled)
    result = Turn(
        session_profile,
        speaker_profile,
        injection,
        len(blocks),
        recalled_ids,
        tuple(r.id for r in critical),
        events=_events(vault, turn, settings, who.senders),
        verdict=verdict,
        person=who.person,
    )
    if not turn.is_command:
        # Queued, not written: the turn does not wait for the file (vault.writes.snapshots orders
        # it before the retrieve of this turn that records what it served).
        _save_snapshot(vault, turn, settings, result, now_dt)
    return result


def _events(
    vault: Vault, turn: TurnInput, settings: PluginSettings, senders: Sequence[str]
) -> events_block.EventsBlock:
    """The speaker's (their linked person's) open key events of this bot (any chat), not
    for a command."""
    if turn.is_command:
        return events_block.EventsBlock("")
    return events_block.for_turn(
        vault.layout,
        turn.scope.bot,
        turn.sender_id,
        settings.event_types,
        settings.events_injected,
        senders,
    )


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
        "placed": prompt_route.plan(
            result.injection.profile, shown.text, result.events.text
        ).record(),
        "episode_ids": list(result.placed_ids),
        "recalled_ids": list(result.recalled_ids),
        # Why recall brought what it did, in indexer.retrieval.verdict's words (as `!memory search`,
        # the console and `memvault search --explain` say it): "gate: skipped: greeting",
        # "floor 0.44 for a single message" ("" when no recall ran).
        "gate": result.verdict.gate,
        "floor": result.verdict.floor,
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
