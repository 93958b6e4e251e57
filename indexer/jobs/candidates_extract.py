"""Candidate memories from one chat turn: ask a model, keep what is new, write it as files.

`extract` is what the plugin runs after a reply was sent and what `memvault candidates
extract` replays from a transcript. The model sees the turn, the chat's most related
active memories (with ids) and the profile; it proposes up to `max_candidates` L2 episodes
or L1 profile changes, or nothing. What it proposes is checked, redacted (vault.redaction.redact),
and dropped when an active memory or a pending candidate already says it (the rule every
write follows: the same text, or the model's calibrated duplicate line where names, numbers
and negation agree; vault.writes.duplicates, indexer.dedupe). A proposal that
corrects a known memory keeps `supersedes: <id>`, so accepting it supersedes that memory.
The candidates are files of the chat, never indexed as memory and never recalled.

Only what the people said becomes memory (indexer.chatter): a user message no person typed
([Image], a system notice) is never sent to the model; tool output, notices and prompt text
are left out of the turn the model sees, and dropped from its proposals (candidates_prompt).

Any failure of the model (unreachable, timeout, HTTP error, refusal, malformed JSON) logs
one line and raises LLMError before anything is written.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from indexer.backends.calibration import calibrate
from indexer.chatter import CHATTER_VERSION, judge
from indexer.dedupe import EngineDuplicates, episode_text, line_between
from indexer.engine import Engine
from indexer.jobs.candidates_prompt import (
    Proposal,
    Turn,
    build_messages,
    people_context,
    read_proposals,
)
from indexer.jobs.llm import DEFAULT_TIMEOUT, LLM, LLMError
from indexer.retrieval.search_query import SearchQuery
from indexer.same_fact import differs
from vault.candidates import Candidate, Evidence, load_candidates
from vault.candidates import write_candidates as _write
from vault.errors import BadRequestError, NotFoundError
from vault.format.model import Episode, Profile, Speaker
from vault.format.profile_edit import normalise_key, split_slot
from vault.format.redact_forms import redact_data, redacted_name
from vault.layout.keys import ScopeId
from vault.redaction.redact import redact
from vault.writes.duplicates import Probe, folded
from vault.writes.operations import Vault

log = logging.getLogger(__name__)

__all__ = ["LLMError", "Turn", "extract"]

KNOWN_MEMORIES = 5
KNOWN_MAX_CHARS = 400
EVIDENCE_MAX = 300


def extract(
    llm: LLM,
    vault: Vault,
    engine: Engine,
    scope: ScopeId,
    speaker: Speaker | None,
    last_user_message: str,
    reply: str,
    recent_turns: Sequence[Turn] = (),
    max_candidates: int = 3,
    model_name: str = "",
    *,
    at: datetime | None = None,
    timeout: float | None = None,
    dry_run: bool = False,
    log_failure: bool = True,
) -> list[Candidate]:
    """Propose, check and (unless `dry_run`) write this turn's candidates; returns them.

    `engine` must be in sync with the vault (the plugin's watcher, or a reconcile first):
    the duplicate check searches it. `timeout` defaults to the LLM's own (OpenAICompatibleLLM
    has one), else DEFAULT_TIMEOUT. `log_failure` False: the caller logs the LLMError itself
    (the plugin's one line carries the turn's query id), so a failure is still one line."""
    if max_candidates < 1 or not last_user_message.strip():
        return []
    if not (said := judge(last_user_message, message=True)).said:
        log.info(
            "event=candidates_skipped reason=%s part=user_message rules=%s scope=%s",
            said.rule,
            CHATTER_VERSION,
            scope.session_key,
        )
        return []  # nobody said it: no model call, nothing written
    reply, recent_turns = people_context(reply, recent_turns)
    known = _known(vault, engine, scope, last_user_message)
    # The prompt leaves the machine: the turn as the host gave it, a person's hand-written
    # memory or profile are redacted here, once (vault.format.redact_forms), before it is built;
    # the model's quotes are then checked against the redacted turn.
    last_user_message, reply = redact(last_user_message).text, redact(reply).text
    recent_turns = [
        dataclasses.replace(t, content=redact(t.content).text, **redact_data(_who(t)))
        for t in recent_turns
    ]
    messages = build_messages(
        last_user_message=last_user_message,
        reply=reply,
        recent_turns=recent_turns,
        speaker=redact_data({"id": speaker.id, "name": speaker.name or ""}) if speaker else None,
        known=redact_data([{"id": k.id, "text": k.body[:KNOWN_MAX_CHARS]} for k in known]),
        profiles=redact_data(_profiles_json(vault, scope, speaker)),
        max_candidates=max_candidates,
    )
    try:
        limit = timeout if timeout is not None else getattr(llm, "timeout", DEFAULT_TIMEOUT)
        proposals = read_proposals(llm.complete(messages, timeout=limit))
    except LLMError as exc:
        if log_failure:
            log.warning(
                "event=candidates_failed scope=%s model=%s error=%r: nothing was written",
                scope.session_key,
                model_name or "?",
                str(exc),
            )
        raise
    turn = _TurnSaid(
        speaker=speaker,
        when=at or vault.clock(),
        model_name=model_name,
        said=" ".join(
            "\n".join([last_user_message, reply, *(t.content for t in recent_turns)]).split()
        ),
        last_user_message=last_user_message,
    )
    # A few more than asked, so that dropping a duplicate does not leave a slot unused; never
    # all of a runaway answer (each costs an embedding).
    built = [c for p in proposals[: 2 * max_candidates] if (c := _candidate(vault, scope, turn, p))]
    fresh = _new_only(vault, engine, scope, built)[:max_candidates]
    log.info(
        "event=candidates_extracted scope=%s proposed=%d kept=%d dry_run=%s",
        scope.session_key,
        len(proposals),
        len(fresh),
        dry_run,
    )
    return fresh if dry_run else _write(vault, scope, fresh)


def _who(turn: Turn) -> dict[str, str]:
    return {"speaker_id": turn.speaker_id, "speaker_name": turn.speaker_name}


def _known(vault: Vault, engine: Engine, scope: ScopeId, query: str) -> list[Episode]:
    """The chat's active episodes most related to the message (for corrections, ids)."""
    results = engine.search(SearchQuery(query, scope, top_k=KNOWN_MEMORIES))
    ids = list(dict.fromkeys(r.doc.episode_id for r in results))
    by_id = {s.episode.id: s.episode for s in vault.load_episodes(scope)[0]}
    return [by_id[i] for i in ids if i in by_id and by_id[i].status == "active"]


