"""One injection turn without the host: what the injector reads (profiles, one recall in
the chat's scope and its attached libraries) and what it puts into the prompt (where:
route). Pure of LangBot types, so it runs in a worker thread; it writes nothing. The
plugin's injector (plugin injection_snapshot: `build`, then the snapshot it leaves for
`!memory` and the Memory Console) and the console's recall test (console endpoints_recall)
both call `build`, so the console shows exactly what a turn places.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from indexer.engine import Engine
from indexer.recall import find
from indexer.retrieval.outcome import BUDGET, NO_TEXT, Found, WhyEmpty
from indexer.retrieval.ranking import RankWeights
from indexer.retrieval.search_query import SearchQuery
from indexer.retrieval.verdict import gate_words, joined, verdict_parts
from vault.format.model import Profile
from vault.format.redact_forms import redacted_name
from vault.layout.keys import ScopeId
from vault.persons import Person, identity_of
from vault.redaction.redact import redact
from vault.writes.operations import Vault

from . import events_block, prompting
from .libraries import library_scope, present_libraries
from .settings import TurnSettings

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
    kb_ids: tuple[str, ...] = ()  # the MemVault KBs attached to the pipeline (libraries' ids)


COMMAND_PREFIXES = ("!", "！")  # LangBot's default command prefixes


def message_input(
    query_id: int,
    session_name: str,
    scope: ScopeId,
    kb_ids: Sequence[str],
    sender_id: str,
    sender_name: str,
    text: str,
) -> TurnInput:
    """The turn of one message: a command (`!memory ...`) gets the profile but no recall;
    the attached KBs' libraries join the search (libraries.library_scope)."""
    is_command = text.lstrip().startswith(COMMAND_PREFIXES)
    return TurnInput(
        query_id=query_id,
        session_name=session_name,
        kb_id=kb_ids[0] if kb_ids else "",
        libraries=tuple(library_scope(kb_id) for kb_id in kb_ids),
        scope=scope,
        sender_id=sender_id,
        sender_name=sender_name,
        text="" if is_command else text.strip(),
        is_command=is_command,
        kb_ids=tuple(kb_ids),
    )


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


def verdict_of(found: Found, gate: bool) -> Verdict:
    """The gate and floor as the search recorded them: the floor from its results' explain,
    the gate from its own decision (made even when no candidate came back)."""
    parts = verdict_parts([r.explain for r in found.results])
    if parts is not None:
        return Verdict(_stored(parts[0]), parts[1])
    if not gate or found.gate is None:
        return Verdict(gate_words(None) if not gate else "")
    return Verdict(_stored(gate_words(found.gate.explain())))


def _stored(words: str) -> str:
    # The reason can quote the message ("passed: names Alice"): the snapshot and the log
    # are storage, so it is redacted like everything else they hold.
    return redact(words).text


def _redacted(why: WhyEmpty) -> WhyEmpty:
    return replace(why, detail=_stored(why.detail)) if why.detail else why


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
    # Why no memory was recalled (indexer.retrieval.outcome; None: something was, or no
    # recall ran: a command), and why the memory block is empty when it is.
    why: WhyEmpty | None = None
    budget: int = 0  # the injection budget it was fitted to (characters)
    # The clock the turn was built at (the snapshot records it).
    at: datetime = field(default_factory=lambda: datetime.now(UTC).replace(microsecond=0))

    @property
    def recalled(self) -> int:
        return len(self.recalled_ids)

    @property
    def placed_ids(self) -> tuple[str, ...]:
        return tuple(r.id for r in self.injection.episodes.shown)

    @property
    def nothing_injected(self) -> WhyEmpty | None:
        """Why the prompt got no memory block (None: it got one): recall's reason, or the
        budget when what was recalled did not fit."""
        if self.injection.episodes.shown:
            return None
        if self.why is not None:
            return self.why
        if self.recalled_ids or self.critical_ids:
            count = len({*self.recalled_ids, *self.critical_ids})
            return WhyEmpty(BUDGET, count=count, budget=self.budget)
        return None


