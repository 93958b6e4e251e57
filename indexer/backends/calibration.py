"""How similar an embedding model finds texts that have nothing in common, measured once per
model on templates/calibration_sentences.txt (mutually unrelated sentences, en and zh).

Models put unrelated texts at very different cosines (USE around 0.1, some e5 models at
0.8-0.9), so any cosine threshold (supersede's near-duplicate line, the relevance floor's
vector side) is expressed against this calibration, never as a fixed number.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from indexer.backends.embeddings import Embedder
from templates import read_template

log = logging.getLogger(__name__)

# Near-duplicate line: mean similarity of unrelated sentences + SIGMAS deviations, and never
# below the most similar unrelated pair + MARGIN (used by indexer.supersede).
SIGMAS = 6.0
MARGIN = 0.1
# Duplicate line (indexer.dedupe: a write that repeats a memory is not stored): mean +
# DUPLICATE_SIGMAS deviations, never below the near-duplicate line. Chosen by bench/dedupe.py
# on ../shared/bench pairs with the shipped model so that different facts are not refused
# (bench/results/dedupe.json); another model gets the same rule on its own calibration.
DUPLICATE_SIGMAS = 9.0
# The line for two texts in different languages (a Chinese and an English one): a model
# puts a translation well below a same-language paraphrase (USE: a median 0.79), so it has
# a line of its own, chosen by the same bench.
CROSS_LANGUAGE_SIGMAS = 8.0


@dataclass(frozen=True)
class Calibration:
    identity: str
    mean: float
    std: float
    max_unrelated: float

    @property
    def threshold(self) -> float:
        return min(0.99, max(self.mean + SIGMAS * self.std, self.max_unrelated + MARGIN))

    @property
    def duplicate_line(self) -> float:
        return min(0.99, max(self.mean + DUPLICATE_SIGMAS * self.std, self.threshold))

    @property
    def cross_language_line(self) -> float:
        return min(0.99, max(self.mean + CROSS_LANGUAGE_SIGMAS * self.std, self.threshold))


_CACHE: dict[str, Calibration] = {}


def calibration_sentences() -> list[str]:
    text = read_template("calibration_sentences.txt")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]


def calibrate(embedder: Embedder) -> Calibration:
    key = embedder.identity.key
    if key not in _CACHE:
        vectors = embedder.embed_documents(calibration_sentences())
        sims = vectors @ vectors.T
        pairs = sims[np.triu_indices(len(vectors), 1)]
        _CACHE[key] = Calibration(key, float(pairs.mean()), float(pairs.std()), float(pairs.max()))
        log.info("event=calibrated identity=%s threshold=%.3f", key, _CACHE[key].threshold)
    return _CACHE[key]