def _profiles_json(vault: Vault, scope: ScopeId, speaker: Speaker | None) -> dict[str, Any]:
    out: dict[str, Any] = {"session": _profile_json(vault.read_profile(scope))}
    if speaker is not None:
        out["speaker"] = _profile_json(vault.read_profile(scope, speaker.id))
    return out


def _profile_json(profile: Profile) -> dict[str, Any]:
    return {
        "name": profile.name,
        "traits": list(profile.traits),
        "preferences": list(profile.preferences),
        "notes": profile.notes,
    }


@dataclass(frozen=True)
class _TurnSaid:
    speaker: Speaker | None
    when: datetime
    model_name: str
    said: str  # every message of the turn, on one line, to check the model's quotes against
    last_user_message: str


def _candidate(vault: Vault, scope: ScopeId, turn: _TurnSaid, p: Proposal) -> Candidate | None:
    # A quote nobody said is the model's invention: the evidence is then what the user said.
    quote = p.evidence if p.evidence and p.evidence in turn.said else ""
    fallback = " ".join(turn.last_user_message.split())[:EVIDENCE_MAX]
    common: dict[str, Any] = {
        "id": "",
        "created_at": turn.when,
        "kind": p.kind,
        "body": p.text,
        "speaker": turn.speaker,
        "evidence": Evidence(quote or fallback, turn.when),
        "proposed_by": turn.model_name or None,
    }
    if p.kind == "episode":
        target = _target(vault, scope, p.supersedes)
        c = Candidate(
            **common, importance=p.importance, tags=p.tags, category=p.category, supersedes=target
        )
    else:
        c = _profile_candidate(vault, scope, turn.speaker, p, common)
    return c  # redacted where it is written (vault.candidates.write_candidates), once


