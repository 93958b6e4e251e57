"""Vector backend: exact inner-product search in FAISS over the asked scope's rows only.

In memory each scope's rows are their own faiss 8-bit flat index (indexer.backends.vector_scope),
so a search scans that scope alone, whatever the vault's size. On disk one folder holds
`writer.lock`, the snapshot `vectors.mvv` and the commit log `vectors.log`
(indexer.backends.vector_store): a commit appends its rows to the log, and the snapshot is rewritten
(temp + fsync + rename) only when the log outgrows it, so a crash at any point leaves the
last commit loadable and a cold build writes O(N) bytes, not O(N^2).
"""

from __future__ import annotations

import logging
import struct
import threading
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path

import faiss
import numpy as np

from indexer.backends import vector_store as store
from indexer.backends.backend import (
    DEFAULT_KINDS,
    DEFAULT_STATUSES,
    IndexMismatchError,
    IndexMissingError,
    scope_keys,
)
from indexer.backends.calibration import calibration_sentences
from indexer.backends.locks import WriterLock, check_chunk_id
from indexer.backends.readonly import no_index_error
from indexer.backends.records import ChunkDoc, Hit
from indexer.backends.vector_replay import replay_log
from indexer.backends.vector_scope import ScopedRows, train_ranges
from indexer.backends.vector_store import LOG_NAME, SNAPSHOT_NAME, Row
from vault.layout.readonly import can_write

log = logging.getLogger(__name__)

Embed = Callable[[list[str]], np.ndarray]
# Queries go through their own function: a document cache keyed by text would otherwise
# keep one row per distinct question forever (unbounded on a busy bot, even read-only).
EmbedQuery = Callable[[str], np.ndarray]

# Below this the log is never compacted: small vaults keep cheap appends.
MIN_LOG_BYTES = 64 * 2**20
# Long pastes cost embedding time and say nothing more to a sentence encoder.
MAX_QUERY_CHARS = 2000


class VectorIndexMismatchError(IndexMismatchError):
    """The folder holds vectors of another model/dim, or an unreadable file: rebuild it."""


