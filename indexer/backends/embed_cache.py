"""Vectors cached on disk by (provider identity, text hash): unchanged text is embedded once.

Survives restarts and `reindex` (it lives under .memvault/cache/, outside the index folder),
so a rebuild after deleting the indexes costs no model time for text seen before.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from indexer.backends.embeddings import Embedder
from vault.layout.readonly import can_write

log = logging.getLogger(__name__)


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class CachedEmbedder:
    """Wraps an Embedder; `misses` counts texts that really went to the model."""

    def __init__(self, inner: Embedder, path: Path | None) -> None:
        self.inner = inner
        self.identity = inner.identity
        self.misses = 0
        self._lock = threading.Lock()
        if path is not None and not can_write(path.parent):
            # Only a cache, and a vault nobody here can write is never indexed here (only
            # queries are embedded, never cached): memory costs nothing and cannot fail.
            log.info("event=embed_cache_in_memory path=%s reason=read_only", path)
            path = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path) if path else ":memory:", check_same_thread=False)
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS vectors (identity TEXT, sha TEXT, vec BLOB, "
                "PRIMARY KEY (identity, sha))"
            )
            self._db.commit()
        except BaseException:  # a full disk: the file must not stay open (nobody can close it)
            self._db.close()
            raise

    def embed_documents(self, texts: Sequence[str], *, store: bool = True) -> np.ndarray:
        """`store=False` embeds what the cache misses without adding it: a caller that must
        change nothing on disk (a consolidation preview) still gets the cached vectors."""
        dim = self.identity.dim
        out = np.zeros((len(texts), dim), dtype=np.float32)
        hashes = [text_hash(t) for t in texts]
        found = self._lookup(set(hashes))
        missing = [i for i, h in enumerate(hashes) if h not in found]
        for i, h in enumerate(hashes):
            if h in found:
                out[i] = found[h]
        if missing:
            unique = list(dict.fromkeys(hashes[i] for i in missing))
            first = {h: next(i for i in missing if hashes[i] == h) for h in unique}
            vectors = self.inner.embed_documents([texts[first[h]] for h in unique])
            self.misses += len(unique)
            fresh = dict(zip(unique, vectors, strict=True))
            for i in missing:
                out[i] = fresh[hashes[i]]
            if store:
                self._store(fresh)
        return out

    def embed_query(self, text: str) -> np.ndarray:
        # Never cached: questions rarely repeat, and a row per question would grow forever.
        return self.inner.embed_query(text)

    def _lookup(self, hashes: set[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        items = list(hashes)
        with self._lock:
            for i in range(0, len(items), 500):
                chunk = items[i : i + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    f"SELECT sha, vec FROM vectors WHERE identity = ? AND sha IN ({marks})",
                    [self.identity.key, *chunk],
                )
                for sha, blob in rows:
                    found[sha] = np.frombuffer(blob, dtype=np.float32)
        return found

    def _store(self, fresh: dict[str, np.ndarray]) -> None:
        rows = [(self.identity.key, h, v.astype(np.float32).tobytes()) for h, v in fresh.items()]
        with self._lock:
            self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", rows)
            self._db.commit()

    def close(self) -> None:
        with self._lock:
            self._db.close()
