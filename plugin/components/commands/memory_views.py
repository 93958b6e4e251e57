"""What `!memory` prints: pure functions from vault records to the upstream text shapes.

Shapes follow LongTermMemory's `!memory` (notes/upstream.md section 7) line for line where
upstream has one; MemVault-only facts (vault path, file path, git history) are extra lines.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from indexer.retrieval.outcome import WhyEmpty
from vault.files.audit import AuditEntry
from vault.format.model import Episode, Profile
from vault.git.gitlog import CommitInfo
from vault.layout.views import iso

PAGE_SIZE = 10


def one_line(text: str | None) -> str:
    return " ".join((text or "").split())


def preview(text: str | None, limit: int) -> str:
    """Upstream `_preview_text`: one line, cut to `limit` characters plus `...`."""
    flat = one_line(text)
    return flat if len(flat) <= limit else flat[:limit] + "..."


def echo(value: str, limit: int = 40) -> str:
    """A piece of chat input repeated in a reply: one line, bounded."""
    return preview(value, limit)


def day(value: datetime | int | None) -> str:
    if value is None or value == 0:
        return "?"
    if isinstance(value, int):
        value = datetime.fromtimestamp(value, UTC)
    return value.astimezone(UTC).strftime("%Y-%m-%d")


def _tags(tags: Sequence[str]) -> str:
    return f" [{', '.join(tags)}]" if tags else ""


def episode_line(
    episode_id: str,
    date: str,
    status: str,
    importance: int,
    tags: Sequence[str],
    content: str,
    relevance: float | None = None,
    note: str = "",
) -> str:
    """`  [id] YYYY-MM-DD (status, imp:n) [tags] content` (search and list); search adds
    `, relevance r` with r as `memvault search --explain` prints it (3 decimals), and a
    `note` ("not injected") when the message gate skipped the query."""
    rel = f", relevance {relevance:.3f}" if relevance is not None else ""
    rel += f", {note}" if note else ""
    return f"  [{episode_id}] {date} ({status}, imp:{importance}{rel}){_tags(tags)} {content}"


def list_line(ep: Episode) -> str:
    return episode_line(
        ep.id, day(ep.created_at), ep.status, ep.importance, ep.tags, preview(ep.body, 80)
    )


def hidden_line(ep: Episode) -> str:
    """superseded/archived lists: no status, no importance."""
    return f"  [{ep.id}] {day(ep.created_at)}{_tags(ep.tags)} {preview(ep.body, 80)}"


def profile_summary(label: str, profile: Profile) -> str:
    if profile.is_empty():
        return f"{label} profile: (empty)"
    return (
        f"{label} profile: name={profile.name or ''}, {len(profile.traits)} traits, "
        f"{len(profile.preferences)} prefs"
    )


def kb_line(state: str, kb_id: str | None) -> str:
    """Upstream's L2 line: is a MemVault knowledge base attached to this pipeline?"""
    short = f"{(kb_id or '')[:12]}..."
    if state == "active":
        return f"L2 (Episodic): KB={short} active"
    if state == "inactive":
        return f"L2 (Episodic): KB={short} configured but inactive in this pipeline"
    if state == "none":
        return "L2 (Episodic): no KB configured"
    return "L2 (Episodic): KB state unknown (LangBot did not answer)"


def _ids(values: Any, limit: int = 10) -> str:
    """`[ep_a, ep_b]` from a snapshot list (a hand-edited snapshot is shown, bounded)."""
    items = [echo(str(v)) for v in values] if isinstance(values, list) else []
    more = f", +{len(items) - limit} more" if len(items) > limit else ""
    return f"[{', '.join(items[:limit])}{more}]"


