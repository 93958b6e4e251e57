"""Retrieval quality: MemVault text / vector / hybrid against plain BM25, one table.

    .venv/bin/python -m bench.retrieval [--datasets locomo,madial-zh,madial-en] [--no-plot]

For each dataset of ../shared/bench (LoCoMo categories 1-4, MADial zh, MADial en) it builds
a throw-away vault (as `memvault eval retrieval` does), searches every query inside its own
scope in each mode, runs BM25 baselines (bm25s) per scope on the same episodes, scores every
run with ../shared/bench/score.py, prints one table and writes bench/results/retrieval.json
(machine, versions, parameters, numbers, timings) and bench/results/retrieval_quality.png.
Embeddings are cached in --cache, so a rerun only pays for indexing and queries.
"""

from __future__ import annotations

import argparse
import logging
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.retrieval.baseline import TOKENIZERS, run_bm25
from bench.retrieval.datasets import datasets
from bench.retrieval.ours import DEFAULT_SYSTEMS, run_systems
from bench.retrieval.report import machine, score, table, write_json
from indexer.backends.text_index import BIGRAM_BOOST
from indexer.retrieval.fusion import (
    CONTEXT_GAIN,
    CONTEXT_VERSION,
    CONTEXT_WINDOW_S,
    RRF_VERSION,
    ZCONF3_VERSION,
    ZCONF_VERSION,
)
from indexer.retrieval.ranking import RANK_VERSION, RankWeights
from indexer.retrieval.search import CANDIDATES, CONTEXT_CANDIDATES
from indexer.retrieval.search_fusion import DEFAULT_WEIGHTS

RESULTS = Path(__file__).resolve().parents[1] / "results" / "retrieval.json"
CACHE = Path.home() / ".cache" / "memvault" / "eval-embeddings.sqlite"
GOALS = {"locomo": {"hit@5": 65.0, "recall@10": 65.0}, "madial-zh": {"recall@5": 62.0}}


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="python -m bench.retrieval", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--datasets", default="locomo,madial-zh,madial-en")
    ap.add_argument("--cache", type=Path, default=CACHE, help="embedding cache kept between runs")
    ap.add_argument("--top-k", type=int, default=50)
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--no-plot", action="store_true")
    return ap.parse_args(argv)


def goals(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for row in results:
        if row["system"] != "memvault-hybrid":
            continue
        for metric, goal in GOALS.get(row["dataset"], {}).items():
            value = row["scores"][metric]
            out.append({"dataset": row["dataset"], "metric": metric, "goal": goal,
                        "value": value, "met": value >= goal})  # fmt: skip
    return out


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    wanted = args.datasets.split(",")
    started = time.perf_counter()
    results: list[dict[str, Any]] = []
    timings: dict[str, Any] = {}
    for ds in (d for d in datasets() if d.name in wanted):
        print(f"[{ds.name}] memvault text/vector/hybrid ...", flush=True)
        runs, timing = run_systems(ds, DEFAULT_SYSTEMS, cache_path=args.cache, top_k=args.top_k)
        timings[ds.name] = {"memvault": timing}
        for name, tokenizer in TOKENIZERS.items():
            print(f"[{ds.name}] {name} ...", flush=True)
            runs[name], timings[ds.name][name] = run_bm25(ds, tokenizer, args.top_k)
        for name, ranked in runs.items():
            results.append({"dataset": ds.name, "system": name, "scores": score(ds, ranked)})
    print()
    print(table(results))
    met = goals(results)
    for g in met:
        verdict = "met" if g["met"] else f"MISSED by {g['goal'] - g['value']:.1f}"
        goal = f"goal {g['dataset']} hybrid {g['metric']} >= {g['goal']:.0f}"
        print(f"{goal}: {g['value']:.1f} {verdict}")
    data = {
        "suite": "retrieval",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "parameters": {
            "datasets": wanted,
            "top_k": args.top_k,
            "candidates": CANDIDATES,
            "fusion": ZCONF3_VERSION,
            "zconf_version": ZCONF_VERSION,
            "rrf_version": RRF_VERSION,
            "rank_version": RANK_VERSION,
            "context": {
                "version": CONTEXT_VERSION,
                "gain": CONTEXT_GAIN,
                "window_s": CONTEXT_WINDOW_S,
                "text_candidates": CONTEXT_CANDIDATES,
            },
            "named_speaker": RankWeights().named_speaker,
            "source_weights": dict(DEFAULT_WEIGHTS),
            "cjk_bigram_boost": BIGRAM_BOOST,
            "time_decay": False,
            "locomo_categories": [1, 2, 3, 4],
            "embedding_cache": str(args.cache),
            "bm25": "bm25s defaults (k1=1.5, b=0.75, Lucene idf), one index per scope; "
            "CJK chars as unigrams+bigrams; bm25-stem = NLTK stop words + Snowball",
        },
        "results": results,
        "goals": met,
        "timings": timings,
        "total_s": time.perf_counter() - started,
    }
    write_json(args.out, data)
    print(f"wrote {args.out} in {data['total_s']:.0f} s")
    if not args.no_plot:
        from bench.retrieval.plot import plot

        print(f"wrote {plot(data, args.out.with_name('retrieval_quality.png'))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
