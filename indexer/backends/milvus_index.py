"""Vector backend in Milvus (standalone, cluster, Zilliz, or a Milvus Lite file) via pymilvus.

One collection per model identity (`memvault_<sha1(identity)[:12]>_<dim>`), exact inner
product (FLAT, IP) over L2-normalised rows, so scores are cosines as in the FAISS backend.

The scope. The issue asked for the index key as a partition key. Milvus Lite 2.5.1 (the real
C++ engine, what tests and laptops run) refuses EVERY filter on a collection that has an
`is_partition_key` field ("Invalid expr", measured here), while a plain VARCHAR field filter
works on Lite and on a cluster alike. So the scope is a plain VARCHAR field, filtered inside
the search expression: Milvus applies it before ranking (never a post-filter of a global
top-k). A cluster could add partition-key pruning on the same field later; it is not used
because it cannot be tested here.

Hostile keys. Every value placed in a filter expression is the hex of its UTF-8 bytes (the
stored fields hold the same hex): the expression then only ever holds `[0-9a-f]` inside its
quotes, whatever a key contains (quotes, backslashes, `" or 1==1 or "`), and hex is
injective. Filter templates (`{name}` + filter_params) would be nicer, but Lite 2.5.1 does
not parse them (measured: "token recognition error at '{'").

Several instances. chunk_id is allocated per instance (the local manifest's counter,
indexer.sync.manifest), so the same id means different chunks on two clones of a vault.
Rows are therefore keyed by (node, chunk_id): `node` is a random id kept beside the local
index (`<index>/milvus/node`, made by the first writer, as per-instance as the manifest
whose ids it qualifies), and every read and write filters on it. Shared: the server, the
collection per model; per node: its rows, manifest, text index and writer lock (one writer
per node and collection, `<index>/milvus/<collection>/writer.lock`; many nodes write one
collection at once).

Commit visibility: changes are staged until commit(); searches run at Strong consistency,
so a reader (another process, another machine of the same node) sees a commit once it
returned. A commit is sent as a delete + an upsert, not as one transaction: a crash between
them leaves deletions applied and additions not, which the next sync re-sends.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from indexer.backends.backend import (
    DEFAULT_KINDS,
    DEFAULT_STATUSES,
    IndexMismatchError,
    IndexMissingError,
    scope_keys,
)
from indexer.backends.locks import StagedWriter, WriterLock, check_chunk_id
from indexer.backends.milvus_connect import (
    MilvusTarget,
    answering,
    collection_name,
    connect,
    node_id,
)
from indexer.backends.records import ChunkDoc, Hit

log = logging.getLogger(__name__)

Embed = Callable[[list[str]], np.ndarray]
EmbedQuery = Callable[[str], np.ndarray]

MAX_QUERY_CHARS = 2000  # as the FAISS backend: long pastes say nothing more to an encoder
MAX_TOPK = 16384  # Milvus' limit on topk and on a query page
MAX_KEY_BYTES = 8192  # hex doubles it: the VARCHAR field holds 16384
BATCH = 1000  # rows a request: well under gRPC's message limit at 1024 dims


def hexed(value: str) -> str:
    return value.encode("utf-8").hex()


def _quoted(values: Iterable[str]) -> str:
    return "[" + ", ".join(f'"{hexed(v)}"' for v in values) + "]"


class MilvusVectors(StagedWriter):
    """SearchBackend over one Milvus collection, this node's rows only. Use `open`."""

    backend_name = "Milvus"

    def __init__(self, client: object, target: MilvusTarget, name: str, node: str,
                 embed: Embed, embed_query: EmbedQuery | None, dim: int,
                 lock: WriterLock | None) -> None:  # fmt: skip
        self._client = client
        self.target = target
        self.collection = name
        self._node = node
        self._embed_fn, self._query_fn, self._dim = embed, embed_query, dim
        self._lock = lock
        self._writable = lock is not None
        self._pending: dict[int, tuple[ChunkDoc, np.ndarray] | None] = {}
        self._mutex = threading.Lock()
        self._mine = f'node == "{node}"'  # a hex id: safe in an expression as is

    @classmethod
    def open(
        cls,
        target: MilvusTarget,
        folder: Path,
        *,
        embed: Embed,
        dim: int,
        identity: str,
        writer: bool = True,
        embed_query: EmbedQuery | None = None,
    ) -> MilvusVectors:
        """`folder`: this node's local state (its node id; a writer lock per collection, so
        a model-change rebuild writes the new collection while the old one answers)."""
        folder = Path(folder)
        name = collection_name(identity, dim)
        lock = None
        if writer:
            (folder / name).mkdir(parents=True, exist_ok=True)
            lock = WriterLock.acquire(folder / name, "Milvus vector index")
        try:
            node = node_id(folder, writer=writer)
            client = connect(target)
            self = cls(client, target, name, node, embed, embed_query, dim, lock)
            with answering(target):
                self._ensure_collection(identity, writer)
        except BaseException:
            if lock is not None:
                lock.release()
            raise
        log.info("event=vector_index_open backend=milvus uri=%s collection=%s writer=%s node=%s",
                 target.shown, name, writer, node)  # fmt: skip
        return self

    def _ensure_collection(self, identity: str, writer: bool) -> None:
        from pymilvus import DataType

        c = self._client
        if c.has_collection(self.collection):  # type: ignore[attr-defined]
            about = c.describe_collection(self.collection)  # type: ignore[attr-defined]
            dims = [f.get("params", {}).get("dim") for f in about["fields"] if f["name"] == "vec"]
            held = (about.get("description"), dims)
            if held != (identity[:200], [self._dim]):  # the name is a hash: check what it holds
                raise IndexMismatchError(
                    f"Milvus collection {self.collection} at {self.target.shown} holds "
                    f"vectors of {held}, not of {identity} dim={self._dim}: drop that "
                    "collection and run `memvault reindex`"
                )
        elif not writer:
            raise IndexMissingError(
                f"no Milvus collection {self.collection} at {self.target.shown} yet: open it "
                "as writer once (`memvault reindex`)"
            )
        else:
            schema = c.create_schema(  # type: ignore[attr-defined]
                auto_id=False, enable_dynamic_field=False, description=identity[:200]
            )
            schema.add_field("pk", DataType.VARCHAR, is_primary=True, max_length=64)
            schema.add_field("node", DataType.VARCHAR, max_length=32)
            schema.add_field("chunk_id", DataType.INT64)
            schema.add_field("scope", DataType.VARCHAR, max_length=2 * MAX_KEY_BYTES)
            schema.add_field("status", DataType.VARCHAR, max_length=512)
            schema.add_field("kind", DataType.VARCHAR, max_length=512)
            schema.add_field("expires_at", DataType.INT64)
            schema.add_field("vec", DataType.FLOAT_VECTOR, dim=self._dim)
            index = c.prepare_index_params()  # type: ignore[attr-defined]
            index.add_index("vec", index_type="FLAT", metric_type="IP")  # exact, as FAISS flat
            c.create_collection(  # type: ignore[attr-defined]
                self.collection, schema=schema, index_params=index, consistency_level="Strong"
            )
            log.info(
                "event=milvus_collection_created name=%s identity=%s", self.collection, identity
            )

    # -- embedding -------------------------------------------------------------------------

    def _checked(self, raw: np.ndarray, count: int) -> np.ndarray:
        vecs = np.ascontiguousarray(raw, dtype=np.float32).reshape(count, -1)
        if vecs.shape != (count, self._dim):
            raise ValueError(f"embed returned shape {vecs.shape}, expected ({count}, {self._dim})")
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        return vecs / np.where(norms == 0, 1, norms)  # inner product must stay cosine

    # -- writes ----------------------------------------------------------------------------

    def upsert(self, docs: Sequence[ChunkDoc]) -> None:
        self._require_writer()
        latest = {check_chunk_id(d.chunk_id): d for d in docs}  # last one wins
        for d in latest.values():
            if len(d.index_key.encode()) > MAX_KEY_BYTES or max(len(d.status), len(d.kind)) > 64:
                raise ValueError(f"chunk {d.chunk_id}: its scope, status or kind is too long")
        if not latest:
            return
        vecs = self._checked(self._embed_fn([d.text for d in latest.values()]), len(latest))
        for row, (cid, d) in enumerate(latest.items()):
            self._pending[cid] = (d, vecs[row])

    def delete(self, chunk_ids: Iterable[int]) -> None:
        self._require_writer()
        for cid in chunk_ids:
            self._pending[check_chunk_id(cid)] = None

    def commit(self) -> None:
        self._require_writer()
        with self._mutex:
            changes, self._pending = self._pending, {}
            gone = [self._pk(cid) for cid, c in changes.items() if c is None]
            rows = [self._row(cid, *c) for cid, c in changes.items() if c is not None]
            c = self._client
            with answering(self.target):
                self._send(c, gone, rows)
        log.debug("event=milvus_commit deleted=%d upserted=%d", len(gone), len(rows))

    def _send(self, c: Any, gone: list[str], rows: list[dict[str, object]]) -> None:
        for start in range(0, len(gone), BATCH):
            c.delete(self.collection, ids=gone[start : start + BATCH])
        for start in range(0, len(rows), BATCH):
            c.upsert(self.collection, rows[start : start + BATCH])

    def _pk(self, cid: int) -> str:
        return f"{self._node}:{cid}"

    def _row(self, cid: int, d: ChunkDoc, vec: np.ndarray) -> dict[str, object]:
        return {
            "pk": self._pk(cid), "node": self._node, "chunk_id": cid,
            "scope": hexed(d.index_key), "status": hexed(d.status), "kind": hexed(d.kind),
            "expires_at": int(d.expires_at), "vec": vec.tolist(),
        }  # fmt: skip

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
        keys = [k for k in scope_keys(index_key) if len(k.encode("utf-8")) <= MAX_KEY_BYTES]
        if limit <= 0 or not query or not query.strip() or (allowed is not None and not allowed):
            return []
        if not keys or not statuses or not kinds:
            return []
        parts = [self._mine, f"scope in {_quoted(keys)}", f"status in {_quoted(statuses)}",
                 f"kind in {_quoted(kinds)}"]  # fmt: skip
        if now is not None:
            parts.append(f"(expires_at == 0 or expires_at > {int(now)})")
        if allowed is not None:
            parts.append(f"chunk_id in [{', '.join(str(int(i)) for i in allowed)}]")
        text = query[:MAX_QUERY_CHARS]
        raw = self._query_fn(text) if self._query_fn is not None else self._embed_fn([text])
        vec = self._checked(raw, 1)
        with answering(self.target):
            found = self._client.search(  # type: ignore[attr-defined]
                self.collection, data=[vec[0].tolist()], anns_field="vec",
                filter=" and ".join(parts), limit=min(limit, MAX_TOPK), output_fields=["chunk_id"],
                consistency_level="Strong", search_params={"metric_type": "IP"},
            )  # fmt: skip
        hits = [Hit(int(h["entity"]["chunk_id"]), float(h["distance"])) for h in found[0]]
        return sorted(hits, key=lambda h: -h.score)

    def ids(self) -> set[int]:
        out: set[int] = set()
        with answering(self.target):
            # The client's iterator pages by primary key: one query returns MAX_TOPK at most.
            pages = self._client.query_iterator(  # type: ignore[attr-defined]
                self.collection, batch_size=BATCH * 10, filter=self._mine,
                output_fields=["chunk_id"], consistency_level="Strong",
            )  # fmt: skip
            try:
                while page := pages.next():
                    out.update(int(r["chunk_id"]) for r in page)
            finally:
                pages.close()
        return out

    def drop_rows(self) -> None:
        """Delete this node's rows (the old model's, after a rebuild); other nodes' stay."""
        self._require_writer()
        with answering(self.target):
            self._client.delete(self.collection, filter=self._mine)  # type: ignore[attr-defined]
