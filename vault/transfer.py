"""Export one scope as JSON, and import ours or LongTermMemory's export shape.

The export is a superset of both LongTermMemory exports (`profiles` like `!memory export`,
`episodes` like `!memory export l2`), so one file moves a chat's memory either way.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from vault.keys import ScopeId
from vault.model import STATUSES, Speaker
from vault.operations import Vault
from vault.profile_ops import check_profile_targets, import_profile
from vault.store import BadRequestError, check_episode_id
from vault.views import episode_export, iso, profile_json
from vault.yamlio import parse_datetime

EXPORT_VERSION = 1


def export_scope(vault: Vault, scope: ScopeId) -> dict[str, Any]:
    episodes, _ = vault.load_episodes(scope)
    profiles: list[dict[str, Any]] = []
    session = vault.read_profile(scope)
    if not session.is_empty():
        profiles.append(
            {"type": "session", "scope_key": scope.session_key, "profile": profile_json(session)}
        )
    for speaker in vault.list_speakers(scope):
        prof = vault.read_profile(scope, speaker)
        if not prof.is_empty():
            profiles.append(
                {
                    "type": "speaker",
                    "scope_key": scope.session_key,
                    "sender_id": speaker,
                    "profile": profile_json(prof),
                }
            )
    items = [episode_export(s.episode) for s in reversed(episodes)]
    return {
        "version": EXPORT_VERSION,
        "exported_at": iso(datetime.now(UTC)),
        "scope_key": scope.session_key,
        "user_key": scope.user_key,
        "isolation": scope.isolation,
        "statuses": list(STATUSES),
        "profiles": profiles,
        "episodes": items,
        "count": len(items),
    }


def _episodes_of(payload: Any) -> list[Any]:
    if isinstance(payload, list):
        return payload
    if isinstance(payload, dict):
        episodes = payload.get("episodes", [])
        if not isinstance(episodes, list):
            raise BadRequestError("`episodes` must be a list of objects")
        return episodes
    raise BadRequestError("import JSON must be a list or an object with episodes")


def _importance(value: Any, number: int) -> int:
    if value in (None, ""):
        return 2
    try:
        return max(1, min(5, int(value)))
    except (TypeError, ValueError) as exc:
        raise BadRequestError(
            f"episode {number}: importance must be an integer from 1 to 5"
        ) from exc


def _tags(value: Any) -> list[str]:
    if isinstance(value, str):
        return [t.strip() for t in value.split(",") if t.strip()]
    return [str(t).strip() for t in value] if isinstance(value, list) else []


def _parse_item(item: Any, number: int) -> dict[str, Any]:
    """Validate one item fully before anything is written, so a bad file writes nothing."""
    if not isinstance(item, dict):
        raise BadRequestError(f"episode {number}: each imported episode must be an object")
    content = str(item.get("content") or "").strip()
    if not content:
        raise BadRequestError(f"episode {number}: content cannot be empty")
    stamp = item.get("timestamp") or item.get("created_at")
    try:
        created = parse_datetime(str(stamp)) if stamp else None
    except ValueError as exc:
        raise BadRequestError(
            f"episode {number}: invalid timestamp {stamp!r}; "
            "use ISO-8601 such as 2026-03-14T00:00:00Z"
        ) from exc
    status = str(item.get("status") or "active").strip().lower()
    sender = str(item.get("sender_id") or "").strip()
    speaker_obj = item.get("speaker")
    if not sender and isinstance(speaker_obj, dict):
        sender = str(speaker_obj.get("id") or "").strip()
    name = str(item.get("sender_name") or "").strip() or None
    return {
        "content": content,
        "tags": _tags(item.get("tags")),
        "importance": _importance(item.get("importance"), number),
        "created_at": created,
        "status": status if status in STATUSES else "active",
        "speaker": Speaker(sender, name) if sender else None,
        "key": (str(item.get("key")).strip() or None) if item.get("key") else None,
        "id": str(item.get("id") or item.get("episode_id") or "").strip(),
    }


def import_payload(
    vault: Vault, scope: ScopeId, payload: Any, *, source: str = "import"
) -> dict[str, Any]:
    """Import episodes (and, from our own export, profiles that are still empty here).

    An item whose id already exists in this scope with the same text is skipped, so importing
    the same file twice does not duplicate memories; other ids are kept when free.
    """
    parsed = [_parse_item(item, n) for n, item in enumerate(_episodes_of(payload), start=1)]
    profiles = payload.get("profiles") if isinstance(payload, dict) else None
    if isinstance(profiles, list):
        check_profile_targets(vault, scope, profiles)
    imported: list[str] = []
    skipped = 0
    with vault.operation(scope, "import", source=source) as txn:
        existing = {s.episode.id: s.episode.body for s in vault.load_episodes(scope)[0]}
        for item in parsed:
            old_id = item.pop("id")
            if old_id and existing.get(old_id) == item["content"]:
                skipped += 1
                continue
            keep = old_id if old_id and old_id not in existing and _plain_id(old_id) else None
            episode = vault.new_episode(
                item["content"],
                item["speaker"],
                item["tags"],
                item["importance"],
                item["key"],
                None,
                source,
                item["created_at"],
                item["status"],
            )
            episode = vault.add_episode(txn, episode, keep)
            existing[episode.id] = episode.body
            imported.append(episode.id)
        merged = False
        if isinstance(profiles, list):
            merged = import_profile(vault, txn, profiles)
        summary = f"Imported {len(imported)} L2 episode(s), skipped {skipped}"
        txn.record("import", "episode", scope.session_key, summary)
    return {"imported": len(imported), "skipped": skipped, "ids": imported, "profile": merged}


def _plain_id(value: str) -> bool:
    try:
        check_episode_id(value)
    except BadRequestError:
        return False
    return True
