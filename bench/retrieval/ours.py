"""MemVault's own pipeline on one dataset: the vault is built and indexed once (what
`memvault eval retrieval` does, via indexer.evaluate.build_vault), then every mode is run
through indexer.retrieval.search.hybrid_search, one query at a time inside its own scope."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bench.retrieval.datasets import Dataset, queries
from indexer.backends.embeddings import Embedder
from indexer.backends.vector_open import VectorOpener
from indexer.engine import Engine
from indexer.evaluate import build_vault
from indexer.retrieval.search import CANDIDATES, SearchRequest, hybrid_search
from vault.layout.keys import ScopeId


@dataclass(frozen=True)
class System:
    """One row of the table: a mode plus (for tuning runs) fusion settings."""

    name: str
    mode: str
    fusion: str = "zconf"
    weights: Mapping[str, float] | None = None
    depth: int = CANDIDATES
    extra: Mapping[str, Any] = field(default_factory=dict)


DEFAULT_SYSTEMS = (
    System("memvault-text", "text"),
    System("memvault-vector", "vector"),
    System("memvault-hybrid", "hybrid", fusion="zconf3"),
    System("memvault-hybrid-zconf2", "hybrid", fusion="zconf"),
)


def run_systems(
    ds: Dataset,
    systems: Sequence[System],
    *,
    cache_path: Path,
    embedder: Embedder | None = None,
    top_k: int = 50,
    workdir: Path | None = None,
    vectors: VectorOpener | None = None,
) -> tuple[dict[str, dict[str, list[str]]], dict[str, Any]]:
    """{system: {query_id: ranked episode ids}}, timings. `vectors`: where the vectors live
    (indexer.backends.vector_open; default: the local FAISS folder)."""
    rows = queries(ds)
    out: dict[str, dict[str, list[str]]] = {}
    timing: dict[str, Any] = {"queries": len(rows)}
    with tempfile.TemporaryDirectory(prefix="memvault-bench-", dir=workdir) as tmp:
        root = Path(tmp) / "vault"
        started = time.perf_counter()
        timing["episodes"] = build_vault(root, ds.episodes)
        opened = Engine.open(root, embedder=embedder, cache_path=cache_path, vectors=vectors)
        with opened as engine:
            engine.reconcile()
            timing["build_index_s"] = time.perf_counter() - started
            timing["embedder"] = engine.embedder.identity.key
            backends = {"text": engine.text, "vector": engine.vector}
            calibrated = engine.calibrated()  # zconf3 needs absolute relevance
            for system in systems:
                t0 = time.perf_counter()
                ranked: dict[str, list[str]] = {}
                for row in rows:
                    request = SearchRequest(
                        query=str(row["question"]),
                        index_key=ScopeId(None, str(row["scope"])).index_key,
                        top_k=top_k,
                        mode=system.mode,
                        fusion=system.fusion,
                    )
                    if system.weights is not None:
                        request = replace(request, source_weights=dict(system.weights))
                    hits = hybrid_search(
                        request, backends, engine.lookup, depth=system.depth, calibrated=calibrated
                    )
                    ranked[row["query_id"]] = [h.doc.episode_id for h in hits]
                out[system.name] = ranked
                elapsed = time.perf_counter() - t0
                timing[f"{system.name}_query_s"] = elapsed
                timing[f"{system.name}_ms_per_query"] = 1000 * elapsed / max(1, len(rows))
    return out, timing
