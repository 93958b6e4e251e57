"""What the indexes were built from: per vault file its stat, hash, parse error and chunk ids.

One SQLite file (WAL, so readers such as `memvault status` never block the writer) at
`<vault>/.memvault/index/manifest.sqlite`. It is derived state like the indexes: deleting
it only costs a full re-index. Chunk ids come from a counter that only grows, so an id
seen by an index is never given to different text later, even across crashes.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from indexer.backend import IndexLockedError
from indexer.locks import LOCK_NAME, WriterLock
from indexer.plan import Known
from indexer.records import ChunkDoc
from vault.layout import STATE_DIR
from vault.model import Problem

log = logging.getLogger(__name__)

SCHEMA_VERSION = 2
INDEX_DIR = "index"
MANIFEST_NAME = "manifest.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    sha TEXT NOT NULL,
    kind TEXT NOT NULL,
    user_key TEXT NOT NULL,
    error TEXT,
    error_line INTEGER
);
CREATE TABLE IF NOT EXISTS chunks (
    chunk_id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    fingerprints TEXT NOT NULL DEFAULT '{}',
    doc TEXT,
    UNIQUE (path, ordinal)
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def _doc_json(doc: ChunkDoc | None) -> str | None:
    return None if doc is None else json.dumps(asdict(doc), ensure_ascii=False)


def _doc_from_json(text: str) -> ChunkDoc:
    data = json.loads(text)
    data["tags"] = tuple(data["tags"])
    return ChunkDoc(**data)


def index_dir(vault_root: Path) -> Path:
    return vault_root / STATE_DIR / INDEX_DIR


def acquire_writer_lock(folder: Path) -> WriterLock:
    """The one-index-writer-per-vault lock, `<folder>/writer.lock` (flock: a crashed
    holder never leaves it stale). Raises IndexLockedError naming the holder's pid."""
    try:
        return WriterLock.acquire(folder, "index")
    except IndexLockedError:
        lock = folder / LOCK_NAME
        try:
            holder = lock.read_text(encoding="utf-8", errors="replace").strip() or "unknown"
        except OSError:
            holder = "unknown"
        raise IndexLockedError(
            f"another MemVault process is already indexing this vault ({holder}; lock "
            f"{lock}): stop it (e.g. its `memvault watch`) or let it keep the index"
        ) from None


@dataclass(frozen=True)
class FileEntry:
    path: str
    size: int
    mtime_ns: int
    sha: str
    kind: str  # episode | profile | speaker
    user_key: str
    chunk_ids: tuple[int, ...] = ()  # by ordinal
    error: str | None = None
    error_line: int | None = None
    # Per chunk (by ordinal): backend name -> hash of what that backend was given, so a
    # chunk a backend already holds unchanged (a rename, an unrelated front-matter edit)
    # is not sent again; for the vector backend that is an embedding saved.
    fingerprints: tuple[dict[str, str], ...] = ()
    # The chunks themselves (by ordinal), so search can rank a hit without re-reading files.
    docs: tuple[ChunkDoc, ...] = ()

    def known(self) -> Known:
        return Known(self.size, self.mtime_ns, self.sha)


