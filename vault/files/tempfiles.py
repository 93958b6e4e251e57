"""Sweep the temp files dead writers left in the vault (a SIGKILL mid-write, a power cut).

A temp is named `.<file>.<pid>.<8 hex>[.old].tmp` (temp_path below). One is
removed only when its pid is not running here, so a live writer's temp is never touched.
Under `bots/` every write happens under the vault's writer lock; a sweep that holds it
(`locked`) knows no MemVault write is in flight anywhere, so a dead pid is enough there.
Elsewhere (init's files, snapshots) the temp must also be older than STALE_AFTER_S: that
covers a writer in another pid namespace (a container sharing the vault), whose pid means
nothing here. A `.old.tmp` is the file a
rewrite moved aside: if the file itself is missing it is the only copy, so it is put back,
never deleted.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import secrets
import time
from collections.abc import Iterator
from pathlib import Path

from vault.files.procs import pid_exists

log = logging.getLogger(__name__)

# Writes keep a temp for milliseconds; a minute is far beyond any live write.
STALE_AFTER_S = 60.0
TEMP_RE = re.compile(r"\.(?P<name>.+)\.(?P<pid>\d+)\.[0-9a-f]{8}(?P<old>\.old)?\.tmp")
_SKIP_DIRS = {".git"}


@contextlib.contextmanager
def removed_on_error(tmp: Path) -> Iterator[None]:
    """Delete the temp file `tmp` if the block fails (a full disk): never leave one behind."""
    try:
        yield
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def temp_path(target: Path, kind: str = "") -> Path:
    """`.<name>.<pid>.<8 hex><kind>.tmp` next to `target`: sync and the watcher ignore it
    (leading dot, .tmp suffix, DESIGN.md 2) and the pid lets the sweep below remove what a
    dead process left."""
    return target.parent / f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}{kind}.tmp"


def sweep_stale_temps(root: Path, *, locked: bool = False) -> list[Path]:
    """Remove (or put back) dead writers' temp files under `root`; returns what it handled.

    `locked`: the caller holds the vault writer lock (vault.files.safewrite.VaultLock).
    """
    clock = time.time()
    memory = os.path.join(str(root), "bots") + os.sep
    handled: list[Path] = []
    for folder, name in _temp_names(root):
        match = TEMP_RE.fullmatch(name)
        if match is None or pid_exists(int(match["pid"])):
            continue
        path = Path(folder) / name
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            continue
        under_lock = locked and (folder + os.sep).startswith(memory)
        if not under_lock and clock - st.st_mtime < STALE_AFTER_S:
            continue
        target = path.parent / match["name"]
        try:
            if match["old"] and not os.path.lexists(target):
                os.link(path, target)  # link: never over a file that took the name
                log.warning("temp=restored path=%s from=%s", target, name)
            path.unlink()
        except FileExistsError:
            path.unlink(missing_ok=True)
        except OSError as exc:  # read-only, permissions: leave it, say so
            log.warning("temp=sweep_failed path=%s error=%r", path, str(exc))
            continue
        log.info("temp=swept path=%s pid=%s", path, match["pid"])
        handled.append(path)
    return handled


def _temp_names(root: Path) -> list[tuple[str, str]]:
    """(folder, name) of every regular file named like a temp; symlinks are not followed."""
    found: list[tuple[str, str]] = []
    stack = [str(root)]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in _SKIP_DIRS:
                        stack.append(entry.path)
                elif entry.name.endswith(".tmp") and entry.is_file(follow_symlinks=False):
                    found.append((folder, entry.name))
            except OSError:
                continue
    return found