def _target(vault: Vault, scope: ScopeId, wanted: str | None) -> str | None:
    """The memory a correction supersedes: an active episode of this chat, else none."""
    if wanted is None:
        return None
    try:
        stored = vault.find_episode(scope, wanted)
    except (NotFoundError, BadRequestError):  # an invented or ambiguous id: not a target
        # The id is the model's: logged as a name, redacted (logs are storage).
        log.info(
            "event=candidate_target_dropped target=%r reason=not_found",
            redacted_name(wanted[:40]),
        )
        return None
    if stored.episode.status != "active":
        return None
    return stored.episode.id


def _profile_candidate(
    vault: Vault, scope: ScopeId, speaker: Speaker | None, p: Proposal, common: dict[str, Any]
) -> Candidate | None:
    target = p.profile or ("speaker" if speaker is not None else "session")
    if target == "speaker" and speaker is None:
        log.info("event=candidate_dropped reason=speaker_profile_without_speaker")
        return None
    profile = vault.read_profile(scope, speaker.id if target == "speaker" and speaker else None)
    assert p.field is not None and p.value is not None
    key = normalise_key(p.key) if p.key else None
    current = _current(profile, p.field, key, p.value)
    if current == p.value:
        log.info("event=candidate_dropped reason=profile_already_says_it field=%s", p.field)
        return None
    # `previous` is what the profile says now, never the model's memory of it.
    return Candidate(
        **common, profile=target, field=p.field, key=key or None, value=p.value, previous=current
    )


def _current(profile: Profile, field: str, key: str | None, value: str) -> str | None:
    """The profile's current value the change would replace (or repeat), if any."""
    if field == "name":
        return profile.name
    if field == "notes":
        lines = (profile.notes or "").split("\n")
        return value if value in (line.strip() for line in lines) else None
    items = profile.traits if field == "traits" else profile.preferences
    for item in items:
        item_key, item_value = split_slot(item)
        if key is not None and item_key == key:
            return item_value
        if key is None and item_key is None and item_value == value:
            return value
    return None


def _new_only(
    vault: Vault, engine: Engine, scope: ScopeId, built: list[Candidate]
) -> list[Candidate]:
    """Drop what an active memory, a pending candidate or an earlier proposal says."""
    pending = [
        s.candidate for s in load_candidates(vault, scope)[0] if s.candidate.status == "pending"
    ]
    kept: list[Candidate] = []
    for c in built:
        if c.kind == "episode" and _known_episode(vault, engine, scope, c):
            continue
        if _same_as_any(engine, c, [*pending, *kept]):
            log.info("event=candidate_dropped reason=duplicate_of_pending kind=%s", c.kind)
            continue
        kept.append(c)
    return kept


def _known_episode(vault: Vault, engine: Engine, scope: ScopeId, c: Candidate) -> bool:
    """An active memory of the chat already says it: the rule every write follows
    (vault.writes.duplicates, indexer.dedupe); a correction's target is not its duplicate."""
    probe = Episode(id="", created_at=c.created_at, body=c.body, speaker=c.speaker)
    ignore = (c.supersedes,) if c.supersedes else ()
    found = EngineDuplicates(engine, vault).find(Probe.of(scope, probe, vault.clock(), ignore))
    if found is not None:
        log.info(
            "event=candidate_dropped reason=duplicate_of_memory memory=%s match=%s cosine=%s",
            found.id,
            found.match,
            "-" if found.cosine is None else f"{found.cosine:.3f}",
        )
    return found is not None


def _same_as_any(engine: Engine, c: Candidate, others: list[Candidate]) -> bool:
    if c.kind == "profile":
        me = (c.profile, c.speaker, c.field, c.key, c.value)
        return any((o.profile, o.speaker, o.field, o.key, o.value) == me for o in others)
    bodies = [o for o in others if o.kind == "episode"]
    if not bodies:
        return False
    if folded(c.body) in {folded(o.body) for o in bodies}:
        return True
    # The near rule of a write (indexer.dedupe), between two proposals.
    texts = [_as_embedded(c), *(_as_embedded(o) for o in bodies)]
    vectors = np.asarray(engine.embedder.embed_documents(texts))
    cosines = vectors[1:] @ vectors[0]
    scale = calibrate(engine.embedder)
    return any(
        cosine >= line_between(scale, c.body, o.body) and differs(texts[0], text) is None
        for cosine, o, text in zip(cosines, bodies, texts[1:], strict=True)
    )


def _as_embedded(c: Candidate) -> str:
    return episode_text(Episode(id="", created_at=c.created_at, body=c.body, speaker=c.speaker))
