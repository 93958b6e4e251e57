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
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np

from indexer.backends.readonly import connect_read_only
from indexer.backends.records import ChunkDoc
from indexer.sync.manifest_schema import (
    EID,
    SCHEMA_VERSION,
    FileEntry,
    connect_writable,
    doc_from_json,
    doc_json,
    ensure_schema,
)
from indexer.sync.plan import Known
from vault.format.model import Problem
from vault.layout.layout import STATE_DIR
from vault.layout.readonly import can_write

log = logging.getLogger(__name__)

INDEX_DIR = "index"
MANIFEST_NAME = "manifest.sqlite"
# Ids bound per `IN (...)`: far below SQLite's bound-parameter limit (999 before 3.32).
IN_CHUNK = 500


def index_dir(vault_root: Path) -> Path:
    return vault_root / STATE_DIR / INDEX_DIR


class Manifest:
    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.path = path
        self._lock = threading.RLock()
        # A vault this process cannot write (read-only mount, another user's) is read as
        # last indexed; only a writer (which then fails on its lock) would need more.
        # `read_only` asks for that on any vault: a reader (`memvault status`) that must
        # never create, upgrade or lock the file, nor wait on a writer's transaction.
        writable = can_write(path.parent)
        self.read_only = read_only or not writable
        if self.read_only:
            self._db = connect_read_only(path, schema_version=SCHEMA_VERSION, writable=writable)
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = connect_writable(path)
        with self._tx():
            ensure_schema(self._db, path)

    @classmethod
    def for_vault(cls, vault_root: Path, *, read_only: bool = False) -> Manifest:
        return cls(index_dir(vault_root) / MANIFEST_NAME, read_only=read_only)

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

    def shared_episode_ids(self, roots: Sequence[str] | None = None) -> list[tuple[str, str]]:
        """(path, episode id) of the indexed episode files whose id another indexed file
        states too (anywhere: the caller groups them by scope); with `roots`, only ids of
        files under them. Read from first chunks through an index, never from the files."""
        with self._lock:
            if roots is None:
                query = f"SELECT {EID} FROM chunks WHERE ordinal = 0 GROUP BY 1"
                rows = self._db.execute(query + " HAVING COUNT(*) > 1").fetchall()
                ids = [row[0] for row in rows if row[0] is not None]
            else:
                rows = self._select(f"SELECT path, ordinal, {EID} FROM chunks", roots, "path")
                ids = sorted({eid for _, ordinal, eid in rows if ordinal == 0 and eid})
            return self.episode_paths(ids)

    def episode_paths(self, episode_ids: Iterable[str]) -> list[tuple[str, str]]:
        """(path, episode id) of every indexed episode file stating one of these ids."""
        ids = sorted(set(episode_ids))
        found: list[tuple[str, str]] = []
        with self._lock:
            for start in range(0, len(ids), IN_CHUNK):
                part = ids[start : start + IN_CHUNK]
                found += self._db.execute(
                    f"SELECT path, {EID} FROM chunks WHERE ordinal = 0 AND {EID} IN "
                    f"({','.join('?' * len(part))}) AND json_extract(doc, '$.kind') = 'episode'",
                    part,
                ).fetchall()
        return found

    def owned_chunk_ids(self) -> np.ndarray:
        """Sorted int64 ids of every chunk of a file the manifest has an entry for: one array,
        not 1M Python ints (a dict of id -> path at 1M chunks held ~200 MB at every reconcile)."""
        with self._lock:
            cur = self._db.execute("SELECT chunks.chunk_id FROM chunks JOIN files USING (path)")
            ids = np.fromiter((row[0] for row in cur), dtype=np.int64)
        return np.unique(ids)

    def owners_of(self, chunk_ids: Iterable[int]) -> set[str]:
        """The paths of the files these chunks belong to."""
        ids, found = [int(c) for c in chunk_ids], set()
        with self._lock:
            for start in range(0, len(ids), IN_CHUNK):
                part = ids[start : start + IN_CHUNK]
                marks = ",".join("?" * len(part))
                sql = f"SELECT path FROM chunks WHERE chunk_id IN ({marks})"
                rows = self._db.execute(sql, part)
                found.update(row[0] for row in rows)
        return found

    def doc(self, chunk_id: int) -> ChunkDoc | None:
        return self.docs([chunk_id]).get(chunk_id)

    def docs(self, chunk_ids: Iterable[int]) -> dict[int, ChunkDoc]:
        """chunk id -> its doc, for the ids the manifest holds a doc of (others are left
        out: removed since an index answered). One SELECT per IN_CHUNK ids, not per id:
        a search reads ~200 candidates."""
        wanted = list(dict.fromkeys(chunk_ids))
        found: dict[int, ChunkDoc] = {}
        with self._lock:
            for start in range(0, len(wanted), IN_CHUNK):
                part = wanted[start : start + IN_CHUNK]
                rows = self._db.execute(
                    f"SELECT chunk_id, doc FROM chunks WHERE doc IS NOT NULL AND chunk_id IN "
                    f"({','.join('?' * len(part))})",
                    part,
                ).fetchall()
                found.update((cid, doc_from_json(doc)) for cid, doc in rows if doc)
        return found

    def scope_docs(
        self,
        index_keys: Sequence[str],
        where: str = "",
        params: Sequence[object] = (),
        *,
        first_only: bool = True,
    ) -> list[ChunkDoc]:
        """The docs of the indexed files of these scopes (the first chunk of each, or every
        chunk), by path; `where` narrows them with an SQL condition over `doc`
        (json_extract(doc, '$.priority') = ?, values bound through `params`, never
        formatted in). Reads through files_index_key, never the whole vault."""
        keys = list(dict.fromkeys(index_keys))
        if not keys:
            return []
        sql = _scope_sql("c.doc", len(keys), where, first_only) + " ORDER BY f.path, c.ordinal"
        with self._lock:
            rows = self._db.execute(sql, [*keys, *params])
            return [doc_from_json(row[0]) for row in rows.fetchall()]

    def scope_count(
        self, index_keys: Sequence[str], where: str = "", params: Sequence[object] = ()
    ) -> int:
        """How many indexed files of these scopes meet `where` (as scope_docs, counted)."""
        keys = list(dict.fromkeys(index_keys))
        if not keys:
            return 0
        with self._lock:
            sql = _scope_sql("COUNT(*)", len(keys), where, True)
            return int(self._db.execute(sql, [*keys, *params]).fetchone()[0])

    def scope_texts(self, index_key: str, where: str = "") -> list[tuple[str, str, str, str, int]]:
        """(episode_id, path, text, speaker_name, created_at) of the first chunk of every
        indexed file of one scope, newest first; `where` as in scope_docs. The fields are
        read by SQLite, no doc is parsed here: the duplicate check of a write reads a whole
        chat (indexer.dedupe), 10,000 docs parsed took a third of a second."""
        fields = ", ".join(
            f"json_extract(c.doc, '$.{name}')"
            for name in ("episode_id", "path", "text", "speaker_name", "created_at")
        )
        sql = (
            f"SELECT {fields} FROM files f JOIN chunks c ON c.path = f.path WHERE c.doc IS NOT "
            "NULL AND f.index_key = ? AND c.ordinal = 0"
        )
        if where:
            sql += f" AND ({where})"
        with self._lock:
            rows = self._db.execute(sql + " ORDER BY 5 DESC, 2", [index_key]).fetchall()
        return [(r[0], r[1], r[2] or "", r[3] or "", int(r[4] or 0)) for r in rows]

    def scope_chunk_ids(
        self, index_keys: Sequence[str], where: str, params: Sequence[object] = ()
    ) -> set[int]:
        """Every chunk id (all ordinals) of the files of these scopes whose first chunk
        `c` meets `where` (over `c.doc`, values bound through `params`): a filtered search's
        `allowed` set (indexer.retrieval.filters). A file's chunks all carry its front-matter
        fields."""
        keys = list(dict.fromkeys(index_keys))
        if not keys:
            return set()
        sql = (
            "SELECT a.chunk_id FROM files f JOIN chunks c ON c.path = f.path AND c.ordinal = 0 "
            "JOIN chunks a ON a.path = f.path WHERE c.doc IS NOT NULL "
            f"AND f.index_key IN ({','.join('?' * len(keys))}) AND ({where})"
        )
        with self._lock:
            return {row[0] for row in self._db.execute(sql, [*keys, *params])}

    def all_docs(self) -> list[ChunkDoc]:
        with self._lock:
            rows = self._db.execute("SELECT doc FROM chunks WHERE doc IS NOT NULL").fetchall()
        return [doc_from_json(row[0]) for row in rows]

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
                    (e.path, e.size, e.mtime_ns, e.sha, e.kind, e.index_key, e.error, e.error_line),
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
                            doc_json(doc) if doc is not None else kept.get(cid),
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


def _scope_sql(columns: str, keys: int, where: str, first_only: bool) -> str:
    """SELECT `columns` of the files of `keys` index keys (bound first), narrowed by `where`."""
    sql = (
        f"SELECT {columns} FROM files f JOIN chunks c ON c.path = f.path WHERE c.doc IS NOT "
        f"NULL AND f.index_key IN ({','.join('?' * keys)})"
    )
    if first_only:
        sql += " AND c.ordinal = 0"
    return sql + (f" AND ({where})" if where else "")
