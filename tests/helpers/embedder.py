"""A tiny deterministic embedder for tests whose subject is not the model (TEST FAKE).

Words and character trigrams hashed into 64 dimensions: texts that share words or pieces of
words are near, others are not, the same text always gets the same vector, and nothing is
loaded (the real model takes about a second to load and ~2 ms a text). Tests of retrieval
quality, relevance, the watcher with the model and integration keep the real model
(`indexer.backends.embeddings.default_embedder`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from indexer.backends.embeddings import EmbedderIdentity, normalise

DIM = 64
_WORD = re.compile(r"\w+", re.UNICODE)


def _slot(piece: str) -> tuple[int, float]:
    digest = hashlib.blake2b(piece.encode("utf-8"), digest_size=4).digest()
    value = int.from_bytes(digest, "little")
    return value % DIM, 1.0 if value & 0x80000000 else -1.0


def _vector(text: str) -> np.ndarray:
    row = np.zeros(DIM, dtype=np.float32)
    for word in _WORD.findall(text.lower()):
        slot, sign = _slot("w:" + word)
        row[slot] += 2.0 * sign
        padded = f"^{word}$"
        for i in range(len(padded) - 2):
            slot, sign = _slot("t:" + padded[i : i + 3])
            row[slot] += sign
    if not row.any():
        row[0] = 1.0  # an empty or symbol-only text still gets a unit vector
    return row


class TinyEmbedder:
    """Satisfies indexer.backends.embeddings.Embedder; no model, no I/O."""

    def __init__(self) -> None:
        self.identity = EmbedderIdentity("tiny-hash-test", "1", DIM)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        return normalise(np.vstack([_vector(t) for t in texts]))

    def embed_query(self, text: str) -> np.ndarray:
        return normalise(_vector(text))[0]
