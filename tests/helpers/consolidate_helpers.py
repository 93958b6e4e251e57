"""Shared by the consolidation tests: a seeded chat, a tree hash, the FAKE LLM's answer."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from vault.format.model import Episode, Speaker
from vault.layout.keys import ScopeId
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

NOW = datetime.now(UTC).replace(microsecond=0)
DAY = timedelta(days=1)
CHAT = ScopeId("bot-1", "group_1")
OTHER = ScopeId("bot-1", "group_2")
ALICE = Speaker("u42", "Alice")
SUMMARY = (
    "Earlier this year Alice went to Beijing for a robotics conference; Dave switched from "
    "espresso to an oat flat white."
)


def tree_hash(root: Path, *, under: str = "") -> dict[str, str]:
    """sha256 of every file below root/under, .git included.

    Left out: `.memvault/cache/` (vectors by text hash, a derived cache) and SQLite's `-shm`
    files (a shared-memory read-lock table that any read touches, not data). The indexes,
    manifest, journal and locks below `.memvault/` are all in.
    """
    found: dict[str, str] = {}
    base = root / under if under else root
    for folder, _dirs, files in os.walk(base):
        for name in files:
            path = Path(folder, name)
            rel = path.relative_to(root).as_posix()
            if rel.startswith(".memvault/cache/") or rel.endswith("-shm"):
                continue
            found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


@dataclass(frozen=True)
class Seeded:
    old: Episode  # 200 days old: picked (old)
    chatter: Episode  # importance 1: picked (low_importance)
    superseded: Episode  # same key as `current`: picked (superseded)
    current: Episode  # recent, kept
    kept: Episode  # recent, importance 3: kept


def seed(vault: Vault, scope: ScopeId) -> Seeded:
    old = vault.remember(
        NewEpisode(
            scope,
            "Alice went to Beijing for a robotics conference.",
            speaker=ALICE,
            created_at=NOW - 200 * DAY,
        ),
    )
    chatter = vault.remember(
        NewEpisode(
            scope, "Bob said good morning to everyone.", importance=1, created_at=NOW - 3 * DAY
        )
    )
    superseded = vault.remember(
        NewEpisode(
            scope, "Dave drinks espresso every day.", key="dave_coffee", created_at=NOW - 20 * DAY
        )
    )
    current = vault.remember(
        NewEpisode(
            scope, "Dave now drinks an oat flat white.", key="dave_coffee", created_at=NOW - 2 * DAY
        )
    )
    kept = vault.remember(
        NewEpisode(scope, "Erin is learning the violin.", importance=3, created_at=NOW - DAY)
    )
    return Seeded(old, chatter, superseded, current, kept)


def answer(summary: str = SUMMARY, updates: list[dict[str, str]] | None = None) -> dict:
    return {"summary": summary, "tags": ["travel", "coffee"], "profile_updates": updates or []}
