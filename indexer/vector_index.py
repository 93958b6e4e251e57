"""Vector backend: exact inner-product search in FAISS with the scope filter inside the search.

On disk one folder holds `writer.lock` and `vectors.mvv`: magic, a JSON header (identity,
dim, per-row metadata), then the int64 ids and the float32 rows. Every commit rewrites that file
through temp + fsync + rename, so a crash at any point leaves the previous commit loadable.
The whole file is rewritten per commit (~20 MB at 10k chunks of 512-d): fine for a bot's
memory; a delta log would be the next step if commits at 100k+ get slow.
"""

from __future__ import annotations

import json
import logging
import os
import struct
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

import faiss
import numpy as np

from indexer.backend import DEFAULT_KINDS, DEFAULT_STATUSES, IndexMismatchError
from indexer.locks import WriterLock, check_chunk_id
from indexer.records import ChunkDoc, Hit
from vault.safewrite import fsync_dir

log = logging.getLogger(__name__)

Embed = Callable[[list[str]], np.ndarray]

SNAPSHOT_NAME = "vectors.mvv"
_MAGIC = b"MVVEC\x001\n"
_FORMAT = 1
# Long pastes cost embedding time and say nothing more to a sentence encoder.
MAX_QUERY_CHARS = 2000


class VectorIndexMismatchError(IndexMismatchError):
    """The folder holds vectors of another model/dim, or an unreadable file: rebuild it."""


class _Meta(NamedTuple):
    user_key: str
    status: str
    kind: str
    expires_at: int


