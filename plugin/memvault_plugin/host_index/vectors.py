"""SearchBackend over the host's vector database (LangBot's `vdb`: Chroma, Milvus, ...).

Isolation: each search asks the host with `file_id` = the asked scopes' file ids only (rows),
the one filter every LangBot backend applies inside its database, so the ranking is over
those scopes' rows alone, never a global top-k cut afterwards. Each hit's own key is checked
against its file id again: a row of another scope means the host ignored the filter, and the
search fails (HostVectorError) rather than rank around it.

Statuses, kinds, expiry and `allowed`: most LangBot backends cannot filter on them, so every
row stays in the host with its state in `text`, and a search over-fetches inside the scope and
keeps the matching rows, asking again with a larger top_k until it has `limit` of them or the
host returned fewer than it asked (the scope is exhausted): the result is exactly the best
`limit` matching rows of the scope. Keeping only active rows in the host instead would cost a
second index for `statuses=("active", "archived")` and for profiles.

Writes: upsert/delete are staged and sent by commit() (the host shows them at once, so that
is what makes them visible). Milvus inserts (does not replace) a row whose id exists, so every
changed id is first deleted by its `uuid`; where a backend cannot filter on uuid (Valkey) the
upsert itself replaces, and a deleted row is first re-filed under the space's tombstone file id
and then deleted by file id, which every backend does.

ids(): a writer lists the space's rows once at open (vector_list pages) and keeps the set
from its commits; a reader lists them on each call. The writer lock is a local file (one
writer per vault, like FAISS); the host itself is reached only from the plugin process.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path

import numpy as np

from indexer.backends.backend import DEFAULT_KINDS, DEFAULT_STATUSES, scope_keys
from indexer.backends.locks import StagedWriter, WriterLock, check_chunk_id
from indexer.backends.records import ChunkDoc, Hit

from . import rows
from .calls import HostCalls, HostVectorError

log = logging.getLogger(__name__)

Embed = Callable[[list[str]], np.ndarray]
EmbedQuery = Callable[[str], np.ndarray]
MAX_QUERY_CHARS = 2000
PAGE = 500  # rows per vector_list call (Milvus caps offset + limit at 16384)
MAX_TOP_K = 16384  # Milvus's largest top_k
BATCH = 256  # rows per upsert call


class HostVectorIndex(StagedWriter):
    backend_name = "host"

    def __init__(
        self,
        calls: HostCalls,
        space: str,
        metric: rows.Metric,
        embed: Embed,
        dim: int,
        lock: WriterLock | None,
        embed_query: EmbedQuery | None = None,
    ) -> None:
        self._calls = calls
        self._space = space
        self._metric = metric
        self._embed_fn = embed
        self._query_fn = embed_query
        self._dim = dim
        self._lock = lock
        self._writable = lock is not None
        self._pending: dict[int, tuple[rows.Row, np.ndarray] | None] = {}
        self._ids: set[int] | None = None  # the writer's view of what the host holds
        self._mutex = threading.Lock()

    @classmethod
    def open(
        cls,
        calls: HostCalls,
        folder: Path,
        *,
        space: str,
        metric: rows.Metric,
        embed: Embed,
        dim: int,
        writer: bool = True,
        embed_query: EmbedQuery | None = None,
    ) -> HostVectorIndex:
        lock = None
        if writer:
            Path(folder).mkdir(parents=True, exist_ok=True)
            lock = WriterLock.acquire(Path(folder), "host vector index")
        self = cls(calls, space, metric, embed, dim, lock, embed_query)
        try:
            if writer:
                self._ids = self._list_ids()
        except BaseException:
            self.close()
            raise
        log.info(
            "event=host_vector_open collection=%s space=%s writer=%s chunks=%s metric=%s",
            calls.collection, space, writer, len(self._ids or ()), metric.name,
        )  # fmt: skip
        return self

    # -- writes ----------------------------------------------------------------------------

    def _vectors(self, raw: np.ndarray, count: int) -> np.ndarray:
        vecs = np.asarray(raw, dtype=np.float32).reshape(count, -1)
        if vecs.shape != (count, self._dim):
            raise ValueError(f"embed returned shape {vecs.shape}, expected ({count}, {self._dim})")
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        return vecs / np.where(norms > 0, norms, 1.0)  # cosine on every backend's metric

    def upsert(self, docs: Sequence[ChunkDoc]) -> None:
        self._require_writer()
        latest = {check_chunk_id(d.chunk_id): d for d in docs}
        if not latest:
            return
        vecs = self._vectors(self._embed_fn([d.text for d in latest.values()]), len(latest))
        for row, (cid, d) in enumerate(latest.items()):
            self._pending[cid] = (rows.Row.of(d), vecs[row])

    def delete(self, chunk_ids: Iterable[int]) -> None:
        self._require_writer()
        for cid in chunk_ids:
            self._pending[check_chunk_id(cid)] = None

    def commit(self) -> None:
        self._require_writer()
        with self._mutex:
            changes, self._pending = self._pending, {}
            if not changes:
                return
            if self._ids is None:  # a commit failed part way: ask the host what it holds
                self._ids = self._list_ids()
            try:
                self._send(changes)
            except BaseException:
                self._ids = None  # some rows may have reached the host: list them next time
                raise
        log.debug("event=host_vector_commit changes=%d", len(changes))

    def _send(self, changes: dict[int, tuple[rows.Row, np.ndarray] | None]) -> None:
        assert self._ids is not None
        space = self._space
        known = [cid for cid in changes if cid in self._ids]
        for start in range(0, len(known), BATCH):  # Milvus: insert never replaces
            ids = [rows.row_id(space, cid) for cid in known[start : start + BATCH]]
            self._calls.delete_where({"uuid": {"$in": ids}})
        added = [(cid, c) for cid, c in changes.items() if c is not None]
        for start in range(0, len(added), BATCH):
            part = added[start : start + BATCH]
            self._calls.upsert(
                [vec.tolist() for _, (_, vec) in part],
                [rows.row_id(space, cid) for cid, _ in part],
                [row.metadata(space) for _, (row, _) in part],
            )
        gone = [cid for cid in known if changes[cid] is None]
        if gone:
            self._bury(gone)
        self._ids.update(cid for cid, _ in added)
        self._ids.difference_update(cid for cid, c in changes.items() if c is None)

    def _bury(self, gone: list[int]) -> None:
        # Where the uuid delete was a no-op (a backend that filters on file_id only), the row
        # is still there: re-file it under the tombstone, then delete the tombstone file.
        space, grave = self._space, rows.tombstone_file_id(self._space)
        unit = [1.0] + [0.0] * (self._dim - 1)
        for start in range(0, len(gone), BATCH):
            part = gone[start : start + BATCH]
            ids = [rows.row_id(space, cid) for cid in part]
            meta = [{"file_id": grave, "uuid": i, "text": rows.TOMBSTONE} for i in ids]
            self._calls.upsert([unit] * len(part), ids, meta)
        self._calls.delete_files([grave])

    # -- reads -----------------------------------------------------------------------------

    def _list_ids(self) -> set[int]:
        found: set[int] = set()
        offset = 0
        while True:
            items = self._calls.list(PAGE, offset)
            for item in items:
                row = rows.parse_row(self._space, item.get("metadata"))
                if row is not None:
                    found.add(row.chunk_id)
            if len(items) < PAGE:
                return found
            offset += len(items)

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
        if limit <= 0 or not query or not query.strip() or not keys:
            return []
        if (allowed is not None and not allowed) or not statuses or not kinds:
            return []
        text = query[:MAX_QUERY_CHARS]
        raw = self._query_fn(text) if self._query_fn else self._embed_fn([text])
        vector = self._vectors(raw, 1)[0].tolist()
        files = [rows.scope_file_id(self._space, k) for k in keys]
        where = {"file_id": files[0]} if len(files) == 1 else {"file_id": {"$in": files}}
        want_status, want_kind = set(statuses), set(kinds)
        # Most rows of a scope are active episodes: a small margin first, x4 while short.
        top_k = min(MAX_TOP_K, limit + max(16, limit // 2))
        while True:
            found = self._calls.search(vector, top_k, where)
            best: dict[int, float] = {}
            for hit in found:
                row = rows.parse_row(self._space, hit.get("metadata"))
                if row is None or row.index_key not in keys:
                    # The host ignored the file_id filter: fail closed, never rank around it.
                    log.error("event=host_vector_foreign_row id=%s", hit.get("id"))
                    raise HostVectorError(
                        f"the host's vector database returned row {hit.get('id')!r}, which is "
                        "not of the scope asked for: its file_id filter does not hold; set "
                        "index: local"
                    )
                if row.status not in want_status or row.kind not in want_kind:
                    continue
                if now is not None and row.expires_at and row.expires_at <= now:
                    continue
                if allowed is not None and row.chunk_id not in allowed:
                    continue
                score = self._metric.cosine(float(hit.get("distance", 0.0)))
                best[row.chunk_id] = max(score, best.get(row.chunk_id, score))
            if len(best) >= limit or len(found) < top_k or top_k >= MAX_TOP_K:
                if len(best) < limit and len(found) >= MAX_TOP_K:
                    log.warning("event=host_vector_overfetch_capped top_k=%d", top_k)
                ranked = sorted(best.items(), key=lambda item: (-item[1], item[0]))
                return [Hit(chunk_id=cid, score=s) for cid, s in ranked[:limit]]
            top_k = min(MAX_TOP_K, top_k * 4)

    def ids(self) -> set[int]:
        if not self._writable:
            return self._list_ids()  # a reader follows the writer's commits
        with self._mutex:
            if self._ids is None:
                self._ids = self._list_ids()
            return set(self._ids)
