"""The last injection snapshot of each chat: what the plugin put into the prompt last turn.

Derived state under `.memvault/` (git-ignored, not memory): the console and `!memory` show it.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vault.keys import ScopeId
from vault.layout import STATE_DIR
from vault.names import HASH_MARK, MAX_ID_CHARS, encode_name

SNAPSHOT_DIR = "snapshots"


def snapshot_path(vault_root: Path, scope: ScopeId) -> Path:
    """`<vault>/.memvault/snapshots/<encoded key>.json` (derived state, not memory).

    Named by the session's injective key (ScopeId.profile_key), never by its session_key:
    bot `a:b` + `group_1` and bot `a` + `b:group_1` share a session_key, and one chat's
    `!memory` would show the memory injected into the other."""
    key = scope.profile_key
    if len(key) > MAX_ID_CHARS:
        # Two ids of up to MAX_ID_CHARS each, percent-encoded, exceed what encode_name takes
        # (a 200-character Chinese session name does): such a chat had no snapshot at all.
        # A name encode_name never makes (its hashed names keep a prefix before the mark).
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]
        return vault_root / STATE_DIR / SNAPSHOT_DIR / f"{HASH_MARK}{digest}.json"
    name = encode_name(key, "session key")
    return vault_root / STATE_DIR / SNAPSHOT_DIR / f"{name}.json"


def write_snapshot(vault_root: Path, scope: ScopeId, snapshot: Mapping[str, Any]) -> Path:
    """Replace the scope's last injection snapshot in one rename.

    No fsync: the snapshot is a view of the last turn, rewritten every turn; losing it in a
    power cut costs nothing, and an fsync would cost milliseconds on every message.
    """
    target = snapshot_path(vault_root, scope)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    try:
        tmp.write_text(json.dumps(snapshot, ensure_ascii=False, indent=2), encoding="utf-8")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def read_snapshot(vault_root: Path, scope: ScopeId) -> dict[str, Any] | None:
    """The scope's last injection snapshot, or None if there is none (or it is unreadable)."""
    try:
        data = json.loads(snapshot_path(vault_root, scope).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
