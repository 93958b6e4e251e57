"""A candidate memory as JSON: `memvault candidates --json`, the console's /candidates."""

from __future__ import annotations

from typing import Any

from vault.candidates.candidate_file import Candidate
from vault.format.yamlio import format_datetime


def candidate_json(c: Candidate) -> dict[str, Any]:
    """A candidate memory as `memvault candidates --json` and the console's /candidates show it."""
    out: dict[str, Any] = {
        "id": c.id or None,
        "status": c.status,
        "kind": c.kind,
        "text": c.body,
        "created_at": format_datetime(c.created_at),
        "speaker": {"id": c.speaker.id, "name": c.speaker.name} if c.speaker else None,
        "evidence": c.evidence.text if c.evidence else None,
        "proposed_by": c.proposed_by,
        "redacted": list(c.redacted),
    }
    if c.kind == "episode":
        out |= {
            "importance": c.importance,
            "tags": list(c.tags),
            "category": c.category,
            "supersedes": c.supersedes,
        }
    else:
        out |= {
            "profile": c.profile,
            "field": c.field,
            "key": c.key,
            "value": c.value,
            "previous": c.previous,
        }
    if c.status != "pending":
        out["accepted_as"] = c.accepted_as
        out["decided_at"] = format_datetime(c.decided_at) if c.decided_at else None
    return out
