"""Index one vault in THIS process and print a JSON record (run as a child process so its
peak RSS is the indexing process's own):

    python -m bench.scale.index VAULT [--cache-path FILE] [--fresh]
    python -m bench.scale.index VAULT --read-only [--searches 50]

--fresh deletes the index folder first (a cold build); --cache-path points the embedding
cache elsewhere (an empty file = embedding included; a filled one = embedding excluded).
The build embeds one query at the end, so the model is resident even when every text came
from the cache (a real indexer holds it). --read-only opens the indexes as a reader only
(what a search-only process costs) and runs searches in the largest scope.
"""

from __future__ import annotations

import argparse
import json
import logging
import resource
import shutil
import time
from pathlib import Path

from indexer.retrieval.search_query import SearchQuery


def dir_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.exists() else 0


def peak_rss_mb() -> float:
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss across exec, so a child started by a
    # parent holding a loaded 1M index reported the parent's 2.6-3.8 GB as its own peak.
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def read_only(vault: Path, searches: int) -> dict[str, object]:
    """Peak RSS and open time of a process that only searches (writer=False)."""
    import random

    from bench.inject.__main__ import BOT, SESSION, questions
    from indexer.engine import Engine
    from vault.layout.keys import ScopeId

    began = time.perf_counter()
    with Engine.open(vault, writer=False) as engine:
        opened = time.perf_counter()
        for text in questions(random.Random(11), searches):
            engine.search(SearchQuery(text, ScopeId(BOT, SESSION), top_k=5, speaker_id="u1"))
        searched = time.perf_counter()
    return {
        "open_s": round(opened - began, 2),
        "searches": searches,
        "search_mean_ms": round((searched - opened) * 1000 / max(1, searches), 2),
        "peak_rss_mb": peak_rss_mb(),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.scale.index")
    ap.add_argument("vault", type=Path)
    ap.add_argument("--cache-path", type=Path, default=None)
    ap.add_argument("--fresh", action="store_true")
    ap.add_argument("--read-only", action="store_true")
    ap.add_argument("--searches", type=int, default=50)
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    if args.read_only:
        print(json.dumps(read_only(args.vault, args.searches)))
        return 0
    began = time.perf_counter()
    from indexer.engine import Engine
    from indexer.sync.manifest import index_dir

    imported = time.perf_counter()
    folder = index_dir(args.vault)
    if args.fresh:
        shutil.rmtree(folder, ignore_errors=True)
    with Engine.open(args.vault, cache_path=args.cache_path) as engine:
        opened = time.perf_counter()
        report = engine.reconcile()
        done = time.perf_counter()
        misses = engine.embedder.misses
        engine.embedder.embed_query("the model stays loaded, as in a real indexer")
        identity = engine.embedder.identity.key
    closed = time.perf_counter()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    record = {
        "vault": str(args.vault),
        "embedder": identity,
        "import_s": round(imported - began, 3),
        "open_s": round(opened - imported, 3),
        "reconcile_s": round(done - opened, 3),
        "close_s": round(closed - done, 3),
        "files": report.files,
        "added": report.added,
        "unchanged": report.unchanged,
        "chunks_upserted": report.upserted,
        "embedded_texts": misses,
        "errors": len(report.errors),
        "peak_rss_mb": peak_rss_mb(),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
        "index_bytes": dir_bytes(folder),
    }
    print(json.dumps(record))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
