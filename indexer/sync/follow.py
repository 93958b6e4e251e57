"""Wait until another process's index writer has indexed what this process just wrote.

A CLI write (`remember`, `forget`, a profile edit) while `memvault watch`, the console or
the plugin holds the index writer lock cannot index its own files: only the lock holder
writes the index, and its watcher picks the files up after a quiet period. So that the write
is searchable when the command returns (as README promises), the command waits, bounded,
until the writer's manifest holds exactly the bytes now on disk for each path it wrote (the
writer commits the manifest only after both indexes, indexer.sync.apply, so a search that
starts afterwards finds it).
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path

from indexer.backends.locks import LOCK_NAME
from indexer.sync.disk_scan import role_of
from indexer.sync.manifest import MANIFEST_NAME, index_dir
from vault.files import filelocks
from vault.files.safewrite import content_hash
from vault.layout.links import read_vault_file

log = logging.getLogger(__name__)

TIMEOUT_S = 15.0  # far above the watcher's 150 ms quiet period plus a busy sync
POLL_S = 0.02


def other_writer(root: Path) -> bool:
    """Whether some process holds the vault's index writer lock now."""
    try:
        return filelocks.is_held(index_dir(root) / LOCK_NAME)
    except OSError:  # a link or FIFO planted there: no writer we could wait for
        return False


def _disk_sha(root: Path, rel: str) -> str | None:
    """The content hash the writer will record for `rel`, None if the file is gone."""
    try:
        data, _ = read_vault_file(root, rel)
    except OSError:
        return None
    return content_hash(data)


def _indexed_sha(db: sqlite3.Connection, rel: str) -> str | None:
    row = db.execute("SELECT sha FROM files WHERE path = ?", (rel,)).fetchone()
    return None if row is None else str(row[0])


def not_indexed(root: Path, paths: Iterable[str], db: sqlite3.Connection) -> list[str]:
    """The memory files among `paths` whose index entry does not match the disk yet (a
    deleted file must have left the index)."""
    return [
        rel
        for rel in sorted(set(paths))
        if role_of(root, rel) is not None and _indexed_sha(db, rel) != _disk_sha(root, rel)
    ]


def _open(root: Path) -> sqlite3.Connection | None:
    """A read-only connection that sees each new commit (never `immutable`, unlike the
    fallback of indexer.backends.readonly, which would never see the writer's next commit)."""
    path = index_dir(root) / MANIFEST_NAME
    if not path.is_file():
        return None
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
    try:
        db.execute("SELECT sha FROM files LIMIT 1").fetchall()
    except sqlite3.Error:  # not created yet by a writer just starting, or another schema
        db.close()
        return None
    return db


def wait_indexed(
    root: Path, paths: Iterable[str], *, timeout: float | None = None, poll: float = POLL_S
) -> list[str]:
    """Block until another process's index writer holds each memory file of `paths` as it
    is on disk; the paths still behind after `timeout` ([] = all searchable).

    Without another writer there is nothing to wait for: the next process that opens the
    index as writer (`memvault search` does) catches up with the files first (a few changes
    at once; with many it says how many wait, indexer.cli.catch_up).
    """
    wanted = [rel for rel in paths if role_of(root, rel) is not None]
    if not wanted or not other_writer(root):
        return []
    limit = TIMEOUT_S if timeout is None else timeout
    started = time.monotonic()
    db: sqlite3.Connection | None = None
    behind = wanted
    try:
        while True:
            db = db or _open(root)
            if db is not None:
                try:
                    behind = not_indexed(root, wanted, db)
                except sqlite3.Error as exc:  # busy past its timeout: look again
                    log.debug("follow=read_failed root=%s error=%s", root, exc)
            if not behind or time.monotonic() - started >= limit:
                break
            if not other_writer(root):  # the writer stopped: the next one reconciles
                return []
            time.sleep(poll)
    finally:
        if db is not None:
            db.close()
    ms = (time.monotonic() - started) * 1000
    log.debug(
        "follow=waited root=%s paths=%d behind=%d ms=%.0f", root, len(wanted), len(behind), ms
    )
    return behind
