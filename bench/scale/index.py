"""Index one vault in THIS process and print a JSON record (run as a child process so its
peak RSS is the indexing process's own):

    python -m bench.scale.index VAULT [--cache-path FILE] [--fresh]

--fresh deletes the index folder first (a cold build); --cache-path points the embedding
cache elsewhere (an empty file = embedding included; a filled one = embedding excluded).
"""

from __future__ import annotations

import argparse
import json
import logging
import resource
import shutil
import time
from pathlib import Path


def dir_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.exists() else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.scale.index")
    ap.add_argument("vault", type=Path)
    ap.add_argument("--cache-path", type=Path, default=None)
    ap.add_argument("--fresh", action="store_true")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    began = time.perf_counter()
    from indexer.engine import Engine
    from indexer.manifest import index_dir

    imported = time.perf_counter()
    folder = index_dir(args.vault)
    if args.fresh:
        shutil.rmtree(folder, ignore_errors=True)
    with Engine.open(args.vault, cache_path=args.cache_path) as engine:
        opened = time.perf_counter()
        report = engine.reconcile()
        done = time.perf_counter()
        misses = engine.embedder.misses
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
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
        "index_bytes": dir_bytes(folder),
    }
    print(json.dumps(record))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
