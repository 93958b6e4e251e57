"""One standalone index process at scale, SYNTHETIC vectors (run as a child: its RSS is its own).

    python -m bench.memory.scale_proc VAULT build      # cold build: index folder deleted first
    python -m bench.memory.scale_proc VAULT search     # a search-only process (writer=False)
    python -m bench.memory.scale_proc VAULT restart    # writer open + reconcile, no changes

Vectors: bench.memory.synthetic (the embedding cache is kept apart, in a temp file, so the
vault's own cache is untouched). The real model is loaded and embeds one text in every mode,
so its weights count as in a real process. `--drop-caches` first writes 3 to
/proc/sys/vm/drop_caches (page cache, dentries and inodes: a cold start; needs root).
RSS after each phase (bench.memory.probe) and the peak (VmHWM). Prints one JSON record.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.memory.probe import Phases


def drop_caches() -> str:
    os.sync()
    try:
        with open("/proc/sys/vm/drop_caches", "w", encoding="ascii") as f:
            f.write("3\n")
    except OSError as exc:
        return f"not dropped ({exc})"
    return "dropped (echo 3 > /proc/sys/vm/drop_caches)"


def searches(engine: Any, count: int) -> dict[str, float]:
    from bench.inject.__main__ import BOT, SESSION, questions
    from indexer.retrieval.search_query import SearchQuery
    from vault.layout.keys import ScopeId

    scope, times = ScopeId(BOT, SESSION), []
    for text in questions(random.Random(11), count + 10):
        began = time.perf_counter()
        engine.search(SearchQuery(text, scope, top_k=5, speaker_id="u1"))
        times.append((time.perf_counter() - began) * 1000)
    times = sorted(times[10:])
    return {
        "n": len(times),
        "p50_ms": round(times[len(times) // 2], 2),
        "p95_ms": round(times[int(len(times) * 0.95)], 2),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.memory.scale_proc")
    ap.add_argument("vault", type=Path)
    ap.add_argument("mode", choices=("build", "search", "restart"))
    ap.add_argument("--searches", type=int, default=200)
    ap.add_argument("--cache", type=Path, default=None, help="embedding cache (default: temp)")
    ap.add_argument("--drop-caches", action="store_true")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    record: dict[str, Any] = {"mode": args.mode, "vault": str(args.vault)}
    if args.drop_caches:
        record["page_cache"] = drop_caches()
    phases = Phases()
    phases.mark("python started")
    from bench.memory.synthetic import SyntheticEmbedder
    from indexer.backends.embeddings import default_embedder
    from indexer.engine import Engine
    from indexer.sync.manifest import index_dir

    phases.mark("imports")
    default_embedder().embed_query("the model's weights are resident, as in a real process")
    phases.mark("real model loaded (not used for vectors)")
    tmp = Path(tempfile.mkdtemp(prefix="memvault-scale-"))
    cache = args.cache or tmp / "embeddings.sqlite"
    if args.mode == "build":
        shutil.rmtree(index_dir(args.vault), ignore_errors=True)
    began = time.perf_counter()
    writer = args.mode != "search"
    try:
        engine = Engine.open(args.vault, embedder=SyntheticEmbedder(), writer=writer,
                             cache_path=cache)  # fmt: skip
        opened = time.perf_counter()
        phases.mark("engine open")
        if writer:
            report = engine.reconcile()
            record["files"], record["added"] = report.files, report.added
        reconciled = time.perf_counter()
        phases.mark("reconcile" if writer else "no reconcile (reader)")
        record["search"] = searches(engine, args.searches)
        phases.mark(f"{args.searches} searches in the largest scope")
        engine.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    record.update(
        open_s=round(opened - began, 2),
        reconcile_s=round(reconciled - opened, 2),
        restart_s=round(reconciled - began, 2),
        peak_rss_mb=phases.rows[-1]["peak_mb"],
        phases=phases.rows,
    )
    print(json.dumps(record))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