def empty(why: WhyEmpty, budget: int) -> Turn:
    """A turn that placed nothing, and why (no index to search: the injector then adds no
    block at all, as before; the console's recall test shows the same)."""
    episodes = prompting.EpisodeBlock("", (), (), 0)
    return Turn(None, None, prompting.Injection("", episodes), 0, (), why=why, budget=budget)


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
    settings: TurnSettings,
    now: int,
    linked: Sequence[str] = (),
) -> list[prompting.Recalled]:
    return recall_judged(vault, engine, turn, settings, now, linked)[0]


def recall_judged(
    vault: Vault,
    engine: Engine,
    turn: TurnInput,
    settings: TurnSettings,
    now: int,
    linked: Sequence[str] = (),
) -> tuple[list[prompting.Recalled], Verdict, WhyEmpty | None]:
    """What automatic recall brings for the turn's message, the verdict that decided it and,
    when it brings nothing, why (the search's own reason: indexer.recall)."""
    # The chat's memories and its attached libraries' in ONE search: one candidate pool,
    # scored once, so a library record competes on the same scale as the chat's own.
    outcome = find(
        engine,
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
            libraries=present_libraries(vault, turn.libraries),
            floor=settings.relevance_floor,
            # The message gate (setting recall_gate): "thanks!" or "what's 17 times 23?" needs
            # no memory; with it on, no result of a skipped message passes.
            gate=settings.gate,
        ),
    )
    verdict = verdict_of(outcome, settings.gate)
    # Only what reaches the floor goes in: "hi" or "Tokyo flight?" in a chat that holds no
    # such memory gets no memory block at all (the profile block still goes in).
    passed = outcome.passed
    if len(passed) < len(outcome.results):
        log.info(
            "memvault=recall_floor scope=%s found=%d passed=%d floor=%.2f verdict=%r why=%r",
            turn.scope.session_key,
            len(outcome.results),
            len(passed),
            settings.relevance_floor,
            verdict.line(),
            outcome.why.words() if outcome.why else "",
        )
    why = None if outcome.why is None else _redacted(outcome.why)
    return [prompting.recalled_from(r) for r in passed[: settings.top_k]], verdict, why


def critical_records(engine: Engine, turn: TurnInput, now: int) -> list[prompting.Recalled]:
    """The chat's active, unexpired critical memories (Engine.critical: its own scope only)."""
    return [prompting.recalled_from(r) for r in engine.critical(turn.scope, now)]


def build(vault: Vault, engine: Engine, turn: TurnInput, settings: TurnSettings) -> Turn:
    """Everything that touches files or indexes, in one worker-thread hop; reads only."""
    now_dt = datetime.now(UTC).replace(microsecond=0)
    now = int(now_dt.timestamp())
    session_profile = _profile(vault, turn.scope, None)
    speaker_profile = _profile(vault, turn.scope, turn.sender_id) if turn.sender_id else None
    who = identity_of(vault.layout, turn.scope.bot, turn.sender_id, settings.linked_people)
    linked = who.senders[1:]
    if turn.text:
        recalled, verdict, why = recall_judged(vault, engine, turn, settings, now, linked)
    else:  # a command gets no recall (and no reason); a message without text says so
        recalled, verdict, why = [], Verdict(), None if turn.is_command else WhyEmpty(NO_TEXT)
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
    return Turn(
        session_profile,
        speaker_profile,
        injection,
        len(blocks),
        recalled_ids,
        tuple(r.id for r in critical),
        events=_events(vault, turn, settings, who.senders),
        verdict=verdict,
        person=who.person,
        why=why,
        budget=settings.injection_chars,
        at=now_dt,
    )


def _events(
    vault: Vault, turn: TurnInput, settings: TurnSettings, senders: Sequence[str]
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
