"""What `status`, `check` and Health say about syncing replicas (vault.git.gitsync): the
versions a sync kept beside a conflicting file (found on disk: they travel to every replica
and stay until a person resolves them), and the last sync's outcome, kept in
`.memvault/sync.json` (derived state, git-ignored) so a sync that keeps failing is seen."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from vault.files.audit import utc_stamp
from vault.files.safewrite import atomic_write
from vault.format.findings import Check
from vault.format.jsonin import load_json
from vault.git.gitmerge import CONFLICT_MARK, is_conflict_copy
from vault.layout.layout import Layout

log = logging.getLogger(__name__)

STATE_NAME = "sync.json"
SHOWN = 3


def record(
    state_dir: Path, remote: str, *, error: str | None = None, notes: list[str] | None = None
) -> None:
    data = {"remote": remote, "at": utc_stamp(), "error": error, "notes": notes or []}
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
        text = json.dumps(data, ensure_ascii=False, indent=1)
        atomic_write(state_dir / STATE_NAME, text.encode("utf-8"))
    except OSError as exc:
        log.warning("git=sync_state_not_written error=%r", str(exc))


def last_sync(state_dir: Path) -> dict[str, object] | None:
    path = state_dir / STATE_NAME
    try:
        data = load_json(path.read_text(encoding="utf-8"), str(path))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def conflict_copies(root: Path) -> list[str]:
    """The versions sync kept beside a conflicting file (vault-relative), sorted."""
    layout = Layout(root)
    return sorted(layout.rel(p) for p in layout.iter_vault_files() if is_conflict_copy(p.name))


def kept_at(copy: str) -> str:
    return copy[: copy.rindex(CONFLICT_MARK)]


def problems(root: Path) -> list[str]:
    """`status`'s lines: each conflict kept twice, and a last sync that failed."""
    said = [
        f"WARN: sync kept two versions of {kept_at(rel)} (the other is {rel}): keep one, "
        "delete the other, then sync"
        for rel in conflict_copies(root)
    ]
    last = last_sync(root / ".memvault")
    if last is not None and last.get("error"):
        said.append(f"WARN: the last sync ({last.get('at')}) failed: {last['error']}")
    return said


def check(root: Path) -> Check | None:
    """Health's line on syncing; None when this vault never synced and has no conflict."""
    copies = conflict_copies(root)
    if copies:
        shown = ", ".join(copies[:SHOWN]) + (
            f" (+{len(copies) - SHOWN})" if len(copies) > SHOWN else ""
        )
        return Check(
            "WARN",
            f"sync kept {len(copies)} conflicting file(s) twice ({shown}): keep one version "
            "of each, delete the other, then sync",
            "sync_conflicts",
            {"count": len(copies), "paths": shown},
        )
    last = last_sync(root / ".memvault")
    if last is None:
        return None
    remote, at = str(last.get("remote")), str(last.get("at"))
    if last.get("error"):
        error = str(last["error"])
        return Check(
            "WARN",
            f"the last sync with {remote} ({at}) failed: {error}",
            "sync_failing",
            {"remote": remote, "at": at, "error": error},
        )
    return Check(
        "OK", f"last synced with {remote} at {at}", "sync_ok", {"remote": remote, "at": at}
    )