def injection_lines(snapshot: Mapping[str, Any]) -> list[str]:
    """The last turn as its snapshot recorded it: what went into default_prompt and what the
    runner's `retrieve` served or withheld in that same turn. Only what was recorded."""
    lines = [
        f"Last injection: {snapshot.get('recorded_at') or '?'}, "
        f"{snapshot.get('episode_count', 0)} episode(s), "
        f"{snapshot.get('injection_chars', 0)} chars"
    ]
    # The gate's decision and the floor (indexer.retrieval.verdict's words, recorded by the
    # injector).
    verdict = [echo(str(snapshot[k]), 120) for k in ("gate", "floor") if snapshot.get(k)]
    if verdict:
        lines.append(f"  Recall: {'; '.join(verdict)}")
    # Why the memory block is empty, or why recall brought nothing while the chat's critical
    # memories still went in (indexer.retrieval.outcome's words and numbers, as recorded).
    nothing = WhyEmpty.from_json(snapshot.get("nothing_injected"))
    why = WhyEmpty.from_json(snapshot.get("why"))
    if nothing is not None:
        lines.append(f"  Nothing injected: {echo(nothing.words(), 160)}")
    elif why is not None:
        lines.append(f"  Nothing recalled: {echo(why.words(), 160)}")
    placed = snapshot.get("placed")
    if not isinstance(placed, dict):
        lines.append("  Placed: not recorded (snapshot of an older MemVault)")
        return lines
    for target, blocks in placed.items():
        names = ", ".join(str(b) for b in blocks) if isinstance(blocks, list) else ""
        lines.append(f"  {echo(str(target))}: {names or 'nothing'}")
    episode_ids = snapshot.get("episode_ids") or []
    if episode_ids:
        lines.append(f"  Memories in the prompt: {_ids(episode_ids)}")
    recalled = snapshot.get("recalled_ids")
    left = [i for i in recalled if i not in episode_ids] if isinstance(recalled, list) else []
    if left:
        lines.append(f"  Left out by the budget: {_ids(left)}")
    retrieve = snapshot.get("retrieve")
    if not isinstance(retrieve, dict):
        lines.append("  Knowledge base retrieve: no call recorded for this turn")
        return lines
    served, withheld = retrieve.get("served_ids") or [], retrieve.get("withheld_ids") or []
    searched = "searched" if retrieve.get("searched") else "no second search (same question)"
    lines.append(
        f"  Knowledge base retrieve ({searched}): served {len(served)} {_ids(served)}, "
        f"withheld {len(withheld)} already recalled this turn {_ids(withheld)}"
    )
    return lines


def profile_block(title: str, profile: Profile) -> list[str]:
    return [
        f"[{title}]",
        f"Name: {profile.name or '(not set)'}",
        f"Traits: {', '.join(profile.traits) or '(none)'}",
        f"Preferences: {', '.join(profile.preferences) or '(none)'}",
        f"Notes: {profile.notes or '(none)'}",
    ]


def show_text(ep: Episode, rel: str) -> str:
    speaker = ep.speaker
    lines = [
        "[Memory Episode]",
        f"ID: {ep.id}",
        f"Status: {ep.status}",
        f"Timestamp: {iso(ep.created_at) or '-'}",
        f"Importance: {ep.importance}",
        f"Tags: {', '.join(ep.tags) or '-'}",
        f"Sender: {(speaker.name if speaker else None) or '-'} ({speaker.id if speaker else '-'})",
        f"Source: {ep.source or '-'}",
        f"Superseded by: {ep.superseded_by or '-'}",
        f"Key: {ep.key or '-'}",
        f"Category: {ep.category or '-'}",
        f"File: {rel}",
        f"Content: {preview(ep.body, 500)}",
    ]
    return "\n".join(lines)


def audit_line(entry: AuditEntry) -> str:
    return f"  {entry.timestamp[:19]} {entry.operation} {entry.target_id}: {entry.summary}"


def history_text(episode_id: str, rel: str, commits: Sequence[CommitInfo]) -> str:
    lines = [f"[Memory History] {episode_id} ({rel}), {len(commits)} commit(s), newest first:"]
    for c in commits:
        when = c.timestamp.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
        lines.append(f"  {when} {c.sha[:10]} {one_line(c.message)}")
    return "\n".join(lines)


def health_line(status: str, detail: str) -> str:
    return f"- {status}: {detail}"


def health_result(statuses: Sequence[str]) -> str:
    worst = "OK"
    if "ERROR" in statuses:
        worst = "ERROR"
    elif "WARN" in statuses:
        worst = "WARN"
    return {
        "ERROR": "Result: ERROR - MemVault is not usable or not safe for scoped recall yet: "
        "fix the ERROR lines.",
        "WARN": "Result: WARN - MemVault can run, but some checks need attention.",
        "OK": "Result: OK - the vault, the index, the embedding model and scope isolation "
        "look usable.",
    }[worst]
