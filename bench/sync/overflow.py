"""Time to fully indexed after N files land in one folder at once (inotify queue overflow).

    .venv/bin/python -m bench.sync.overflow [--files 100000] [--label after]

Builds an empty vault, starts the watcher in this process (Engine.open + engine.watch(), as
the plugin runs it), stages N generated episodes outside the vault, then copies them into
one watched episodes folder with one `cp` (a person dropping an export in). So many events
overflow the kernel's inotify queue (fs.inotify.max_queued_events): events are lost and only
a reconcile can find the rest. Polls the manifest every second until it holds all N files
and records the progress timeline, so a stall (waiting for the periodic resync) shows as a
plateau. Writes the run under its --label into bench/results/overflow.json, keeping the
other labels (the "before" run of the old code stays next to the "after" run).
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.sync.corpus import make_episode
from bench.sync.report import load, machine_info, write_json
from indexer.engine import Engine
from indexer.sync.watcher import RESYNC_S
from vault.format.episodes import render_episode
from vault.layout.keys import ScopeId
from vault.layout.layout import Layout
from vault.layout.names import encode_name
from vault.writes.create import init_vault

RESULTS = Path(__file__).resolve().parents[1] / "results" / "overflow.json"
QUEUE = Path("/proc/sys/fs/inotify/max_queued_events")
SCOPE = ScopeId("bot-1", "group_1000")


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="python -m bench.sync.overflow", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--files", type=int, default=100_000, help="files copied at once")
    ap.add_argument("--label", default="after", help="key of this run in the results file")
    ap.add_argument("--timeout", type=float, default=3600.0, help="give up after (s)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", type=Path, default=RESULTS)
    return ap.parse_args(argv)


class LogCounter(logging.Handler):
    """Counts log records containing `needle` (watchdog's overflow warning, ours)."""

    def __init__(self, needle: str) -> None:
        super().__init__(logging.DEBUG)
        self.needle = needle
        self.times: list[float] = []

    def emit(self, record: logging.LogRecord) -> None:
        if self.needle in record.getMessage():
            self.times.append(time.perf_counter())


def stage(folder: Path, files: int, seed: int) -> float:
    """Write `files` episodes into `folder` (outside the vault); returns seconds."""
    started = time.perf_counter()
    rng = random.Random(seed)
    folder.mkdir(parents=True)
    base = datetime(2026, 1, 1, tzinfo=UTC)
    for i in range(files):
        ep = make_episode(rng, base + timedelta(seconds=i))
        name = f"{encode_name(f'{ep.id}_{i}', 'episode id')}.md"
        (folder / name).write_text(render_episode(ep), encoding="utf-8")
    return time.perf_counter() - started


def longest_stall(timeline: list[tuple[float, int]], total: int) -> float:
    """Longest time the indexed count did not move while files were still missing."""
    worst, since, last = 0.0, None, -1
    for t, n in timeline:
        if n != last or n >= total:
            since, last = t, n
        elif since is not None:
            worst = max(worst, t - since)
    return worst


def run(args: argparse.Namespace, base: Path) -> dict[str, Any]:
    root, staged = base / "vault", base / "staged"
    loads = {"before": load()}
    init_vault(root, git=False)
    folder = Layout(root).episodes_dir(SCOPE) / "2026" / "01"
    folder.mkdir(parents=True)
    rel = folder.relative_to(root).as_posix()
    print(f"staging {args.files} episodes ...", file=sys.stderr)
    stage_s = stage(staged, args.files, args.seed)

    overflows = LogCounter("queue overflowed; filesystem events were lost")
    lost = LogCounter("event=watch_overflow")
    logging.getLogger("watchdog").addHandler(overflows)
    logging.getLogger("indexer.sync.watcher").addHandler(lost)
    logging.getLogger("indexer.sync.watcher").setLevel(logging.INFO)
    engine = Engine.open(root)
    try:
        watcher = engine.watch()
        if not watcher.ready.wait(600):
            raise TimeoutError("the start-up reconcile of an empty vault took over 600 s")
        loads["at_copy"] = load()
        print(f"copying {args.files} files into {rel} at once ...", file=sys.stderr)
        t0 = time.perf_counter()
        copy = subprocess.Popen(["cp", "-r", f"{staged}/.", str(folder)])
        copied_s: float | None = None
        timeline: list[tuple[float, int]] = []
        indexed = 0
        while indexed < args.files:
            time.sleep(1.0)
            now = time.perf_counter() - t0
            if copied_s is None and copy.poll() is not None:
                copied_s = now
            indexed = len(engine.manifest.known([rel]))
            timeline.append((round(now, 1), indexed))
            if len(timeline) % 15 == 0:
                print(f"  {now:6.0f} s: {indexed} indexed", file=sys.stderr)
            if now > args.timeout:
                break
        full_s = time.perf_counter() - t0 if indexed >= args.files else None
        if copy.wait() != 0:
            raise RuntimeError(f"cp exited {copy.returncode}")
        stats = {"batches": watcher.batches, "failures": watcher.failures}
        stats["lost_events"] = getattr(watcher, "lost_events", None)  # None: before issue 10
    finally:
        engine.close()
    loads["after"] = load()
    return {
        "benchmark": "sync: N files copied into one folder at once -> all in the manifest",
        "command": " ".join(["python -m bench.sync.overflow", *sys.argv[1:]]),
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine_info(),
        "parameters": {
            "files": args.files,
            "folder": rel,
            "resync_s": RESYNC_S,
            "max_queued_events": int(QUEUE.read_text()) if QUEUE.exists() else None,
            "writer": "one `cp -r` of pre-rendered episodes (staged outside the vault)",
        },
        "stage_s": round(stage_s, 1),
        "copy_s": round(copied_s, 1) if copied_s is not None else None,
        "fully_indexed_s": round(full_s, 1) if full_s is not None else None,
        "indexed": indexed,
        "longest_stall_s": round(longest_stall(timeline, args.files), 1),
        "inotify_overflows": len(overflows.times),
        "first_overflow_s": round(overflows.times[0] - t0, 2) if overflows.times else None,
        "lost_event_reconciles_logged": len(lost.times),
        "watcher": stats,
        "timeline": timeline,
        "noise": {"loads": loads},
    }


def summary(data: dict[str, Any]) -> str:
    loads = [round(x, 1) for x in data["noise"]["loads"]["after"]["loadavg"]]
    return (
        f"{data['parameters']['files']} files at once: fully indexed after "
        f"{data['fully_indexed_s']} s (cp took {data['copy_s']} s), longest stall "
        f"{data['longest_stall_s']} s, {data['inotify_overflows']} inotify overflow(s), "
        f"{data['lost_event_reconciles_logged']} lost-event reconcile(s) logged; "
        f"load average after {loads}"
    )


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s %(message)s")
    base = Path(tempfile.mkdtemp(prefix="memvault-overflow-"))
    try:
        data = run(args, base)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    results: dict[str, Any] = {}
    if args.out.exists():
        results = json.loads(args.out.read_text(encoding="utf-8"))
    results.setdefault("runs", {})[args.label] = data
    write_json(args.out, results)
    print(summary(data))
    print(f"wrote {args.out} (label {args.label!r})")
    return 0 if data["fully_indexed_s"] is not None else 1


if __name__ == "__main__":
    sys.exit(main())