class VectorIndex:
    """SearchBackend over faiss IndexIDMap2(IndexFlatIP). Use `VectorIndex.open`."""

    def __init__(
        self, folder: Path | None, embed: Embed, dim: int, identity: str, lock: WriterLock | None
    ) -> None:
        self._folder = folder
        self._embed_fn = embed
        self._dim = dim
        self._identity = identity
        self._lock = lock
        self._writable = lock is not None or folder is None
        self._mutex = threading.RLock()  # faiss is not safe for search during remove/add
        self._index = faiss.IndexIDMap2(faiss.IndexFlatIP(dim))
        self._meta: dict[int, _Meta] = {}
        self._scopes: dict[str, set[int]] = {}
        # Staged until commit(), so search and ids() show committed state only (as tantivy).
        self._pending: dict[int, tuple[_Meta, np.ndarray] | None] = {}
        self._stamp: tuple[int, int, int] | None = None

    @property
    def folder(self) -> Path | None:
        return self._folder

    @classmethod
    def open(
        cls,
        folder: Path | None,
        *,
        embed: Embed,
        dim: int,
        identity: str,
        writer: bool = True,
    ) -> VectorIndex:
        # One OpenMP thread: a single-query flat search with 2 threads measured 17x slower
        # (1.35 ms vs 0.08 ms at 10k); this is process-wide, as faiss offers nothing finer.
        faiss.omp_set_num_threads(1)
        if folder is None:
            return cls(None, embed, dim, identity, None)
        folder = Path(folder)
        lock: WriterLock | None = None
        if writer:
            folder.mkdir(parents=True, exist_ok=True)
            lock = WriterLock.acquire(folder, "vector index")
            for stale in folder.glob(f".{SNAPSHOT_NAME}.*.tmp"):
                stale.unlink(missing_ok=True)  # left by a crash mid-save
        elif not folder.is_dir():
            raise FileNotFoundError(f"no vector index in {folder}: open it once as writer")
        self = cls(folder, embed, dim, identity, lock)
        try:
            self._load()
        except BaseException:
            self.close()
            raise
        log.info(
            "event=vector_index_open folder=%s writer=%s chunks=%d identity=%s",
            folder,
            writer,
            len(self._meta),
            identity,
        )
        return self

    # -- embedding -------------------------------------------------------------------------

    def _embed(self, texts: list[str]) -> np.ndarray:
        vecs = np.ascontiguousarray(self._embed_fn(texts), dtype=np.float32)
        if vecs.shape != (len(texts), self._dim):
            raise ValueError(
                f"embed returned shape {vecs.shape}, expected ({len(texts)}, {self._dim})"
            )
        faiss.normalize_L2(vecs)  # cheap insurance: inner product must stay cosine
        return vecs

    # -- writes ----------------------------------------------------------------------------

    def _require_writer(self) -> None:
        if not self._writable:
            raise PermissionError("this VectorIndex was opened read-only (writer=False)")

    def upsert(self, docs: Sequence[ChunkDoc]) -> None:
        self._require_writer()
        latest = {check_chunk_id(d.chunk_id): d for d in docs}  # last one wins, as in tantivy
        if not latest:
            return
        vecs = self._embed([d.text for d in latest.values()])
        for row, (cid, d) in enumerate(latest.items()):
            self._pending[cid] = (_Meta(d.user_key, d.status, d.kind, int(d.expires_at)), vecs[row])

    def delete(self, chunk_ids: Iterable[int]) -> None:
        self._require_writer()
        for cid in chunk_ids:
            self._pending[check_chunk_id(cid)] = None

    def commit(self) -> None:
        self._require_writer()
        started = time.perf_counter()
        with self._mutex:
            changed = bool(self._pending)
            if changed:
                self._apply(self._pending)
                self._pending = {}
            # Sync commits often with nothing new: skip rewriting an up-to-date file.
            if self._folder is not None and (changed or self._stamp is None):
                self._save()
        log.debug("event=vector_commit ms=%.1f", (time.perf_counter() - started) * 1000)

    def _apply(self, changes: dict[int, tuple[_Meta, np.ndarray] | None]) -> None:
        touched = np.fromiter(changes, dtype=np.int64, count=len(changes))
        # Remove first: faiss accepts a duplicate id silently and would then return it twice.
        self._index.remove_ids(faiss.IDSelectorBatch(touched))
        for cid in changes:
            old = self._meta.pop(cid, None)
            if old is not None:
                scope = self._scopes[old.user_key]
                scope.discard(cid)
                if not scope:
                    del self._scopes[old.user_key]
        added = [(cid, c) for cid, c in changes.items() if c is not None]
        if not added:
            return
        ids = np.array([cid for cid, _ in added], dtype=np.int64)
        self._index.add_with_ids(np.stack([c[1] for _, c in added]), ids)
        for cid, (meta, _) in added:
            self._meta[cid] = meta
            self._scopes.setdefault(meta.user_key, set()).add(cid)

    # -- persistence -----------------------------------------------------------------------

    def _save(self) -> None:
        assert self._folder is not None
        ids = faiss.vector_to_array(self._index.id_map).astype("<i8")
        n = len(ids)
        vecs = self._index.index.reconstruct_n(0, n) if n else np.zeros((0, self._dim), "<f4")
        head = {"format": _FORMAT, "identity": self._identity, "dim": self._dim, "count": n}
        head["rows"] = [self._meta[c] for c in ids.tolist()]  # same order as ids
        header = json.dumps(head, ensure_ascii=False, separators=(",", ":")).encode()
        target = self._folder / SNAPSHOT_NAME
        tmp = self._folder / f".{SNAPSHOT_NAME}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            f.write(_MAGIC + struct.pack("<Q", len(header)) + header)
            f.write(ids.tobytes())
            f.write(np.ascontiguousarray(vecs, dtype="<f4").tobytes())
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
        fsync_dir(self._folder)
        self._stamp = self._stat()

    def _stat(self) -> tuple[int, int, int] | None:
        assert self._folder is not None
        try:
            st = os.stat(self._folder / SNAPSHOT_NAME)
        except FileNotFoundError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def _load(self) -> None:
        assert self._folder is not None
        path = self._folder / SNAPSHOT_NAME
        stamp = self._stat()
        if stamp is None:
            return
        data = path.read_bytes()
        try:
            if not data.startswith(_MAGIC):
                raise ValueError("not a MemVault vector file")
            (hlen,) = struct.unpack_from("<Q", data, len(_MAGIC))
            pos = len(_MAGIC) + 8
            head = json.loads(data[pos : pos + hlen])
            n, dim, rows = int(head["count"]), int(head["dim"]), head["rows"]
            pos += hlen
            ids = np.frombuffer(data, dtype="<i8", count=n, offset=pos)
            vecs = np.frombuffer(data, dtype="<f4", count=n * dim, offset=pos + 8 * n)
            if pos + (8 + 4 * dim) * n != len(data) or len(rows) != n or head["format"] != _FORMAT:
                raise ValueError("size or format does not match its header")
            meta = {cid: _Meta(*row) for cid, row in zip(ids.tolist(), rows, strict=True)}
        except (ValueError, KeyError, TypeError, struct.error) as exc:
            raise VectorIndexMismatchError(f"{path} is unreadable ({exc}): rebuild it") from exc
        if head["identity"] != self._identity or dim != self._dim:
            raise VectorIndexMismatchError(
                f"{path} holds vectors of identity={head['identity']!r} dim={dim}, "
                f"not identity={self._identity!r} dim={self._dim}: rebuild it"
            )
        index = faiss.IndexIDMap2(faiss.IndexFlatIP(dim))
        if n:
            index.add_with_ids(vecs.reshape(n, dim), ids)
        scopes: dict[str, set[int]] = {}
        for cid, m in meta.items():
            scopes.setdefault(m.user_key, set()).add(cid)
        with self._mutex:
            self._index, self._meta, self._scopes, self._stamp = index, meta, scopes, stamp

    def _refresh_if_stale(self) -> None:
        # Read-only handles follow the writer's commits: one stat per call, reload on change.
        if not self._writable and self._folder is not None and self._stat() != self._stamp:
            self._load()

    # -- reads -----------------------------------------------------------------------------

    def search(
        self,
        query: str,
        user_key: str,
        limit: int,
        *,
        statuses: Sequence[str] = DEFAULT_STATUSES,
        kinds: Sequence[str] = DEFAULT_KINDS,
        now: int | None = None,
    ) -> list[Hit]:
        if limit <= 0 or not query or not query.strip():
            return []
        self._refresh_if_stale()
        status_set, kind_set = set(statuses), set(kinds)
        with self._mutex:
            # Cost follows the scope's size, never the vault's.
            allowed = [
                cid
                for cid in self._scopes.get(user_key, ())
                if (m := self._meta[cid]).status in status_set
                and m.kind in kind_set
                and (now is None or m.expires_at == 0 or m.expires_at > now)
            ]
        if not allowed:
            return []
        vec = self._embed([query[:MAX_QUERY_CHARS]])
        k = min(limit, len(allowed))
        # IDSelectorBatch, never IDSelectorArray (linear per test: 53 ms at 100k).
        params = faiss.SearchParameters(sel=faiss.IDSelectorBatch(np.array(allowed, np.int64)))
        with self._mutex:
            scores, labels = self._index.search(vec, k, params=params)
        return [
            Hit(chunk_id=int(c), score=float(s))
            for s, c in zip(scores[0], labels[0], strict=True)
            if c >= 0
        ]

    def ids(self) -> set[int]:
        self._refresh_if_stale()
        with self._mutex:
            return set(self._meta)

    def close(self) -> None:
        if self._pending:
            log.warning(
                "event=vector_close_uncommitted folder=%s n=%d", self._folder, len(self._pending)
            )
            self._pending = {}
        if self._lock is not None:
            self._lock.release()
            self._lock = None
            self._writable = False

    def __enter__(self) -> VectorIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
