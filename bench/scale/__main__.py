"""Search and injection latency at scale: synthetic bilingual vaults over 1,000 scopes.

    .venv/bin/python -m bench.scale [--sizes 10000,100000] [--searches 200] [--messages 200]
    .venv/bin/python -m bench.scale --sizes 1000000 --reuse-texts 100000 --estimate "" --merge

Per size N: generates the vault once into ~/.cache/memvault/bench-scale/N/ (reused by
later runs, with its index), indexes it with the embedded model in a child process (build
time, peak RSS, index size on disk), then times hybrid search inside one scope (with and
without query embedding) and bench.inject's injection handler against the FAKE host.
Sizes not run (1M by default) are ESTIMATED from the measured ones, and labelled so.
--reuse-texts M builds sizes above M from the M vault's texts and embedding cache (see
bench.scale.corpus: real model vectors, no re-embedding); --merge keeps the runs of other
sizes already in the output file. A child process that only searches gives the reader's RSS.
Prints a table, writes bench/results/scale.json and bench/results/scale_latency.png.
"""

from __future__ import annotations

import argparse
import json
import logging
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.scale.corpus import ensure, scopes
from bench.scale.index import dir_bytes
from bench.scale.measure import injection_latency, search_latency
from bench.scale.report import estimate, plot, table
from bench.sync.report import load, machine_info, write_json
from vault.layout.layout import STATE_DIR

RESULTS = Path(__file__).resolve().parents[1] / "results"
GOALS = {
    "injection_p95_ms_at_100k": 50.0,
    "search_p95_ms_excl_embedding_at_1m": 20.0,
    "index_rss_mb_at_1m": 1536.0,
}


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m bench.scale", description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="10000,100000", help="comma-separated vault sizes")
    ap.add_argument("--estimate", default="1000000", help="sizes to extrapolate (not run)")
    ap.add_argument("--searches", type=int, default=200, help="timed searches per kind")
    ap.add_argument("--messages", type=int, default=200, help="timed injection messages")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--reuse-texts", type=int, default=None, help="vault size to draw texts from")
    ap.add_argument("--merge", action="store_true", help="keep other sizes' runs in --out")
    ap.add_argument("--note", default="", help="stored with each run measured now")
    ap.add_argument("--out", type=Path, default=RESULTS / "scale.json")
    ap.add_argument("--plot", type=Path, default=RESULTS / "scale_latency.png")
    return ap.parse_args(argv)


def index_vault(root: Path) -> dict[str, Any]:
    """Build (or reuse) the index, in a child process; its record is kept beside the vault."""
    record = root.parent / "build.json"
    if record.exists():
        return json.loads(record.read_text(encoding="utf-8")) | {"reused": True}
    began = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "bench.scale.index", str(root), "--fresh"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    built = json.loads(out.stdout.strip().splitlines()[-1])
    built["build_wall_s"] = round(time.perf_counter() - began, 2)
    built["load_after"] = load()["loadavg"]
    record.write_text(json.dumps(built, indent=2) + "\n", encoding="utf-8")
    return built | {"reused": False}


def search_only(root: Path) -> dict[str, Any]:
    """A reader process (writer=False): its open time and peak RSS."""
    out = subprocess.run(
        [sys.executable, "-m", "bench.scale.index", str(root), "--read-only"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_size(n: int, args: argparse.Namespace) -> dict[str, Any]:
    reuse = args.reuse_texts if args.reuse_texts and n > args.reuse_texts else None
    root, corpus, made = ensure(n, args.seed, reuse)
    print(f"[{n}] vault {'generated' if made else 'reused'}: {corpus}", flush=True)
    built = index_vault(root)
    print(f"[{n}] index {'reused' if built['reused'] else 'built'}: {built}", flush=True)
    others = [s for s, _ in scopes()[1:]]
    loads = {"before_search": load()["loadavg"]}
    search = search_latency(root, args.searches, args.seed, others)
    loads["before_injection"] = load()["loadavg"]
    inject = injection_latency(root, args.messages, args.warmup, args.seed)
    loads["after"] = load()["loadavg"]
    reader = search_only(root)
    print(f"[{n}] search-only process: {reader}", flush=True)
    state = root / STATE_DIR
    disk = {
        "index_mb": round(dir_bytes(state / "index") / 2**20, 1),
        "embedding_cache_mb": round(dir_bytes(state / "cache") / 2**20, 1),
        "vault_markdown_mb": round(dir_bytes(root / "bots") / 2**20, 1),
    }
    return {
        "episodes": n,
        "corpus": corpus,
        "build": built,
        "disk": disk,
        "search": search,
        "injection": inject,
        "search_only_process": reader,
        "loadavg": loads,
        "note": args.note,
    }


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    logging.basicConfig(level=logging.WARNING)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    runs = [run_size(n, args) for n in sizes]
    if args.merge and args.out.exists():
        kept = json.loads(args.out.read_text(encoding="utf-8")).get("runs", [])
        runs = sorted([r for r in kept if r["episodes"] not in sizes] + runs,
                      key=lambda r: r["episodes"])  # fmt: skip
    from indexer.backends.embeddings import default_embedder

    estimated = [estimate(runs, int(n)) for n in args.estimate.split(",") if n]
    data = {
        "benchmark": "scale",
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": machine_info(),
        "load": load(),
        "embedder": default_embedder().identity.key,
        "parameters": {
            "sizes": [r["episodes"] for r in runs],
            "measured_now": sizes,
            "texts": "sizes above reuse_texts_from draw speaker + body of that vault's "
            "episodes (new ids, dates, scopes) and start from its embedding cache: every "
            "vector is the real model vector of a real text, none is re-embedded; exact "
            "vector search costs the same whether or not texts repeat across scopes",
            "reuse_texts_from": args.reuse_texts,
            "scopes": 1000,
            "scope_sizes": "Zipf s=0.8; largest scope = bench.inject's scope",
            "searches": args.searches,
            "messages": args.messages,
            "warmup": args.warmup,
            "seed": args.seed,
            "host": "tests/plugin/fakehost.py (FAKE host: host calls answered at once)",
            "cache": "~/.cache/memvault/bench-scale/<N>/ (vault + its index, reused)",
        },
        "runs": runs,
        "estimates": estimated,
        "goals": GOALS,
    }
    write_json(args.out, data)
    print(table(data, GOALS))
    print(f"wrote {args.out}")
    if plot(data, args.plot):
        print(f"wrote {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
