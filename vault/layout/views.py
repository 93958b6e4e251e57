"""JSON shapes of records, shared by the CLI (`--json`), export and later the plugin."""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from vault.format.model import Episode, Profile
from vault.layout.store import StoredEpisode


def iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    value = value.astimezone(UTC)
    if value.microsecond:
        return value.isoformat().replace("+00:00", "Z")
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


def episode_item(stored: StoredEpisode, score: float | None = None) -> dict[str, Any]:
    """The item shape of `search --json` and `list --json` (DESIGN.md 7)."""
    ep = stored.episode
    return {
        "id": ep.id,
        "score": score,
        "content": ep.body,
        "created_at": iso(ep.created_at),
        "speaker": asdict(ep.speaker) if ep.speaker else None,
        "tags": list(ep.tags),
        "importance": ep.importance,
        "status": ep.status,
        "path": stored.rel,
    }


def _memory_fields(ep: Episode) -> dict[str, Any]:
    """The fields beyond LongTermMemory's, in the order both full shapes list them."""
    return {
        "key": ep.key,
        "category": ep.category,
        "source": ep.source,
        "verified": ep.verified,
        "confidence": ep.confidence,
        "expires_at": iso(ep.expires_at),
        "superseded_by": ep.superseded_by,
    }


def episode_full(stored: StoredEpisode) -> dict[str, Any]:
    ep = stored.episode
    return {
        **episode_item(stored),
        "priority": ep.priority,
        "updated_at": iso(ep.updated_at),
        **_memory_fields(ep),
        "extra": {k: v for k, v in ep.extra},
        "sha256": stored.sha,
    }


def episode_export(ep: Episode) -> dict[str, Any]:
    """An exported episode: LongTermMemory's L2 fields first, then ours, so either reads it."""
    return {
        "id": ep.id,
        "content": ep.body,
        "tags": list(ep.tags),
        "importance": ep.importance,
        "timestamp": iso(ep.created_at),
        "sender_id": ep.speaker.id if ep.speaker else "",
        "sender_name": (ep.speaker.name or "") if ep.speaker else "",
        "status": ep.status,
        **_memory_fields(ep),
        "priority": ep.priority,
        "updated_at": iso(ep.updated_at),
        # Unknown front-matter fields, so an import writes them back
        # (vault.transfer.transfer_items).
        "extra": {k: v for k, v in ep.extra},
    }


def profile_json(profile: Profile) -> dict[str, Any]:
    return {
        "name": profile.name or "",
        "traits": list(profile.traits),
        "preferences": list(profile.preferences),
        "notes": profile.notes or "",
        "updated_at": iso(profile.updated_at) or "",
        "history": [
            {"key": h.key, "value": h.value, "until": iso(h.until), "reason": h.reason}
            for h in profile.history
        ],
        "extra": {k: v for k, v in profile.extra},
    }
