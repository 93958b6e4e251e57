"""Index build throughput, warm restart, and a rebuild after a provider change.

    .venv/bin/python -m bench.build [--size 10000] [--restart-size 100000] [--repeats 3]

Uses bench.scale's cached synthetic vaults (~/.cache/memvault/bench-scale/N/, generated
if missing). Every step runs in a child process (bench.scale.index / bench.build.provider):
  cold build    a copy of the N-episode vault without its index, an EMPTY embedding cache:
                episodes/s with embedding included;
  warm cache    the same copy, index deleted, the now-filled cache: embedding excluded;
  restart       Engine.open + reconcile with no changes on the restart-size vault (its
                index built by bench.scale, or here if missing); goal < 3 s at 100k;
  provider      the copy reopened with the same model under another identity
                (RenamedModel): time until the background rebuild swaps the vectors.
Prints a table and writes bench/results/build.json.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.scale.__main__ import index_vault
from bench.scale.corpus import ensure
from bench.sync.report import load, machine_info, write_json
from vault.layout.layout import STATE_DIR

RESULTS = Path(__file__).resolve().parents[1] / "results" / "build.json"
GOAL_RESTART_S = 3.0


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m bench.build", description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=10_000, help="vault for build + provider steps")
    ap.add_argument("--restart-size", type=int, default=100_000, help="vault for warm restart")
    ap.add_argument("--repeats", type=int, default=3, help="warm restarts")
    ap.add_argument("--out", type=Path, default=RESULTS)
    return ap.parse_args(argv)


def child(module: str, *args: str) -> dict[str, Any]:
    began = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"{module} {args} failed:\n{out.stderr[-4000:]}")
    record = json.loads(out.stdout.strip().splitlines()[-1])
    record["process_wall_s"] = round(time.perf_counter() - began, 2)
    record["loadavg"] = load()["loadavg"]
    return record


def throughput(record: dict[str, Any]) -> float:
    return round(record["files"] / (record["open_s"] + record["reconcile_s"]), 1)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    source, corpus, _ = ensure(args.size)
    work = Path(tempfile.mkdtemp(prefix="memvault-bench-build-"))
    try:
        root = work / "vault"
        shutil.copytree(source, root, ignore=shutil.ignore_patterns(STATE_DIR))
        cache = str(work / "embeddings.sqlite")
        print(f"cold build of {args.size} episodes (empty embedding cache) ...", flush=True)
        cold = child("bench.scale.index", str(root), "--cache-path", cache)
        print(f"warm-cache build of {args.size} episodes ...", flush=True)
        warm = child("bench.scale.index", str(root), "--cache-path", cache, "--fresh")
        print("provider change rebuild ...", flush=True)
        provider = child("bench.build.provider", str(root))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    big, big_corpus, _ = ensure(args.restart_size)
    index_vault(big)  # builds it only if bench.scale has not
    restarts = []
    for i in range(args.repeats):
        print(f"warm restart {i + 1}/{args.repeats} on {args.restart_size} ...", flush=True)
        restarts.append(child("bench.scale.index", str(big)))
    best = min(r["open_s"] + r["reconcile_s"] for r in restarts)
    worst = max(r["open_s"] + r["reconcile_s"] for r in restarts)
    from indexer.backends.embeddings import default_embedder

    data = {
        "benchmark": "build",
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": machine_info(),
        "load": load(),
        "embedder": default_embedder().identity.key,
        "parameters": {"size": args.size, "restart_size": args.restart_size,
                       "repeats": args.repeats, "corpus": corpus, "restart_corpus": big_corpus},
        "cold_build": cold | {"episodes_per_s": throughput(cold)},
        "warm_cache_build": warm | {"episodes_per_s": throughput(warm)},
        "restart": {"runs": restarts, "open_plus_reconcile_s_min": round(best, 2),
                    "open_plus_reconcile_s_max": round(worst, 2)},
        "provider_change": provider,
        "goal_restart_s": GOAL_RESTART_S,
        "restart_pass": worst < GOAL_RESTART_S,
    }  # fmt: skip
    write_json(args.out, data)
    print(table(data))
    print(f"wrote {args.out}")
    return 0


def table(data: dict[str, Any]) -> str:
    p, cold, warm = data["parameters"], data["cold_build"], data["warm_cache_build"]
    rs, pc = data["restart"], data["provider_change"]
    lines = [
        f"MemVault build and restart, embedder {data['embedder']}",
        f"{'step':<44} {'episodes':>9} {'seconds':>8} {'eps/s':>7} {'RSS MB':>7} {'load':>5}",
    ]
    for name, r in (("cold build, embedding included", cold),
                    ("build, embedding cache warm (excluded)", warm)):  # fmt: skip
        lines.append(
            f"{name:<44} {r['files']:>9} {r['open_s'] + r['reconcile_s']:>8.1f} "
            f"{r['episodes_per_s']:>7} {r['peak_rss_mb']:>7} {r['loadavg'][0]:>5.2f}"
        )
    for i, r in enumerate(rs["runs"], start=1):
        lines.append(
            f"{f'warm restart {i}, no changes (open+reconcile)':<44} {r['files']:>9} "
            f"{r['open_s'] + r['reconcile_s']:>8.2f} {'':>7} {r['peak_rss_mb']:>7} "
            f"{r['loadavg'][0]:>5.2f}"
        )
    lines.append(
        f"{'provider change: open -> rebuild swapped':<44} {pc['chunks']:>9} "
        f"{pc['rebuild_to_swap_s']:>8.1f} {pc['chunks_per_s']:>7} {pc['peak_rss_mb']:>7} "
        f"{pc['loadavg'][0]:>5.2f}"
    )
    verdict = "met" if data["restart_pass"] else "MISSED"
    lines.append(
        f"goal warm restart < {data['goal_restart_s']:g} s at {p['restart_size']:,}: worst "
        f"{rs['open_plus_reconcile_s_max']} s -> {verdict}; cold build embedded "
        f"{cold['embedded_texts']} texts; provider change: {pc['new_provider']}, "
        f"{pc['searches_during_rebuild']} searches while rebuilding "
        f"(p50 {pc['search_during_rebuild_p50_ms']} ms), error {pc['error']}"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
