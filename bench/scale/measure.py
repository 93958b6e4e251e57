"""Timings on an indexed scale vault: hybrid search in one scope, and the injection handler.

Search is timed twice on the same distinct questions: once as the engine runs it (query
embedding included: the vector index embeds the query with the model, uncached), and
once with the query vectors computed beforehand and handed to the vector index (query
embedding excluded). The injection handler is bench.inject's own timing code (fake host).
"""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path
from typing import Any

from bench.inject.__main__ import BOT, SESSION, measure, questions, summary
from indexer.backends.vector_index import MAX_QUERY_CHARS
from indexer.engine import Engine
from indexer.retrieval.search_query import SearchQuery
from vault.layout.keys import ScopeId


def _timed_searches(engine: Engine, texts: list[str], scopes: list[ScopeId]) -> list[float]:
    out = []
    for text, scope in zip(texts, scopes, strict=True):
        began = time.perf_counter()
        engine.search(SearchQuery(text, scope, top_k=5, speaker_id="u1"))
        out.append((time.perf_counter() - began) * 1000)
    return out


def search_latency(
    root: Path, count: int, seed: int, other_scopes: list[ScopeId]
) -> dict[str, Any]:
    """p50/p95/p99 in the largest scope and in random scopes, with and without embedding."""
    rng = random.Random(seed)
    texts = questions(rng, 3 * count)
    warm, big, spread = texts[:count], texts[count : 2 * count], texts[2 * count :]
    main = ScopeId(BOT, SESSION)
    picks = [rng.choice(other_scopes) for _ in spread]
    with Engine.open(root, writer=False) as engine:
        _timed_searches(engine, warm[:20], [main] * 20)  # model + index warm-up
        with_big = _timed_searches(engine, big, [main] * len(big))
        with_spread = _timed_searches(engine, spread, picks)
        # Query embedding excluded: the same texts, vectors computed first.
        model = engine.embedder.inner
        ready = {t[:MAX_QUERY_CHARS]: model.embed_query(t[:MAX_QUERY_CHARS]) for t in big + spread}
        vector = engine.vector
        original = vector._query_fn  # noqa: SLF001 - bench-only substitution
        vector._query_fn = ready.__getitem__  # noqa: SLF001
        try:
            without_big = _timed_searches(engine, big, [main] * len(big))
            without_spread = _timed_searches(engine, spread, picks)
        finally:
            vector._query_fn = original  # noqa: SLF001
        embed_ms = []
        for text in warm:
            began = time.perf_counter()
            model.embed_query(text)
            embed_ms.append((time.perf_counter() - began) * 1000)
    return {
        "largest_scope": {
            "with_query_embedding": summary(with_big),
            "without_query_embedding": summary(without_big),
        },
        "random_scopes": {
            "with_query_embedding": summary(with_spread),
            "without_query_embedding": summary(without_spread),
        },
        "query_embedding_alone": summary(embed_ms),
    }


def injection_latency(root: Path, messages: int, warmup: int, seed: int) -> dict[str, Any]:
    """bench.inject's measure() against the FAKE host, in the largest scope."""
    texts = questions(random.Random(seed + 1), messages + warmup)
    result = asyncio.run(measure(root, texts, warmup))
    result.pop("latencies_ms", None)
    return result
