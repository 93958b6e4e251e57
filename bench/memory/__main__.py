"""Memory (RSS) of the plugin process and of standalone index processes, before and after.

    .venv/bin/python -m bench.memory [--plugin-vault DIR] [--scale-vault DIR]
        [--code LABEL=ROOT ...] [--modes build,search,restart] [--turns 200] [--drop-caches]
        [--quality FILE=LABEL ...] [--out FILE]

Each --code ROOT is a checkout whose vault/indexer/console packages the child processes
import (PYTHONPATH=ROOT; default: this checkout, labelled "after"; give LABEL=ROOT to name
one, e.g. before=/tmp/before). Per code root:
  plugin   bench.memory.plugin_proc on --plugin-vault (a 10,000-memory chat, e.g. the one
           bench.host_turns_corpus.seed_chat writes), RSS after start and after --turns;
  scale    bench.memory.scale_proc on --scale-vault (bench.scale's synthetic vaults, with
           SYNTHETIC vectors): a cold build (indexing peak), a search-only process (its peak,
           search p50/p95 in the largest scope) and a writer restart with no changes
           (open + reconcile; --drop-caches: with the page cache dropped first).
--quality FILE=LABEL adds hit@5 per dataset from bench.retrieval output files (e.g. one run
of each code root) to the record. Prints a table; writes bench/results/memory.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.memory.report import quality, table
from bench.sync.report import load, machine_info, write_json

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "bench" / "results" / "memory.json"
GOALS = {
    "plugin_rss_mb_at_10k": 250.0,
    "index_rss_mb_at_1m": 1536.0,
    "search_only_rss_mb_at_1m": 1024.0,
    "search_p95_ms_largest_scope_at_1m": 20.0,
    "restart_s_at_100k_cold_cache": 3.0,
    "hit_at_5_drop_points": 0.3,
}


def child(root: Path, module: str, *args: str) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(root))
    out = subprocess.run(
        [sys.executable, "-m", module, *args], capture_output=True, text=True, env=env, cwd=root
    )
    if out.returncode:
        raise RuntimeError(f"{module} {args} failed:\n{out.stderr[-3000:]}")
    record = json.loads(out.stdout.strip().splitlines()[-1])
    record["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    return record


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m bench.memory", description=__doc__.split("\n")[0])
    ap.add_argument("--plugin-vault", type=Path, default=None)
    ap.add_argument("--scale-vault", type=Path, default=None)
    ap.add_argument("--code", action="append", default=[], help="LABEL=ROOT (repeatable)")
    ap.add_argument("--modes", default="build,search,restart", help="scale modes to run")
    ap.add_argument("--turns", type=int, default=200)
    ap.add_argument("--drop-caches", action="store_true")
    ap.add_argument("--quality", action="append", default=[], help="FILE=LABEL (repeatable)")
    ap.add_argument("--out", type=Path, default=RESULTS)
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    codes = dict(c.split("=", 1) for c in args.code) or {"after": str(REPO)}
    runs: dict[str, Any] = {}
    for label, root in codes.items():
        run: dict[str, Any] = {"code_root": root}
        code = Path(root)
        if args.plugin_vault:
            print(f"[{label}] plugin process on {args.plugin_vault} ...", flush=True)
            vault = str(args.plugin_vault)
            turns = str(args.turns)
            run["plugin"] = child(code, "bench.memory.plugin_proc", vault, "--turns", turns)
        if args.scale_vault:
            vault = str(args.scale_vault)
            for mode in args.modes.split(","):
                print(f"[{label}] {mode} on {vault} ...", flush=True)
                extra = ["--drop-caches"] if args.drop_caches and mode == "restart" else []
                run[mode] = child(code, "bench.memory.scale_proc", vault, mode, *extra)
        runs[label] = run
    data = {
        "benchmark": "memory",
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": machine_info(),
        "load": load(),
        "parameters": {
            "plugin_vault": str(args.plugin_vault),
            "scale_vault": str(args.scale_vault),
            "turns": args.turns,
            "vectors_at_scale": "SYNTHETIC (bench.memory.synthetic); the real model is loaded",
            "page_cache_for_restart": "dropped" if args.drop_caches else "as left",
        },
        "runs": runs,
        "quality": quality(args.quality),
        "goals": GOALS,
    }
    write_json(args.out, data)
    print(table(data))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
