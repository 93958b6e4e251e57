"""Write -> searchable latency of the running watcher on a vault of N episodes.

    .venv/bin/python -m bench.sync [--episodes 10000] [--samples 100] [--waves 3]

Builds a git vault of N generated bilingual episodes, indexes it by starting the watcher
(Engine.open + engine.watch(), in this process: how the LangBot plugin runs it, and
searches go through the same engine), then per change kind makes real file changes and
polls Engine.search in the file's scope every 10 ms until the change shows. Prints a table
and writes bench/results/sync.json (machine, parameters, every latency).
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench.sync.corpus import build_vault, episode_files
from bench.sync.kinds import ChangeKinds
from bench.sync.probe import Probe
from bench.sync.report import load, machine_info, table, write_json
from indexer.engine import Engine

RESULTS = Path(__file__).resolve().parents[1] / "results" / "sync.json"


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m bench.sync", description=__doc__.split("\n")[0])
    ap.add_argument("--episodes", type=int, default=10_000, help="vault size (default 10000)")
    ap.add_argument("--samples", type=int, default=100, help="samples per single-file kind")
    ap.add_argument("--checkout-files", type=int, default=1000, help="files per git checkout")
    ap.add_argument("--waves", type=int, default=3, help="git checkout samples (each way)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--dir", type=Path, default=None, help="build the vault here (kept)")
    ap.add_argument("--out", type=Path, default=RESULTS)
    return ap.parse_args(argv)


class OverflowCounter(logging.Handler):
    """Counts inotify queue overflows (watchdog logs them; events were lost each time)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "queue overflowed; filesystem events were lost" in record.getMessage():
            self.count += 1


OVERFLOWS = OverflowCounter()


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def watch_process_ready(root: Path) -> float:
    """Seconds from starting `memvault watch` until it says it watches (imports, model
    load, reconcile of an indexed vault); then SIGTERM and wait for a clean exit."""
    script = Path(sys.executable).parent / "memvault"
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "memvault_cli"]
    started = time.perf_counter()
    proc = subprocess.Popen(
        [*cmd, "watch", "--vault", str(root)], stderr=subprocess.PIPE, text=True
    )
    assert proc.stderr is not None
    try:
        for line in proc.stderr:
            if line.startswith("watching "):
                return time.perf_counter() - started
        raise RuntimeError(f"memvault watch exited ({proc.wait()}) before watching")
    finally:
        proc.terminate()
        proc.wait(60)


def start(root: Path) -> tuple[Engine, float, float, dict[str, Any]]:
    """(engine with a ready watcher, Engine.open seconds, seconds to ready, sync report)."""
    began = time.perf_counter()
    engine = Engine.open(root)
    opened = time.perf_counter()
    watcher = engine.watch()
    if not watcher.ready.wait(3600):
        raise TimeoutError("the watcher's start-up reconcile did not finish in an hour")
    report = asdict(watcher.last_report) if watcher.last_report else {}
    report.pop("errors", None)
    report.pop("paths", None)  # every file of a 10k-file vault: counts are the result here
    return engine, opened - began, time.perf_counter() - opened, report


def run(args: argparse.Namespace, root: Path) -> dict[str, Any]:
    rng = random.Random(args.seed)
    loads = {"before": load()}
    wall, cpu = time.perf_counter(), cpu_s()
    print(f"building a vault of {args.episodes} episodes in {root} ...", file=sys.stderr)
    built = build_vault(root, args.episodes, args.seed)

    print("initial full index (watcher start-up on an unindexed vault) ...", file=sys.stderr)
    engine, first_open, initial, initial_report = start(root)
    engine.close()
    loads["after_initial_index"] = load()
    overflows = {"initial_index": OVERFLOWS.count}
    print("`memvault watch` process start-up on the indexed vault ...", file=sys.stderr)
    process_ready = watch_process_ready(root)
    engine, reopen, reconcile, reconcile_report = start(root)
    startup = {
        "episodes": args.episodes,
        "files": len(episode_files(root)),
        "vault_build": built,
        "first_open_s": round(first_open, 2),
        "initial_index_s": round(initial, 2),
        "initial_report": initial_report,
        "watch_process_ready_s": round(process_ready, 2),
        "reopen_s": round(reopen, 3),
        "reconcile_s": round(reconcile, 3),
        "reconcile_report": reconcile_report,
    }
    overflows["reconcile"] = OVERFLOWS.count - overflows["initial_index"]
    assert engine.watcher is not None
    probe = Probe(engine, engine.watcher)
    kinds = ChangeKinds(root, probe, rng)
    n = args.samples
    try:
        print(f"measuring: {n} samples per single-file kind ...", file=sys.stderr)
        results = [kinds.hand_edit(n), kinds.new_file(n)]
        marked = kinds.mark(2 * n)
        results += [kinds.delete(marked[:n]), kinds.rename(marked[n:])]
        results.append(kinds.git_revert(n))
        files = min(args.checkout_files, args.episodes // 2)
        print(f"measuring: {args.waves} git checkouts of {files} files ...", file=sys.stderr)
        results += kinds.git_checkout(args.waves, files)
        watcher = {"batches": engine.watcher.batches, "failures": engine.watcher.failures}
        watcher |= {"quiet_s": engine.watcher.quiet_s, "max_delay_s": engine.watcher.max_delay_s}
    finally:
        engine.close()
    loads["after"] = load()
    overflows["measuring"] = OVERFLOWS.count - sum(overflows.values())
    return {
        "benchmark": "sync: write -> searchable latency of the vault watcher",
        "command": " ".join(["python -m bench.sync", *sys.argv[1:]]),
        "watcher_mode": "in-process (Engine.open + engine.watch(); searches on that engine)",
        "machine": machine_info(),
        "parameters": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}
        | {"checkout_files": files, "top_k": 10, "search_mode": "text (see probe.MODE), no decay"},
        "startup": startup,
        "kinds": [s.summary() for s in results],
        "search_probe": probe.search_summary(),
        "watcher": watcher | {"inotify_overflows": overflows},
        "noise": {
            "loads": loads,
            "cpus": os.cpu_count(),
            "wall_s": round(time.perf_counter() - wall, 1),
            "process_cpu_s": round(cpu_s() - cpu, 1),
        },  # fmt: skip
    }


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s %(message)s")
    logging.getLogger("watchdog").addHandler(OVERFLOWS)
    keep = args.dir is not None
    base = args.dir or Path(tempfile.mkdtemp(prefix="memvault-bench-"))
    root = base / "vault"
    if root.exists():
        print(f"{root} exists: pass an empty --dir", file=sys.stderr)
        return 2
    try:
        data = run(args, root)
    finally:
        if not keep:
            shutil.rmtree(base, ignore_errors=True)
    write_json(args.out, data)
    print(table(data))
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
