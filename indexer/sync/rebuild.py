"""Changing the embedding provider: build the new model's vectors in the background while
the old vectors keep answering, then swap in one step.

Vectors live in one folder per model identity (`index/vectors/<slug>/`), so the old and
the new index never share a file. The swap happens under the syncer's lock after a final
catch-up with every change made during the rebuild, so nothing written meanwhile is lost.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from indexer.backends.backend import SearchBackend
from indexer.backends.embed_cache import CachedEmbedder
from indexer.backends.milvus_index import MilvusVectors
from indexer.backends.records import ChunkDoc
from indexer.backends.vector_index import VectorIndex
from indexer.backends.vector_open import VectorOpener

if TYPE_CHECKING:  # an annotation: the reader's open_vectors must not load the syncer
    from indexer.sync.syncer import Syncer

log = logging.getLogger(__name__)

BATCH = 256


def vectors_dir(index_folder: Path, identity: str) -> Path:
    slug = hashlib.sha1(identity.encode("utf-8")).hexdigest()[:12]
    return index_folder / "vectors" / slug


def open_vectors(index_folder: Path, cached: CachedEmbedder, *, writer: bool) -> VectorIndex:
    return VectorIndex.open(
        vectors_dir(index_folder, cached.identity.key),
        embed=cached.embed_documents,
        embed_query=cached.embed_query,  # uncached: one row per question would pile up
        dim=cached.identity.dim,
        identity=cached.identity.key,
        writer=writer,
    )


def _state(doc: ChunkDoc) -> tuple[object, ...]:
    """What the vector index depends on: a chunk whose state changed must be re-sent."""
    return (doc.text, doc.index_key, doc.status, doc.kind, doc.expires_at)


class VectorRebuild(threading.Thread):
    """Embeds every chunk with the new model into its own folder, then swaps it in."""

    def __init__(
        self,
        syncer: Syncer,
        index_folder: Path,
        new: CachedEmbedder,
        on_swap: Callable[[SearchBackend, CachedEmbedder], None],
        opener: VectorOpener | None = None,
    ) -> None:
        super().__init__(name="memvault-vector-rebuild", daemon=True)
        self.syncer = syncer
        self.index_folder = index_folder
        self.new = new
        self.on_swap = on_swap
        self.opener: VectorOpener = opener or open_vectors
        self.done = 0
        self.total = 0
        self.error: BaseException | None = None
        self.finished = threading.Event()

    def run(self) -> None:
        try:
            self._build()
        except BaseException as exc:  # logged and kept for status; the old index still answers
            self.error = exc
            log.error("vectors=rebuild_failed identity=%s error=%r", self.new.identity.key, exc)
        finally:
            self.finished.set()

    def _build(self) -> None:
        target = self.opener(self.index_folder, self.new, writer=True)
        sent: dict[int, tuple[object, ...]] = {}
        docs = self.syncer.manifest.all_docs()
        self.total = len(docs)
        log.info("vectors=rebuild_start identity=%s chunks=%d", self.new.identity.key, self.total)
        for start in range(0, len(docs), BATCH):
            batch = docs[start : start + BATCH]
            target.upsert(batch)
            sent.update((d.chunk_id, _state(d)) for d in batch)
            self.done = min(start + BATCH, len(docs))
        target.commit()
        with self.syncer.mutex:
            current = {d.chunk_id: d for d in self.syncer.manifest.all_docs()}
            target.delete(set(sent) - set(current))
            target.upsert([d for cid, d in current.items() if sent.get(cid) != _state(d)])
            target.commit()
            old = self.syncer.backends["vector"]
            self.syncer.backends["vector"] = target
            self.syncer.embedding_identity = self.new.identity.key
            self.syncer.manifest.set_embedding_identity(self.new.identity.key)
            self.on_swap(target, self.new)
        old_folder = old.folder if isinstance(old, VectorIndex) else None
        new_folder = target.folder if isinstance(target, VectorIndex) else None
        if isinstance(old, MilvusVectors) and getattr(target, "collection", "") != old.collection:
            old.drop_rows()  # the old model's collection keeps other nodes' rows only
        old.close()
        if old_folder is not None and old_folder != new_folder:
            shutil.rmtree(old_folder, ignore_errors=True)
        log.info(
            "vectors=rebuild_swapped identity=%s chunks=%d", self.new.identity.key, len(current)
        )
