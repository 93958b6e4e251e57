"""Opening the index of a vault this process cannot write (read-only mount, another user's).

Measured here (SQLite 3.40, tantivy 0.27, tmpfs remounted read-only):
- a WAL database closed cleanly (no -wal, no -shm): `mode=ro` fails ("unable to open
  database file": it must create the -shm), `immutable=1` reads it whole;
- a WAL database a writer left with -wal and -shm: `mode=ro` reads it with the WAL's
  commits, `immutable=1` silently ignores them (an older database, or "no such table");
- a -wal without its -shm: neither reads it correctly, so that case is an error;
- `tantivy.Index.open` creates `.tantivy-meta.lock` in the index folder, even to read.
So SQLite tries `mode=ro` first and `immutable=1` only when no WAL content exists, and
tantivy opens a shadow folder in the temp dir holding symlinks to the index's files.
A reader that could write the folder but must not (`memvault status`) opens `mode=rw` with
`PRAGMA query_only`: on a writable folder `mode=ro` creates -wal and -shm and leaves them
behind, while a read-write connection that never writes removes them when it is the last
one to close, leaving the folder as it was (measured: same files, same mtime).
"""

from __future__ import annotations

import logging
import shutil
import sqlite3
import tempfile
from pathlib import Path

from indexer.backends.backend import IndexLockedError
from vault.layout.layout import STATE_DIR
from vault.layout.readonly import read_only_message

log = logging.getLogger(__name__)

# Locks are per process and folder: never share a writer's in a shadow.
_NOT_LINKED = frozenset({".tantivy-meta.lock", ".tantivy-writer.lock", "writer.lock"})


class ReadOnlyIndexError(IndexLockedError, OSError):
    """The index cannot be written by this process (read-only medium or permissions).

    An IndexLockedError, because every caller that falls back to a read-only handle when
    another process writes must do the same when nobody here can write; an OSError, so the
    CLI maps it to the exit code of the vault's own refused writes (2, like any OSError).
    """


def vault_root(path: Path) -> Path:
    """The vault a `.memvault/...` path belongs to (the path itself if it is not inside one)."""
    for parent in (path, *path.parents):
        if parent.name == STATE_DIR:
            return parent.parent
    return path


def index_error(path: Path, doing: str | None = None) -> ReadOnlyIndexError:
    root = vault_root(path)
    return ReadOnlyIndexError(
        read_only_message(
            root,
            doing or "its index cannot be updated here",
            "remount it read-write (or fix its permissions) to reindex or watch, or run "
            "`memvault reindex` on a writable copy; search and status read the index as built",
            where=path,
        )
    )


def no_index_error(path: Path) -> ReadOnlyIndexError:
    return index_error(path, f"it has no index to read ({path} is missing) and none can be built")


def connect_read_only(
    path: Path, *, schema_version: int | None = None, writable: bool = False
) -> sqlite3.Connection:
    """A read-only connection to the SQLite file at `path`; ReadOnlyIndexError if none works
    or (given `schema_version`) its `meta` table says another one, as it cannot be rebuilt.
    `writable`: the folder can be written (only this reader must not write)."""
    db = _connect_query_only(path) if writable else _connect_read_only(path)
    if schema_version is None:
        return db
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.OperationalError:  # no meta table: not a manifest this code wrote
        row = None
    if row is not None and row[0] == str(schema_version):
        return db
    db.close()
    built = "no schema" if row is None else f"schema {row[0]}"
    raise index_error(
        path,
        f"its index was built by another MemVault ({built}, this one reads "
        f"{schema_version}) and cannot be rebuilt here",
    )


def _connect_read_only(path: Path) -> sqlite3.Connection:
    if not path.is_file():
        raise no_index_error(path)
    uri = path.resolve().as_uri()
    try:
        return _checked(f"{uri}?mode=ro")
    except sqlite3.OperationalError as exc:
        wal = path.with_name(path.name + "-wal")
        if wal.exists() and wal.stat().st_size > 0:
            raise index_error(
                path,
                f"{path} has commits in {wal.name} that SQLite cannot read without writing "
                f"its -shm file ({exc})",
            ) from exc
    # No WAL content: the main file is the whole database (measured above).
    try:
        return _checked(f"{uri}?immutable=1")
    except sqlite3.DatabaseError as exc:
        raise index_error(path, f"{path} cannot be read ({exc})") from exc


def _connect_query_only(path: Path) -> sqlite3.Connection:
    if not path.is_file():
        raise no_index_error(path)
    try:
        db = _checked(f"{path.resolve().as_uri()}?mode=rw")
        db.execute("PRAGMA query_only = ON")
        db.execute("PRAGMA busy_timeout = 5000")  # as the writer's own connection waits
    except sqlite3.DatabaseError as exc:
        raise index_error(path, f"{path} cannot be read ({exc})") from exc
    return db


def _checked(uri: str) -> sqlite3.Connection:
    # connect() is lazy: the open error shows on the first statement, so make one here.
    db = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    try:
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except BaseException:
        db.close()
        raise
    return db


class ShadowDir:
    """A temp folder of symlinks to an index folder's files, for tantivy to lock in.

    Segment files never change once written, so links are as good as copies and cost one
    listdir; `refresh()` links files a writer (another user's process) added since.
    """

    def __init__(self, source: Path) -> None:
        self.source = source
        try:
            self.path = Path(tempfile.mkdtemp(prefix="memvault-ro-index-"))
        except OSError as exc:
            raise index_error(
                source, f"the index cannot be opened read-only: no writable temp dir ({exc})"
            ) from exc
        self.refresh()
        log.info("event=index_shadow source=%s path=%s", source, self.path)

    def refresh(self) -> None:
        for entry in self.source.iterdir():
            link = self.path / entry.name
            if entry.name not in _NOT_LINKED and not link.is_symlink():
                link.symlink_to(entry.resolve())

    def close(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
