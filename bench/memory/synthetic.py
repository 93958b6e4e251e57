"""SYNTHETIC vectors for memory and latency at 100k-1M (named so: not a model's vectors).

A 512-d unit vector drawn from a generator seeded by the text's hash: the same text always
gets the same vector, different texts are unrelated. What this suite measures (RSS of the
index structures, scan cost of an exact flat search, restart time) does not depend on what
the vectors mean, and real model time at 1M is ~2.5 h on 2 cores. The real model is still
loaded and used once, so its weights are in the RSS as in a real indexer.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from indexer.backends.embeddings import EmbedderIdentity, normalise

DIM = 512


def _vector(text: str) -> np.ndarray:
    seed = int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")
    return np.random.default_rng(seed).standard_normal(DIM, dtype=np.float32)


class SyntheticEmbedder:
    """Satisfies indexer.backends.embeddings.Embedder; SYNTHETIC, see the module."""

    def __init__(self) -> None:
        self.identity = EmbedderIdentity("synthetic-bench", "1", DIM)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        return normalise(np.vstack([_vector(t) for t in texts]))

    def embed_query(self, text: str) -> np.ndarray:
        return normalise(_vector(text))[0]
