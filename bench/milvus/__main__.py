"""Local FAISS vs Milvus (milvus-lite 2.5.1's C++ engine, a file URI) side by side, one run.

    .venv/bin/python -m bench.milvus [--rows 100000] [--queries 300] [--skip-locomo]

1. Quality: LoCoMo (../shared/bench, categories 1-4) through the bench.retrieval harness,
   the same model (the embedded USE) and the same embedding cache for both backends; only
   MEMVAULT_INDEX differs (`local`, then `milvus+lite:///tmp/.../locomo.db`). Both search
   exactly (FAISS flat / Milvus FLAT, inner product), so hit@5 must be equal up to ties.
2. Latency: `--rows` synthetic rows in ONE scope (the largest scope is what a search pays
   for), random unit vectors of the model's dim, through each backend's own class
   (VectorIndex, MilvusVectors): search p50/p95 over `--queries` queries with the
   embedding already done (the model's ~3 ms a query is the same for both), plus the time
   to index those rows. Another 10% of rows sit in other scopes, so the scope filter works.

Prints a table and writes bench/results/milvus.json.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.retrieval.datasets import datasets
from bench.retrieval.ours import System, run_systems
from bench.retrieval.report import machine, score, write_json
from indexer.backends.milvus_index import MilvusVectors
from indexer.backends.records import ChunkDoc
from indexer.backends.vector_index import VectorIndex
from vault.layout.index_setting import parse_index

RESULTS = Path(__file__).resolve().parents[1] / "results" / "milvus.json"
CACHE = Path.home() / ".cache" / "memvault" / "eval-embeddings.sqlite"
SYSTEMS = (System("memvault-vector", "vector"), System("memvault-hybrid", "hybrid", "zconf3"))
DIM = 512  # the embedded USE model's
BIG = "bench:big-scope"


def quality(tmp: Path) -> list[dict[str, Any]]:
    ds = next(d for d in datasets() if d.name == "locomo")
    out = []
    for backend, uri in (("faiss", "local"), ("milvus-lite", f"milvus+lite://{tmp}/locomo.db")):
        os.environ["MEMVAULT_INDEX"] = uri
        try:
            ranked, timing = run_systems(ds, SYSTEMS, cache_path=CACHE, workdir=tmp)
        finally:
            del os.environ["MEMVAULT_INDEX"]
        for system in SYSTEMS:
            scores = score(ds, ranked[system.name])
            ms = timing[f"{system.name}_ms_per_query"]
            out.append({"backend": backend, "system": system.name, "scores": scores,
                        "ms_per_query": ms, "build_index_s": timing["build_index_s"]})  # fmt: skip
            print(f"  {backend:<12} {system.name:<16} hit@5 {scores['hit@5']:.1f}", flush=True)
    return out


class Table:
    """Synthetic rows: chunk id -> its unit vector (what `embed` returns for its text)."""

    def __init__(self, rows: int, seed: int = 7) -> None:
        rng = np.random.default_rng(seed)
        self.vecs = rng.standard_normal((rows, DIM)).astype(np.float32)
        self.vecs /= np.linalg.norm(self.vecs, axis=1, keepdims=True)

    def embed(self, texts: list[str]) -> np.ndarray:
        return self.vecs[[int(t) for t in texts]]

    def docs(self, others: int) -> list[ChunkDoc]:
        n = len(self.vecs)
        return [
            ChunkDoc(
                i + 1,
                f"ep_{i}",
                f"e/{i}.md",
                0,
                "episode",
                BIG if i < n - others else f"bench:other-{i % 50}",
                str(i),
            )  # fmt: skip
            for i in range(n)
        ]


def latency(backend: Any, queries: np.ndarray, limit: int = 50) -> dict[str, float]:
    times = []
    for q in [queries[0], *queries]:  # the first one warms caches and is not counted
        backend._query_fn = lambda _text, q=q: q[None, :]  # the embedding is done already
        t0 = time.perf_counter()
        hits = backend.search("q", BIG, limit)
        times.append((time.perf_counter() - t0) * 1000)
        assert len(hits) == limit
    times = sorted(times[1:])
    return {"p50_ms": statistics.median(times), "p95_ms": times[int(0.95 * (len(times) - 1))]}


def scale(tmp: Path, rows: int, nq: int) -> list[dict[str, Any]]:
    table = Table(rows)
    docs = table.docs(others=rows // 10)
    queries = np.random.default_rng(11).standard_normal((nq, DIM)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    out = []
    opened: list[tuple[str, Any]] = []
    t0 = time.perf_counter()
    faiss_idx = VectorIndex.open(tmp / "faiss", embed=table.embed, dim=DIM, identity="bench")
    opened.append(("faiss", faiss_idx))
    target = parse_index(f"milvus+lite://{tmp}/scale.db", tmp)
    milvus = MilvusVectors.open(target, tmp / "milvus", embed=table.embed, dim=DIM, identity="b")
    opened.append(("milvus-lite", milvus))
    for name, backend in opened:
        t0 = time.perf_counter()
        for start in range(0, len(docs), 5000):
            backend.upsert(docs[start : start + 5000])
            backend.commit()
        index_s = time.perf_counter() - t0
        lat = latency(backend, queries)
        top = [h.chunk_id for h in backend.search("x", BIG, 10)]  # the last query's
        out.append({"backend": name, "rows": rows, "rows_in_scope": rows - rows // 10,
                    "index_s": index_s, **lat, "top10_of_last_query": top})  # fmt: skip
        print(f"  {name:<12} indexed {rows} rows in {index_s:.1f}s; "
              f"p50 {lat['p50_ms']:.2f} ms p95 {lat['p95_ms']:.2f} ms", flush=True)  # fmt: skip
        backend.close()
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.milvus", description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--skip-locomo", action="store_true")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="memvault-milvus-bench-") as name:
        tmp = Path(name)
        print("LoCoMo (cat 1-4), same model, same cache:", flush=True)
        locomo = [] if args.skip_locomo else quality(tmp)
        print(f"{args.rows} synthetic rows, {args.queries} queries, top 50:", flush=True)
        lat = scale(tmp, args.rows, args.queries)
    print()
    print(f"{'backend':<12} {'system':<16} {'hit@5':>6} {'R@10':>6} {'ms/q':>6}")
    for r in locomo:
        s = r["scores"]
        print(f"{r['backend']:<12} {r['system']:<16} {s['hit@5']:>6.1f} {s['recall@10']:>6.1f} "
              f"{r['ms_per_query']:>6.1f}")  # fmt: skip
    print(f"\n{'backend':<12} {'rows':>7} {'index s':>8} {'p50 ms':>7} {'p95 ms':>7}")
    for r in lat:
        print(f"{r['backend']:<12} {r['rows']:>7} {r['index_s']:>8.1f} "
              f"{r['p50_ms']:>7.2f} {r['p95_ms']:>7.2f}")  # fmt: skip
    write_json(args.out, {
        "what": __doc__.split("\n")[0], "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": machine(), "locomo": locomo, "latency": lat,
        "seconds": time.time() - started,
    })  # fmt: skip
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