class Manifest:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        # Autocommit mode: transactions are explicit (BEGIN IMMEDIATE) so a batch is atomic
        # and a writer takes the lock up front instead of failing half-way on upgrade.
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._lock = threading.RLock()
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA busy_timeout=5000")
        with self._tx():
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    self._db.execute(statement)
            version = self._meta("schema_version")
            if version is None:
                self._set_meta("schema_version", str(SCHEMA_VERSION))
            elif int(version) < SCHEMA_VERSION:
                # Derived state: start over; reconcile re-indexes and drops orphan index ids.
                for table in ("files", "chunks"):
                    self._db.execute(f"DROP TABLE {table}")
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        self._db.execute(statement)
                self._set_meta("schema_version", str(SCHEMA_VERSION))
            elif int(version) > SCHEMA_VERSION:
                raise RuntimeError(
                    f"{path} was written by a newer MemVault (schema {version}): "
                    "upgrade, or delete the .memvault/index folder and reindex"
                )

    @classmethod
    def for_vault(cls, vault_root: Path) -> Manifest:
        return cls(index_dir(vault_root) / MANIFEST_NAME)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextlib.contextmanager
    def _tx(self) -> Iterator[None]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    # ------------------------------------------------------------------ reading

    def entries(self, roots: Sequence[str] | None = None) -> dict[str, FileEntry]:
        """Every entry, or those at or under any of `roots` (vault-relative POSIX paths)."""
        with self._lock:
            rows = self._select("SELECT * FROM files", roots, "path")
            chunk_rows = self._select(
                "SELECT path, chunk_id, fingerprints FROM chunks",
                roots,
                "path",
                order="path, ordinal",
            )
        ids: dict[str, list[int]] = {}
        fps: dict[str, list[dict[str, str]]] = {}
        for path, chunk_id, fp in chunk_rows:
            ids.setdefault(path, []).append(chunk_id)
            fps.setdefault(path, []).append(json.loads(fp))
        return {
            row[0]: FileEntry(
                *row[:6], tuple(ids.get(row[0], ())), row[6], row[7], tuple(fps.get(row[0], ()))
            )
            for row in rows
        }

    def get(self, path: str) -> FileEntry | None:
        return self.entries([path]).get(path)

    def known(self, roots: Sequence[str] | None = None) -> dict[str, Known]:
        with self._lock:
            rows = self._select("SELECT path, size, mtime_ns, sha FROM files", roots, "path")
        return {path: Known(size, mtime, sha) for path, size, mtime, sha in rows}

    def errors(self, roots: Sequence[str] | None = None) -> list[Problem]:
        with self._lock:
            if roots is None:  # one query, no chunk rows and no JSON
                rows = self._db.execute(
                    "SELECT path, error, error_line FROM files WHERE error IS NOT NULL "
                    "ORDER BY path"
                ).fetchall()
            else:
                rows = self._select("SELECT path, error, error_line FROM files", roots, "path")
        return [Problem(path, line or 1, error) for path, error, line in rows if error is not None]

    def chunk_owners(self) -> dict[int, str]:
        """chunk id -> path, for every chunk of a file the manifest has an entry for."""
        with self._lock:
            rows = self._db.execute(
                "SELECT chunks.chunk_id, chunks.path FROM chunks JOIN files USING (path)"
            ).fetchall()
        return dict(rows)

    def doc(self, chunk_id: int) -> ChunkDoc | None:
        with self._lock:
            row = self._db.execute(
                "SELECT doc FROM chunks WHERE chunk_id = ?", (chunk_id,)
            ).fetchone()
        return _doc_from_json(row[0]) if row and row[0] else None

    def all_docs(self) -> list[ChunkDoc]:
        with self._lock:
            rows = self._db.execute("SELECT doc FROM chunks WHERE doc IS NOT NULL").fetchall()
        return [_doc_from_json(row[0]) for row in rows]

    def chunk_ids(self) -> set[int]:
        with self._lock:
            return {row[0] for row in self._db.execute("SELECT chunk_id FROM chunks")}

    def _select(
        self, sql: str, roots: Sequence[str] | None, column: str, order: str = "path"
    ) -> list[tuple]:
        if roots is None:
            return self._db.execute(f"{sql} ORDER BY {order}").fetchall()
        found: dict[tuple, None] = {}
        for root in dict.fromkeys(r.strip("/") for r in roots):
            # '/' + 1 == '0': the half-open range is exactly "under root/", and uses the index.
            query = f"{sql} WHERE {column} = ? OR ({column} > ? AND {column} < ?) ORDER BY {order}"
            for row in self._db.execute(query, (root, root + "/", root + "0")):
                found[row] = None
        return list(found)

    # ------------------------------------------------------------------ writing

    def allocate(self, count: int) -> list[int]:
        """Fresh chunk ids, committed at once so no later call can hand them out again."""
        if count <= 0:
            return []
        with self._tx():
            first = int(self._meta("next_chunk_id") or "1")
            self._set_meta("next_chunk_id", str(first + count))
        return list(range(first, first + count))

    def reserve_above(self, chunk_id: int) -> None:
        """Never allocate `chunk_id` or below (ids an index holds that this file forgot)."""
        with self._tx():
            if int(self._meta("next_chunk_id") or "1") <= chunk_id:
                self._set_meta("next_chunk_id", str(chunk_id + 1))

    def apply(self, *, remove: Iterable[str] = (), put: Iterable[FileEntry] = ()) -> None:
        """One transaction: drop the `remove` paths, then write (replace) the `put` entries.

        Dropping first is what lets a batch of renames swap two names.
        """
        entries = list(put)
        with self._tx():
            # An entry re-put without its docs (a touched file, same content) keeps them.
            kept: dict[int, str] = {}
            for e in entries:
                if not e.docs and e.chunk_ids:
                    rows = self._db.execute(
                        "SELECT chunk_id, doc FROM chunks WHERE path = ? AND doc IS NOT NULL",
                        (e.path,),
                    )
                    kept.update(rows)
            for path in [*remove, *(e.path for e in entries)]:
                self._db.execute("DELETE FROM files WHERE path = ?", (path,))
                self._db.execute("DELETE FROM chunks WHERE path = ?", (path,))
            for e in entries:
                self._db.execute(
                    "INSERT INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (e.path, e.size, e.mtime_ns, e.sha, e.kind, e.user_key, e.error, e.error_line),
                )
                fps = e.fingerprints or tuple({} for _ in e.chunk_ids)
                docs = e.docs or tuple(None for _ in e.chunk_ids)
                self._db.executemany(
                    "INSERT INTO chunks VALUES (?, ?, ?, ?, ?)",
                    [
                        (
                            cid,
                            e.path,
                            ordinal,
                            json.dumps(fp, sort_keys=True),
                            _doc_json(doc) if doc is not None else kept.get(cid),
                        )
                        for ordinal, (cid, fp, doc) in enumerate(
                            zip(e.chunk_ids, fps, docs, strict=True)
                        )
                    ],
                )

    @property
    def embedding_identity(self) -> str | None:
        with self._lock:
            return self._meta("embedding_identity")

    def set_embedding_identity(self, identity: str | None) -> None:
        with self._tx():
            if identity is None:
                self._db.execute("DELETE FROM meta WHERE key = 'embedding_identity'")
            else:
                self._set_meta("embedding_identity", identity)

    def _meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def _set_meta(self, key: str, value: str) -> None:
        self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))
