"""Search latency in one ~600-episode scope (LoCoMo conv-42: 629 episodes, 260 questions),
query embedding included, and how many SQL statements the manifest runs per search.

    .venv/bin/python -m bench.search_latency [--library conv-50] [--repeat 3] [--per-row]

`--per-row` reads candidates as search did before the batched lookup (one SELECT per
candidate, through Manifest.doc), everything else the same: before/after in one run.
With `--library`, a second LoCoMo conversation is indexed as a KB library scope and every
search ranks both in one pool (SearchRequest.library_keys): the cost of a merged search.
The first pass warms the query embedding cache of nothing (queries are never cached) and
the OS page cache; only the later passes are timed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

from bench.retrieval.datasets import SHARED, read_jsonl
from indexer.backends.records import ChunkDoc
from indexer.engine import Engine
from indexer.evaluate import build_vault
from indexer.retrieval.search import SearchRequest
from vault.layout.keys import ScopeId

SCOPE = "conv-42"
CACHE = Path(tempfile.gettempdir()) / "memvault-bench-latency-embeddings.sqlite"


def _write_scopes(path: Path, scopes: set[str]) -> None:
    rows = [r for r in read_jsonl(SHARED / "locomo" / "episodes.jsonl") if r["scope"] in scopes]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--library", default="", help="a second LoCoMo scope searched with it")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--per-row", action="store_true", help="one SELECT per candidate")
    args = parser.parse_args()
    questions = [
        str(r["question"])
        for r in read_jsonl(SHARED / "locomo" / "queries.jsonl")
        if r["scope"] == SCOPE
    ]
    with tempfile.TemporaryDirectory(prefix="memvault-latency-") as tmp:
        root = Path(tmp) / "vault"
        source = Path(tmp) / "episodes.jsonl"
        _write_scopes(source, {SCOPE, args.library} - {""})
        episodes = build_vault(root, source)
        with Engine.open(root, cache_path=CACHE) as engine:
            engine.reconcile()
            statements = [0]

            def count(_sql: str) -> None:
                statements[0] += 1

            engine.manifest._db.set_trace_callback(count)
            extra = (ScopeId(None, args.library).index_key,) if args.library else ()
            if args.per_row:
                manifest = engine.manifest

                def per_row(chunk_ids: Iterable[int]) -> dict[int, ChunkDoc]:
                    docs = {cid: manifest.doc(cid) for cid in chunk_ids}
                    return {cid: doc for cid, doc in docs.items() if doc is not None}

                engine.lookup = per_row  # type: ignore[method-assign]
            lat: list[float] = []
            per_query: list[int] = []
            for attempt in range(args.repeat + 1):
                for question in questions:
                    request = SearchRequest(
                        query=question,
                        index_key=ScopeId(None, SCOPE).index_key,
                        top_k=5,
                        library_keys=extra,
                    )
                    before = statements[0]
                    t0 = time.perf_counter()
                    engine.run(request)
                    took = time.perf_counter() - t0
                    if attempt:
                        lat.append(took)
                        per_query.append(statements[0] - before)
    lat.sort()
    print(
        json.dumps(
            {
                "scope": SCOPE,
                "library": args.library or None,
                "lookup": "per-row" if args.per_row else "batched",
                "episodes": episodes,
                "queries": len(questions),
                "timed_searches": len(lat),
                "p50_ms": round(1000 * statistics.median(lat), 2),
                "p95_ms": round(1000 * lat[int(0.95 * (len(lat) - 1))], 2),
                "sql_per_search_median": statistics.median(per_query),
                "sql_per_search_max": max(per_query),
            }
        )
    )


if __name__ == "__main__":
    main()
