"""`!memory candidates [page]` and `!memory candidate accept|reject <id>`: review the
memories the model proposed after each turn (turn_candidates.py) from the chat.

A candidate is a file of this chat (`sessions/<s>/candidates/<id>.md`) that is never
recalled; accepting it goes through the vault's normal writers (vault.candidates.candidate_review:
audit line, one git commit, the supersede rules), rejecting it marks the file
`status: rejected` (kept until `memvault candidates purge`). Ids come from chat and go to the
vault API, which validates them; they never become a path here.
"""

from __future__ import annotations

from vault.candidates import Candidate, Decision, accept_candidate, list_candidates
from vault.candidates import reject_candidate as _reject
from vault.redaction.redact import redact

from .memory_call import Call, Reply, parse_page
from .memory_views import PAGE_SIZE, day, preview

LIST_USAGE = "Usage: !memory candidates [page]"
REVIEW_USAGE = "Usage: !memory candidate accept <id> | !memory candidate reject <id>"
VERBS = ("accept", "reject")


def candidate_line(c: Candidate) -> str:
    """`  [id] YYYY-MM-DD Alice: episode imp:3 (corrects ep_x): text [redacted: password]`."""
    who = f" {c.speaker.name or c.speaker.id}:" if c.speaker else ""
    if c.kind == "profile":
        slot = f" {c.key}" if c.key else ""
        was = f" (was {preview(c.previous, 40)})" if c.previous else ""
        what = f"profile {c.profile} {c.field}{slot} = {preview(c.value, 80)}{was}"
    else:
        fix = f" (corrects {c.supersedes})" if c.supersedes else ""
        what = f"episode imp:{c.importance}{fix}: {preview(c.body, 100)}"
    secret = f" [redacted: {', '.join(c.redacted)}]" if c.redacted else ""
    return f"  [{c.id}] {day(c.created_at)}{who} {what}{secret}"


def candidates(call: Call) -> str:
    """`!memory candidates [page]`; `!memory candidates accept|reject <id>` too (the plural
    alias of `candidate`)."""
    if call.params and call.params[0].lower() in VERBS:
        return candidate(call)
    page_no = parse_page(call.params, LIST_USAGE)
    page = list_candidates(call.v, call.scope, status="pending", page=page_no, page_size=PAGE_SIZE)
    if page.total == 0:
        lines = ["[Memory] No pending candidates in this chat."]
    else:
        lines = [
            f"[Memory] Pending candidates (page {page.page}/{page.pages}, {page.total} total):"
        ]
        lines.extend(candidate_line(s.candidate) for s in page.items)
        if not page.items:
            lines.append(f"  (no page {page_no}: there are {page.pages})")
        lines.append(
            "Accept: !memory candidate accept <id> | Reject: !memory candidate reject <id>"
        )
    if page.problems:
        lines.append(
            f"Unreadable candidate files: {len(page.problems)} "
            f"(first: {page.problems[0].path}:{page.problems[0].line}: "
            f"{preview(page.problems[0].message, 120)})"
        )
    return "\n".join(lines)


def candidate(call: Call) -> str:
    """`!memory candidate accept <id>` / `!memory candidate reject <id>`."""
    if len(call.params) != 2 or call.params[0].lower() not in VERBS:
        raise Reply(REVIEW_USAGE)
    verb, raw_id = call.params[0].lower(), call.params[1]
    if verb == "accept":
        done = accept_candidate(call.v, call.scope, raw_id, source="user", query_id=call.query_id)
        return _accepted(done)
    done = _reject(call.v, call.scope, raw_id, source="user", query_id=call.query_id)
    return (
        f"[Memory] Candidate {done.candidate.id} rejected: it stays out of memory (the file "
        "is kept with status: rejected until purged)."
    )


def _accepted(done: Decision) -> str:
    c = done.candidate
    if done.duplicate is not None:  # nothing new written (vault.writes.duplicates)
        return (
            f"[Memory] Candidate {c.id} accepted: already remembered as {done.duplicate.id}: "
            f"{preview(redact(done.duplicate.episode.body).text, 120)} (nothing new was stored)."
        )
    if done.episode is not None:
        lines = [
            f"[Memory] Candidate {c.id} accepted as episode {done.episode.id}: "
            f"{preview(done.episode.body, 120)}"
        ]
    else:
        slot = f" {c.key}" if c.key else ""
        lines = [
            f"[Memory] Candidate {c.id} accepted: the {c.profile} profile's {c.field}{slot} "
            f"is now {preview(c.value, 80)}"
        ]
    lines.extend(f"Episode {old} is superseded by it." for old in done.superseded)
    return "\n".join(lines)