class VectorIndex:
    """SearchBackend over per-scope faiss 8-bit flat indexes. Use `VectorIndex.open`."""

    def __init__(
        self,
        folder: Path | None,
        embed: Embed,
        dim: int,
        identity: str,
        lock: WriterLock | None,
        embed_query: EmbedQuery | None = None,
    ) -> None:
        self._folder = folder
        self._embed_fn = embed
        self._query_fn = embed_query
        self._dim = dim
        self._identity = identity
        self._lock = lock
        self._writable = lock is not None or folder is None
        self._mutex = threading.RLock()  # faiss is not safe for search during remove/add
        self._rows = ScopedRows(dim, self._model_ranges)
        # Staged until commit(), so search and ids() show committed state only (as tantivy).
        self._pending: dict[int, tuple[Row, np.ndarray] | None] = {}
        # What this handle has read or written: snapshot stat + generation, log stat + end.
        self._stamp: tuple[int, int, int] | None = None
        self._generation: str | None = None
        self._log_stamp: tuple[int, int, int] | None = None
        self._log_pos = 0

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
        embed_query: EmbedQuery | None = None,
    ) -> VectorIndex:
        """`embed` turns document texts into rows; `embed_query` (if given) embeds search
        queries, so a caching `embed` never sees them."""
        # One OpenMP thread: a single-query flat search with 2 threads measured 17x slower
        # (1.35 ms vs 0.08 ms at 10k); this is process-wide, as faiss offers nothing finer.
        faiss.omp_set_num_threads(1)
        if folder is None:
            return cls(None, embed, dim, identity, None, embed_query)
        folder = Path(folder)
        lock: WriterLock | None = None
        if writer:
            folder.mkdir(parents=True, exist_ok=True)
            lock = WriterLock.acquire(folder, "vector index")
            for name in (SNAPSHOT_NAME, LOG_NAME):
                for stale in folder.glob(f".{name}.*.tmp"):
                    stale.unlink(missing_ok=True)  # left by a crash mid-save
        elif not folder.is_dir():
            if not can_write(folder):  # and nobody here can build one: say what to do
                raise no_index_error(folder)
            raise IndexMissingError(f"no vector index in {folder}: open it once as writer")
        self = cls(folder, embed, dim, identity, lock, embed_query)
        try:
            self._load()
        except BaseException:
            self.close()
            raise
        what = "event=vector_index_open folder=%s writer=%s chunks=%d identity=%s"
        log.info(what, folder, writer, len(self._rows), identity)
        return self

    # -- embedding -------------------------------------------------------------------------

    def _model_ranges(self) -> np.ndarray:
        """The 8-bit codes' ranges of a new index: from the model's own calibration sentences
        (cached documents, the ones calibrate() embeds), the same in every vault."""
        return train_ranges(self._embed(calibration_sentences()))

    def _embed(self, texts: list[str]) -> np.ndarray:
        return self._checked(self._embed_fn(texts), len(texts))

    def _embed_query(self, query: str) -> np.ndarray:
        text = query[:MAX_QUERY_CHARS]
        if self._query_fn is None:
            return self._embed([text])
        return self._checked(np.reshape(self._query_fn(text), (1, -1)), 1)

    def _checked(self, raw: np.ndarray, count: int) -> np.ndarray:
        vecs = np.ascontiguousarray(raw, dtype=np.float32)
        if vecs.shape != (count, self._dim):
            raise ValueError(f"embed returned shape {vecs.shape}, expected ({count}, {self._dim})")
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
            self._pending[cid] = ((d.index_key, d.status, d.kind, int(d.expires_at)), vecs[row])

    def delete(self, chunk_ids: Iterable[int]) -> None:
        self._require_writer()
        for cid in chunk_ids:
            self._pending[check_chunk_id(cid)] = None

    def commit(self) -> None:
        self._require_writer()
        started = time.perf_counter()
        with self._mutex:
            changes, self._pending = self._pending, {}
            if changes:
                self._rows.apply(changes)
            if self._folder is not None:
                self._persist(changes)
        log.debug("event=vector_commit ms=%.1f", (time.perf_counter() - started) * 1000)

    # -- persistence -----------------------------------------------------------------------

    def _persist(self, changes: dict[int, tuple[Row, np.ndarray] | None]) -> None:
        # Sync commits often with nothing new: an up-to-date folder is left alone.
        if self._generation is None:  # nothing on disk yet, or a file from before logs
            if changes or self._stamp is None:
                self._save()
            return
        if not changes:
            return
        added = [(cid, c) for cid, c in changes.items() if c is not None]
        change = store.Change(
            deleted=[cid for cid, c in changes.items() if c is None],
            ids=np.array([cid for cid, _ in added], dtype=np.int64),
            rows=[c[0] for _, c in added],
            vecs=np.stack([c[1] for _, c in added]) if added else np.zeros((0, self._dim)),
        )
        assert self._folder is not None
        self._log_pos = store.append_log(self._folder, change)
        # Against the rows' own bytes, not the snapshot file's: its header (metadata, the
        # codes' ranges) would otherwise delay folding in a small index's log.
        if self._log_pos > max(MIN_LOG_BYTES, len(self._rows) * (8 + 4 * self._dim)):
            self._save()  # the log outgrew the snapshot: fold it in (amortised O(N))
        else:
            self._log_stamp = store.stamp(self._folder / LOG_NAME)

    def _save(self) -> None:
        assert self._folder is not None
        ids, rows, blocks = self._rows.snapshot()  # vectors a block at a time: no full copy
        folder, identity, dim = self._folder, self._identity, self._dim
        ranges = self._rows.ranges
        extra = {} if ranges is None else {store.RANGES_FIELD: store.pack_floats(ranges)}
        self._generation = store.write_snapshot(folder, identity, dim, ids, rows, blocks, extra)
        self._stamp = store.stamp(self._folder / SNAPSHOT_NAME)
        self._log_stamp = store.stamp(self._folder / LOG_NAME)
        self._log_pos = self._log_stamp[2] if self._log_stamp else 0

    def _fold_log(self) -> None:
        # A writer that leaves a log bigger than its snapshot folds it in once, on close: each
        # reader that opens later (a `memvault search` from a cold shell) would replay it, and
        # replaying a 20 MB log of 10,000 chunks costs ~0.11 s of CPU more than loading the
        # same rows from a snapshot (issue 23 item 4). Once per writer, so still amortised
        # O(N); the MIN_LOG_BYTES rule keeps a build's many commits appends only.
        if self._folder is None or self._generation is None or self._stamp is None:
            return
        if self._log_pos > self._stamp[2]:
            try:
                with self._mutex:
                    self._save()
            except OSError as exc:  # an optimisation only: the log stays valid as it is
                log.warning("event=vector_fold_failed folder=%s error=%r", self._folder, exc)

    def _load(self) -> None:
        assert self._folder is not None
        path = self._folder / SNAPSHOT_NAME
        snap = store.stamp(path)
        if snap is None:
            return
        loaded = ScopedRows(self._dim, self._model_ranges)

        def sink(ids: np.ndarray, rows: list[Row], vecs: np.ndarray) -> None:
            loaded.add(ids.tolist(), rows, vecs)

        def header(head: dict[str, object]) -> None:
            # The codes' ranges this snapshot was written with: the same codes as before it.
            found = store.unpack_floats(head.get(store.RANGES_FIELD), self._dim)
            if found is not None:
                loaded.ranges = found

        try:
            generation = store.read_snapshot(path, self._identity, self._dim, sink, header)
        except store.IdentityError as exc:
            raise VectorIndexMismatchError(f"{path}: {exc}: rebuild it") from exc
        except (ValueError, KeyError, TypeError, struct.error) as exc:
            raise VectorIndexMismatchError(f"{path} is unreadable ({exc}): rebuild it") from exc
        log_stamp = store.stamp(self._folder / LOG_NAME)
        pos = replay_log(loaded, self._folder, generation, self._dim)
        if not self._writable:
            loaded.fit()  # a reader adds little: no growth room kept
        with self._mutex:
            self._rows, self._stamp, self._generation = loaded, snap, generation
            self._log_pos, self._log_stamp = pos, log_stamp
        if self._writable and generation is not None:
            if pos == 0:  # no log of this snapshot (lost, or stale): start its own
                self._log_pos = store.start_log(self._folder, generation)
            else:
                store.cut_torn_tail(self._folder, pos)
            self._log_stamp = store.stamp(self._folder / LOG_NAME)

    def _replay(self, changes: list[store.Change]) -> None:
        # Merged first, so a chunk updated in many commits is added to faiss once.
        merged: dict[int, tuple[Row, np.ndarray] | None] = {}
        for change in changes:
            merged.update(dict.fromkeys(change.deleted))
            for cid, row, vec in zip(change.ids.tolist(), change.rows, change.vecs, strict=True):
                merged[cid] = (row, vec)
        if merged:
            self._rows.apply(merged)

    def _refresh_if_stale(self) -> None:
        # Read-only handles follow the writer's commits: a stat or two per call; new log
        # records are replayed, a new snapshot is loaded whole.
        if self._writable or self._folder is None:
            return
        if store.stamp(self._folder / SNAPSHOT_NAME) != self._stamp:
            self._load()
            return
        now = store.stamp(self._folder / LOG_NAME)
        if now == self._log_stamp or self._generation is None:
            return
        was = self._log_stamp
        if now is None or was is None or now[0] != was[0] or now[2] < self._log_pos:
            self._load()
            return
        changes, pos = store.read_log(self._folder, self._generation, self._dim, self._log_pos)
        with self._mutex:
            self._replay(changes)
            self._log_pos, self._log_stamp = pos, now

    # -- reads -----------------------------------------------------------------------------

    def search(
        self,
        query: str,
        index_key: str | Sequence[str],
        limit: int,
        *,
        statuses: Sequence[str] = DEFAULT_STATUSES,
        kinds: Sequence[str] = DEFAULT_KINDS,
        now: int | None = None,
        allowed: Collection[int] | None = None,
    ) -> list[Hit]:
        keys = scope_keys(index_key)
        if limit <= 0 or not query or not query.strip() or (allowed is not None and not allowed):
            return []
        self._refresh_if_stale()
        with self._mutex:
            if not any(key in self._rows.scopes for key in keys):
                return []  # nothing to search: spare the embedding
        vec = self._embed_query(query)
        with self._mutex:  # cost follows the scopes' sizes, never the vault's
            found = self._rows.search(vec, keys, limit, set(statuses), set(kinds), now, allowed)
        return [Hit(chunk_id=cid, score=score) for cid, score in found]

    def ids(self) -> set[int]:
        self._refresh_if_stale()
        with self._mutex:
            return set(self._rows.owner)

    def id_array(self) -> np.ndarray:
        """ids() as one int64 array (indexer.sync.id_sets): no set of every id."""
        self._refresh_if_stale()
        with self._mutex:
            owner = self._rows.owner
            return np.fromiter(owner, dtype=np.int64, count=len(owner))

    def close(self) -> None:
        if self._pending:
            log.warning(
                "event=vector_close_uncommitted folder=%s n=%d", self._folder, len(self._pending)
            )
            self._pending = {}
        if self._lock is not None:
            self._fold_log()
            self._lock.release()
            self._lock = None
            self._writable = False

    def __enter__(self) -> VectorIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
