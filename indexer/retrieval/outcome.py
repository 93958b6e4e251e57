"""What one recall found: the results that pass the floor they were searched with."""

from __future__ import annotations

from collections.abc import Sequence

from indexer.retrieval.search import SearchResult


def relevant(results: Sequence[SearchResult]) -> list[SearchResult]:
    """The results (in rank order) whose absolute relevance reaches the floor they were
    searched with: what injection, `retrieve`, `recall_memory` and `!memory search` use.
    Each is judged on its own: rank also weighs recency, importance and speaker, so a
    relevant memory can rank after one that is not (and must still be recalled). A result
    without a relevance (no calibration) does not pass: recalling nothing beats recalling
    the unjudged."""
    return [r for r in results if r.relevance is not None and r.relevance.passed]
