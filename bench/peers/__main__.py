"""Side by side: MemVault hybrid against plain BM25 (bm25s) and a file-first peer
(basic-memory, keyword/FTS mode), same data, same run, same scorer.

    .venv/bin/python -m bench.peers [--datasets locomo,madial-zh] [--bm-python PATH]

For LoCoMo (categories 1-4) and MADial zh (bench.retrieval.datasets) it measures index build
time, per-query search latency (p50/p95, one query at a time inside its scope) and hit@5 (scored
by ../shared/bench/score.py) for each system, and ratios ours/theirs. MemVault's build is timed
twice: cold (fresh embedding cache: embedding included) and warm (the persistent cache of
bench.retrieval: files + text and vector indexes, no embedding). basic-memory needs Python >= 3.12
and runs from its own venv (--bm-python; install: python3.12 -m venv V && V/bin/pip install
basic-memory==0.24.1). Writes bench/results/peers.json and prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.peers.ours import run_bm25s, run_memvault
from bench.retrieval.__main__ import CACHE
from bench.retrieval.datasets import datasets, queries
from bench.retrieval.report import machine, score, write_json

RESULTS = Path(__file__).resolve().parents[1] / "results" / "peers.json"
DRIVER = Path(__file__).with_name("basic_memory_driver.py")
BM_PYTHON = Path("/tmp/bmvenv2/bin/python")


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return 1000 * values[min(len(values) - 1, round(q * (len(values) - 1)))]


def summary(timing: dict[str, Any]) -> dict[str, Any]:
    lat = timing.pop("latencies_s", [])
    timing["search_ms_p50"] = pct(lat, 0.50)
    timing["search_ms_p95"] = pct(lat, 0.95)
    timing["search_ms_mean"] = 1000 * statistics.fmean(lat) if lat else float("nan")
    return timing


def run_basic_memory(
    ds: Any, bm_python: Path
) -> tuple[dict[str, list[str]] | None, dict[str, Any]]:
    if not bm_python.exists():
        return None, {"error": f"{bm_python} not found (basic-memory needs Python >= 3.12 venv)"}
    with tempfile.TemporaryDirectory(prefix="memvault-peers-bm-") as tmp:
        out = Path(tmp) / "out.json"
        env = dict(os.environ, PEERS_QUERY_IDS=json.dumps([q["query_id"] for q in queries(ds)]))
        t0 = time.perf_counter()
        res = subprocess.run([str(bm_python), str(DRIVER), str(ds.episodes), str(ds.queries),
                              str(Path(tmp) / "work"), str(out)],
                             capture_output=True, text=True, env=env)  # fmt: skip
        wall = time.perf_counter() - t0
        if res.returncode != 0 or not out.exists():
            return None, {"error": f"rc={res.returncode}: {res.stderr[-800:]}"}
        data = json.loads(out.read_text(encoding="utf-8"))
    ranked = data.pop("ranked")
    data["process_wall_s"] = wall
    return ranked, data


def ratio(a: float, b: float) -> float | None:
    return round(a / b, 3) if b and b == b and a == a else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.peers", description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", default="locomo,madial-zh")
    ap.add_argument("--cache", type=Path, default=CACHE, help="persistent embedding cache")
    ap.add_argument(
        "--bm-python", type=Path, default=BM_PYTHON, help="python of a basic-memory venv"
    )
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    wanted = args.datasets.split(",")
    started = time.perf_counter()
    rows: list[dict[str, Any]] = []
    not_run: list[dict[str, str]] = []
    for ds in (d for d in datasets() if d.name in wanted):
        systems: dict[str, tuple[dict[str, list[str]] | None, dict[str, Any]]] = {}
        print(f"[{ds.name}] memvault hybrid (cold + warm build, search) ...", flush=True)
        systems["memvault-hybrid"] = run_memvault(ds, args.cache)
        print(f"[{ds.name}] bm25s ...", flush=True)
        systems["bm25s-stem"] = run_bm25s(ds, "bm25-stem")
        systems["bm25s-plain"] = run_bm25s(ds, "bm25-plain")
        print(f"[{ds.name}] basic-memory (FTS) ...", flush=True)
        systems["basic-memory-fts"] = run_basic_memory(ds, args.bm_python)
        for name, (ranked, timing) in systems.items():
            if ranked is None:
                not_run.append({"dataset": ds.name, "system": name, "why": timing.get("error", "")})
                continue
            sc = score(ds, ranked)
            rows.append(
                {"dataset": ds.name, "system": name, "scores": sc, "timing": summary(timing)}
            )
    by = {(r["dataset"], r["system"]): r for r in rows}
    for r in rows:
        ours = by.get((r["dataset"], "memvault-hybrid"))
        if ours is None or r["system"] == "memvault-hybrid":
            continue
        t, o = r["timing"], ours["timing"]
        r["ratios_ours_over_theirs"] = {
            "build_warm": ratio(o["build_s"], t["build_s"]),
            "build_cold": ratio(o["cold_build_s"], t["build_s"]),
            "search_p50": ratio(o["search_ms_p50"], t["search_ms_p50"]),
            "search_p95": ratio(o["search_ms_p95"], t["search_ms_p95"]),
            "hit@5": ratio(ours["scores"]["hit@5"], r["scores"]["hit@5"]),
        }
    head = (f"{'dataset':<10} {'system':<17} {'n':>5} {'hit@5':>6} {'build s':>8} {'cold s':>7} "
            f"{'p50 ms':>7} {'p95 ms':>7} | ours/theirs: {'build':>6} {'cold':>6} {'p50':>6} {'p95':>6} {'hit@5':>6}")  # fmt: skip  # noqa: E501
    lines = [head, "-" * len(head)]
    for r in rows:
        t, s, q = r["timing"], r["scores"], r.get("ratios_ours_over_theirs")
        cold = f"{t['cold_build_s']:>7.2f}" if "cold_build_s" in t else f"{'':>7}"
        rat = (
            " ".join(f"{'inf' if v is None else format(v, '.2f'):>6}" for v in q.values())
            if q
            else ""
        )
        lines.append(f"{r['dataset']:<10} {r['system']:<17} {s['n']:>5} {s['hit@5']:>6.1f} {t['build_s']:>8.2f} "  # noqa: E501
                     f"{cold} {t['search_ms_p50']:>7.2f} {t['search_ms_p95']:>7.2f} | {'':>12} {rat}")  # fmt: skip  # noqa: E501
    print()
    print("\n".join(lines))
    for n in not_run:
        print(f"NOT RUN {n['dataset']} {n['system']}: {n['why']}")
    data = {
        "suite": "peers",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "parameters": {
            "datasets": wanted,
            "locomo_categories": [1, 2, 3, 4],
            "top_k": 50,
            "memvault": "hybrid (default fusion), "
            "indexer.evaluate.build_vault + Engine.reconcile; "
            "build_s = warm (persistent embedding cache), cold_build_s = fresh cache",
            "embedding_cache": str(args.cache),
            "bm25s": "bench.retrieval.baseline tokenizers, bm25s defaults, one index per scope",
            "basic_memory": "0.24.1, semantic search disabled (FTS5 keyword), one project per scope, "  # noqa: E501
            "search_type=text, page_size=50, in-process search_notes tool; build = "
            "write notes + `project add` (which indexes)",
            "latency": "per query, one at a time, wall clock, query embedding included for MemVault",  # noqa: E501
        },  # fmt: skip
        "results": rows,
        "not_run": not_run,
        "total_s": time.perf_counter() - started,
    }
    write_json(args.out, data)
    print(f"wrote {args.out} in {data['total_s']:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
