"""MemVault hybrid and plain BM25 (bm25s), timed per query, reusing bench.retrieval's pieces."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from bench.retrieval.baseline import TOKENIZERS, build_indexes
from bench.retrieval.datasets import Dataset, queries
from indexer.engine import Engine
from indexer.evaluate import build_vault
from indexer.retrieval.search import SearchRequest, hybrid_search
from vault.layout.keys import ScopeId


def _build(ds: Dataset, root: Path, cache: Path) -> tuple[Engine, dict[str, Any]]:
    t0 = time.perf_counter()
    episodes = build_vault(root, ds.episodes)
    t1 = time.perf_counter()
    engine = Engine.open(root, cache_path=cache)
    engine.reconcile()
    t2 = time.perf_counter()
    return engine, {"episodes": episodes, "write_files_s": t1 - t0, "index_s": t2 - t1,
                    "build_s": t2 - t0, "embedder": engine.embedder.identity.key}  # fmt: skip


def run_memvault(
    ds: Dataset, cache: Path, top_k: int = 50
) -> tuple[dict[str, list[str]], dict[str, Any]]:
    """Cold build (fresh embedding cache) once, then warm build (persistent cache) + search."""
    rows = queries(ds)
    with tempfile.TemporaryDirectory(prefix="memvault-peers-") as tmp:
        engine, cold = _build(ds, Path(tmp) / "cold", Path(tmp) / "fresh-embeddings.sqlite")
        engine.close()
    with tempfile.TemporaryDirectory(prefix="memvault-peers-") as tmp:
        engine, warm = _build(ds, Path(tmp) / "vault", cache)
        try:
            backends = {"text": engine.text, "vector": engine.vector}
            calibrated = engine.calibrated()  # what Engine.run passes: same work per query
            ranked: dict[str, list[str]] = {}
            lat: list[float] = []
            for row in rows:
                request = SearchRequest(query=str(row["question"]),
                                        index_key=ScopeId(None, str(row["scope"])).index_key,
                                        top_k=top_k, mode="hybrid")  # fmt: skip
                q0 = time.perf_counter()
                hits = hybrid_search(request, backends, engine.lookup, calibrated=calibrated)
                lat.append(time.perf_counter() - q0)
                ranked[row["query_id"]] = [h.doc.episode_id for h in hits]
        finally:
            engine.close()
    return ranked, {"cold": cold, "warm": warm, "build_s": warm["build_s"],
                    "cold_build_s": cold["build_s"], "latencies_s": lat}  # fmt: skip


def run_bm25s(
    ds: Dataset, tokenizer_name: str = "bm25-stem", top_k: int = 50
) -> tuple[dict[str, list[str]], dict[str, Any]]:
    """As bench.retrieval.baseline.run_bm25 (one index per scope), with per-query timing.
    Query time includes tokenising the query and ranking the scope."""
    tokenizer = TOKENIZERS[tokenizer_name]
    t0 = time.perf_counter()
    indexes = build_indexes(ds, tokenizer)
    build_s = time.perf_counter() - t0
    ranked: dict[str, list[str]] = {}
    lat: list[float] = []
    for q in queries(ds):
        q0 = time.perf_counter()
        model, ids = indexes[str(q["scope"])]
        terms = [t for t in tokenizer(str(q["question"])) if t in model.vocab_dict]
        out: list[str] = []
        if terms:
            scores = model.get_scores(terms)
            order = sorted(range(len(ids)), key=lambda i: -scores[i])[:top_k]
            out = [ids[i] for i in order if scores[i] > 0]
        lat.append(time.perf_counter() - q0)
        ranked[q["query_id"]] = out
    return ranked, {"build_s": build_s, "latencies_s": lat, "tokenizer": tokenizer_name}
