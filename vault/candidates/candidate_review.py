"""Reviewing candidates: accept (into memory), reject (kept, marked), purge (old decisions).

Accepting writes the memory through the same writers as `remember` and `update_profile`
(redaction, the same-key supersede rule, audit) and marks the candidate file accepted in the
same operation, so one git commit holds both; a correction also supersedes the episode it
corrects in that commit. A candidate the chat already remembers (vault.writes.duplicates)
is accepted as that memory: its file says `accepted_as: <that id>`, no episode is written.
Only a pending candidate is accepted or rejected: a decision is never taken twice, and the
file a person reads always says what became of it.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from ruamel.yaml.comments import CommentedMap

from vault.candidates.candidate_file import Candidate, parse_candidate
from vault.candidates.candidate_store import (
    StoredCandidate,
    find_candidate,
    load_candidates,
)
from vault.errors import BadRequestError, NotFoundError
from vault.files.safewrite import ConflictError, content_hash, remove_file, rewrite
from vault.format.episodes import split_front_matter
from vault.format.model import CORRECTION_TAGS, Episode, FormatError, Profile
from vault.format.tags import tag_keys
from vault.format.yamledit import edit_value, rt_edit
from vault.format.yamlio import decode
from vault.layout.keys import ScopeId
from vault.layout.store import StoredEpisode
from vault.writes.duplicates import Duplicate
from vault.writes.fresh_ids import dated_id, free_id
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault
from vault.writes.profile_edit import ProfileEdit
from vault.writes.profile_ops import edit_profile_in
from vault.writes.transaction import Txn

log = logging.getLogger(__name__)

DECIDED = ("accepted", "rejected")


@dataclass(frozen=True)
class Decision:
    candidate: Candidate  # as the file now says (status accepted or rejected)
    episode: Episode | None = None  # an accepted episode candidate's new episode
    profile: Profile | None = None  # an accepted profile candidate's profile, after
    superseded: tuple[str, ...] = ()  # episodes the accepted correction superseded
    # Accepted, but the chat already remembered it: `episode` is that memory, nothing was
    # written but the candidate's decision (accepted_as names it).
    duplicate: Duplicate | None = None


def edit_candidate_bytes(data: bytes, changes: dict[str, object], rel: str) -> bytes:
    """Set front-matter fields of a candidate file, every other byte as it was."""
    text, bom = decode(data)
    parts = split_front_matter(text)
    if parts.yaml is None:
        raise BadRequestError(f"{rel} has no front matter: fix the file, then retry")
    newline = "\r\n" if parts.head.endswith("\r\n") else "\n"

    def mutate(root: CommentedMap) -> None:
        for name, value in changes.items():
            root[name] = edit_value(value)

    try:
        front = rt_edit(parts.yaml, mutate, newline=newline)
        new_text = parts.head + front + parts.close + parts.body
        parse_candidate(new_text, rel_path=rel)  # never write what we could not read back
    except FormatError as exc:
        raise BadRequestError(f"{rel}:{exc.line}: {exc.message}: fix it, then retry") from exc
    return (b"\xef\xbb\xbf" if bom else b"") + new_text.encode("utf-8")


def _pending(stored: StoredCandidate, verb: str, expected_hash: str | None) -> Candidate:
    if expected_hash is not None and expected_hash != stored.sha:
        raise ConflictError(
            f"{stored.rel} changed since it was shown: nothing was changed; reload and retry"
        )
    c = stored.candidate
    if c.status != "pending":
        raise BadRequestError(
            f"candidate {c.id} is already {c.status}, so it cannot be {verb}ed: edit its "
            "status: line back to pending to review it again"
        )
    return c


def _mark(txn: Txn, stored: StoredCandidate, changes: dict[str, object]) -> Callable[[], None]:
    """Write the decision into the candidate file; returns how to put its old bytes back
    (when the memory write that follows fails, the candidate must still say pending)."""
    seen: list[bytes] = []

    def transform(data: bytes) -> bytes:
        seen.append(data)
        return edit_candidate_bytes(data, changes, stored.rel)

    new = rewrite(stored.path, transform, expected_hash=stored.sha)
    txn.written.append(stored.path)

    def undo() -> None:
        rewrite(stored.path, lambda _: seen[-1], expected_hash=content_hash(new))

    return undo


def accept_candidate(
    vault: Vault,
    scope: ScopeId,
    candidate_id: str,
    *,
    text: str | None = None,
    value: str | None = None,
    verified: bool = True,
    source: str = "user",
    query_id: int | str | None = None,
    expected_hash: str | None = None,
    allow_duplicate: bool = False,
) -> Decision:
    """Turn a pending candidate into memory; `text` / `value` replace the proposed body /
    profile value ("edit then accept"). `verified` False is an automatic accept. An episode
    the chat already remembers (vault.writes.duplicates) is not written again: the
    candidate is accepted as that memory, unless `allow_duplicate`."""
    with vault.lock.hold():
        stored = find_candidate(vault, scope, candidate_id)
        c = _edited(_pending(stored, "accept", expected_hash), text, value)
        with vault.operation(scope, "accept_candidate", source=source, query_id=query_id) as txn:
            if c.kind == "episode":
                return _accept_episode(vault, txn, stored, c, verified, allow_duplicate)
            return _accept_profile(vault, txn, stored, c)


def _edited(c: Candidate, text: str | None, value: str | None) -> Candidate:
    changes = {k: v.strip() for k, v in (("body", text), ("value", value)) if v is not None}
    if not changes:
        return c
    if "value" in changes and c.kind != "profile":
        raise BadRequestError("only a profile candidate has a value: pass the text instead")
    edited = dataclasses.replace(c, **changes)
    # Not redacted here: the memory it becomes is, once, where every memory is (an episode in
    # vault.writes.episode_create.build_episode, a profile value in
    # vault.writes.redact_write.scrub_profile_value), and so is the audit line (Txn.record);
    # a text that is only a secret is refused there.
    if not edited.body or (c.kind == "profile" and not edited.value):
        raise BadRequestError("the edited text is empty: write the memory")
    return edited


def _accept_episode(
    vault: Vault, txn: Txn, stored: StoredCandidate, c: Candidate, verified: bool, allow: bool
) -> Decision:
    scope = txn.scope
    corrects = set(tag_keys(c.tags)) & CORRECTION_TAGS
    tags = c.tags if not c.supersedes or corrects else (*c.tags, "correction")
    said_at = c.evidence.at if c.evidence is not None and c.evidence.at else c.created_at
    # Checked (and its id chosen) before the candidate is marked: nothing below can refuse.
    request = NewEpisode(
        scope, c.body, c.speaker, tags, c.importance, c.key, c.category, "candidate",
        created_at=said_at,
    )  # fmt: skip
    episode = vault.new_episode(request)
    episode = dataclasses.replace(episode, verified=verified, id=_free_id(vault, scope, episode))
    target = _correction_target(vault, scope, c)
    if target is not None and target.episode.status == "active":
        vault.refuse_secret(target, "accepting a correction of it")  # before anything changes
    now = vault.clock()
    found = None if allow else vault.find_duplicate(scope, episode, ignore=(c.supersedes or "",))
    if found is not None:
        _mark(txn, stored, {"status": "accepted", "accepted_as": found.id, "decided_at": now})
        txn.record("accept_candidate", "candidate", c.id, f"{found.said()}: {found.episode.body}")
        done = dataclasses.replace(
            stored.candidate, status="accepted", accepted_as=found.id, decided_at=now
        )
        return Decision(done, episode=found.episode, duplicate=found)
    undo = _mark(txn, stored, {"status": "accepted", "accepted_as": episode.id, "decided_at": now})
    txn.record("accept_candidate", "candidate", c.id, f"as episode {episode.id}: {episode.body}")
    try:
        episode = vault.add_episode(txn, episode, episode.id, audit_as="remember")
    except BaseException:
        undo()
        raise
    superseded = []
    # vault.writes.lifecycle: only a memory at least as new as the target replaces it.
    newer = target is not None and episode.created_at >= target.episode.created_at
    if target is not None and newer and target.episode.status == "active":
        vault._set_status(target, "superseded", txn, superseded_by=episode.id)
        superseded.append(target.episode.id)
    accepted = dataclasses.replace(
        stored.candidate, status="accepted", accepted_as=episode.id, decided_at=now
    )
    return Decision(accepted, episode=episode, superseded=tuple(superseded))


def _free_id(vault: Vault, scope: ScopeId, episode: Episode) -> str:
    at = episode.created_at
    taken = lambda i: vault.layout.new_episode_path(scope, i, at).exists()  # noqa: E731
    return free_id("episode", lambda: dated_id("ep", at), taken)


def _correction_target(vault: Vault, scope: ScopeId, c: Candidate) -> StoredEpisode | None:
    if c.supersedes is None:
        return None
    try:
        return vault.find_episode(scope, c.supersedes)
    except NotFoundError:  # forgotten since it was proposed: accept the memory alone
        log.info("event=candidate_target_gone candidate=%s target=%s", c.id, c.supersedes)
        return None


def _accept_profile(vault: Vault, txn: Txn, stored: StoredCandidate, c: Candidate) -> Decision:
    speaker = c.speaker.id if c.profile == "speaker" and c.speaker is not None else None
    assert c.field is not None and c.value is not None  # parse_candidate requires them
    action = "set" if c.field == "name" else "add"  # a slot `add` replaces its old value
    edit = ProfileEdit(  # refused here, before the candidate file is marked
        txn.scope,
        c.field,
        action,
        c.value,
        speaker=speaker,
        fact_key=c.key,
        previous_value=c.previous,
        speaker_name=c.speaker.name if speaker and c.speaker is not None else None,
    )
    accepted_as = f"profile:{c.profile}" + (f":{speaker}" if speaker else "")
    now = vault.clock()
    undo = _mark(txn, stored, {"status": "accepted", "accepted_as": accepted_as, "decided_at": now})
    txn.record("accept_candidate", "candidate", c.id, f"as {accepted_as}: {c.body}")
    try:
        edit_profile_in(vault, txn, edit)
    except BaseException:
        undo()
        raise
    accepted = dataclasses.replace(
        stored.candidate, status="accepted", accepted_as=accepted_as, decided_at=now
    )
    return Decision(accepted, profile=vault.read_profile(txn.scope, speaker))


def reject_candidate(
    vault: Vault,
    scope: ScopeId,
    candidate_id: str,
    *,
    source: str = "user",
    query_id: int | str | None = None,
    expected_hash: str | None = None,
) -> Decision:
    """Mark a pending candidate rejected; the file stays (purge removes it later)."""
    with vault.lock.hold():
        stored = find_candidate(vault, scope, candidate_id)
        c = _pending(stored, "reject", expected_hash)
        now = vault.clock()
        with vault.operation(scope, "reject_candidate", source=source, query_id=query_id) as txn:
            _mark(txn, stored, {"status": "rejected", "decided_at": now})
            txn.record("reject_candidate", "candidate", c.id, f"{c.kind}: {c.body}")
    return Decision(dataclasses.replace(c, status="rejected", decided_at=now))


def purge_candidates(
    vault: Vault, scope: ScopeId, older_than: timedelta, *, source: str = "user"
) -> list[str]:
    """Delete the chat's accepted and rejected candidates decided more than `older_than`
    ago (pending ones are never purged), in one operation. Returns their ids."""
    with vault.lock.hold():
        cutoff = vault.clock() - older_than
        stored, _ = load_candidates(vault, scope)
        old = [
            s for s in stored if s.candidate.status in DECIDED and _decided(s.candidate) <= cutoff
        ]
        if not old:
            return []
        with vault.operation(scope, "purge_candidates", source=source) as txn:
            vault.keep_before_delete([s.rel for s in old], "purging candidates")
            for s in old:
                remove_file(s.path)
                txn.written.append(s.path)
                c = s.candidate
                txn.record("purge_candidate", "candidate", c.id, f"{c.status} {c.kind}: {c.body}")
    return [s.candidate.id for s in old]


def _decided(c: Candidate) -> datetime:
    return c.decided_at or c.created_at
