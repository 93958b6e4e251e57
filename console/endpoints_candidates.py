"""/candidates, /candidate/accept, /candidate/reject: the memories a model proposed for one
chat, reviewed by a person (vault.candidates does the work).

A candidate lives in its chat's own folder whatever the isolation, so the scope alone finds
it: an id of another chat is simply not there (404), never touched. Accepting and rejecting
carry the sha256 the page showed and are refused (409) when the file changed since, so a
decision is never taken over an edit the person has not seen.
"""

from __future__ import annotations

from typing import Any

from console.context import ConsoleContext
from console.errors import ApiError
from console.requests import Body, page_fields
from vault.candidates import (
    CANDIDATE_STATUSES,
    Decision,
    StoredCandidate,
    accept_candidate,
    candidate_json,
    find_candidate,
    load_candidates,
    reject_candidate,
)
from vault.errors import BadRequestError
from vault.layout.keys import ScopeId
from vault.layout.views import episode_full, iso

PAGE_SIZE = 20
MAX_ID = 200  # checked again (64, plain token) by vault.candidates
FILTERS = ("pending", "all", *(s for s in CANDIDATE_STATUSES if s != "pending"))


def candidate_item(stored: StoredCandidate) -> dict[str, Any]:
    """`memvault candidates list --json`'s item, plus what the page needs to act on it."""
    c = stored.candidate
    return {
        **candidate_json(c),
        "evidence_at": iso(c.evidence.at) if c.evidence is not None else None,
        "accepted_as": c.accepted_as,
        "decided_at": iso(c.decided_at),
        "path": stored.rel,
        "sha256": stored.sha,
    }


def candidates(ctx: ConsoleContext, body: Body) -> dict[str, Any]:
    scope = body.scope(ctx)
    status = body.choice("status", FILTERS, "pending")
    page = body.integer("page", 1, 1, 1_000_000)
    size = body.integer("page_size", PAGE_SIZE, 1, 100)
    stored, problems = load_candidates(ctx.vault, scope)  # newest first
    counts = {s: sum(1 for x in stored if x.candidate.status == s) for s in CANDIDATE_STATUSES}
    chosen = [s for s in stored if status in ("all", s.candidate.status)]
    # Pending first: what still needs a decision; the sort is stable, so newest first within.
    chosen.sort(key=lambda s: s.candidate.status != "pending")
    start = (page - 1) * size
    return {
        **page_fields(len(chosen), page, size),
        "counts": counts,
        "items": [candidate_item(s) for s in chosen[start : start + size]],
        "problems": [p.as_json() for p in problems],
    }


def _id(body: Body) -> str:
    return body.need("id", limit=MAX_ID)


def _expected(body: Body) -> str:
    expected = body.sha()
    if expected is None:
        raise BadRequestError(
            "`expected_sha256` is missing: send the candidate's sha256 the console showed"
        )
    return expected


def _edit(body: Body, name: str) -> str | None:
    """An edited field, or None to keep what was proposed; an emptied one is refused here
    (Body.text reads "" as absent, which would accept the proposal the person cleared)."""
    raw = body.raw.get(name)
    if isinstance(raw, str) and not raw.strip():
        raise BadRequestError(
            f"`{name}` is empty: write the memory to accept, or leave `{name}` out to accept "
            "the proposed one"
        )
    return body.text(name, required=False)


def _current(ctx: ConsoleContext, scope: ScopeId, body: Body, expected: str) -> StoredCandidate:
    """The candidate as on disk, if it is the version the page showed (call under the lock)."""
    stored = find_candidate(ctx.vault, scope, _id(body))
    if stored.sha != expected:
        raise ApiError(
            "conflict",
            f"{stored.rel} changed on disk since you opened it: nothing was changed; reload "
            "it and decide again",
        )
    return stored


def _answer(ctx: ConsoleContext, scope: ScopeId, done: Decision) -> dict[str, Any]:
    fresh = find_candidate(ctx.vault, scope, done.candidate.id)
    episode = None
    if done.episode is not None:
        episode = episode_full(ctx.vault.find_episode(scope, done.episode.id))
    return {
        "candidate": candidate_item(fresh),
        "episode": episode,
        "superseded": list(done.superseded),
        # Accepted as the memory that already says it: nothing new was written.
        "duplicate_of": done.duplicate.as_json() if done.duplicate is not None else None,
    }


def accept(ctx: ConsoleContext, body: Body) -> dict[str, Any]:
    scope = body.scope(ctx)
    expected = _expected(body)
    text, value = _edit(body, "text"), _edit(body, "value")
    with ctx.vault.lock.hold():
        stored = _current(ctx, scope, body, expected)
        done = accept_candidate(
            ctx.vault,
            scope,
            stored.candidate.id,
            text=text,
            value=value,
            source="console",
            expected_hash=expected,
        )
        return _answer(ctx, scope, done)


def reject(ctx: ConsoleContext, body: Body) -> dict[str, Any]:
    scope = body.scope(ctx)
    expected = _expected(body)
    with ctx.vault.lock.hold():
        stored = _current(ctx, scope, body, expected)
        done = reject_candidate(
            ctx.vault, scope, stored.candidate.id, source="console", expected_hash=expected
        )
        return _answer(ctx, scope, done)


ROUTES = {
    "/candidates": candidates,
    "/candidate/accept": accept,
    "/candidate/reject": reject,
}
