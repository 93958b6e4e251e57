"""`memvault search` / `remember` from a cold shell on a 10,000-memory vault (issue 23 item 4).

    .venv/bin/python -m bench.cold_shell [--runs 20] [--remembers 8] [--size 10000]
        [--before-dir CHECKOUT]   # e.g. git worktree add /tmp/before 351eae3

Every timed call is a new process of the installed entry point (`memvault`, beside this
Python), as a person's shell runs it: wall clock from spawn to exit. In order:
1. search without a writer (each process opens the indexes and loads the model itself),
   alternating with the same search by the code of --before-dir when given;
2. `memvault watch` started as a real subprocess, then the same searches through it
   (indexer.cli.writer_link), each compared with (1)'s answer for a few queries
   (`--json --no-decay`: the same results, scores and format);
3. remember with the writer running, each checked searchable right after it returns;
4. the writer stopped (SIGTERM), remember without it.
Plus the phases of one cold search without a writer, timed inside a child process.
Children run without PYTHONDONTWRITEBYTECODE (set in some sandboxes): a person's shell
keeps compiled modules, and compiling ~100 modules from source each call is ~0.15-0.2 s
no user pays; the warm-up call of each checkout writes them.
Prints p50/p95 against the goals and writes bench/results/cold_shell.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench import host_turns_corpus
from bench.cold_shell.vault10k import BOT, SESSION, ensure, memvault, shared_data
from bench.sync.report import load, machine_info, write_json

RESULTS = Path(__file__).resolve().parents[1] / "results"
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
GOALS = {"search_no_writer_s": 1.0, "search_with_writer_s": 0.3}
SCOPE = ["--bot", BOT, "--session", SESSION]
EQUAL_CHECKS = 5
PHASES = r"""
import json, sys, time
marks = [("start", time.perf_counter(), time.process_time())]
def mark(name): marks.append((name, time.perf_counter(), time.process_time()))
from pathlib import Path
import memvault_cli.main
from indexer.cli import search_cmd
mark("import CLI (search path)")
from indexer.engine import Engine
from indexer.cli.catch_up import behind
mark("import engine (numpy, faiss, tantivy, gate)")
root = Path(sys.argv[1])
engine = Engine.open(root, writer=False)
mark("open indexes read-only")
assert not behind(engine), "the warm-up search left files to index"
mark("catch-up check (stat scan of the vault, plan)")
engine.embedder.embed_query("warm up")
mark("load model + embed one query")
engine.calibrated()
mark("calibration")
from vault.layout.keys import ScopeId
from indexer.retrieval.search_query import SearchQuery
engine.search(SearchQuery(sys.argv[2], ScopeId(sys.argv[3], sys.argv[4])))
mark("search (hybrid, 10k chat)")
engine.close()
mark("close")
rows = [[b[0], round(b[1] - a[1], 4), round(b[2] - a[2], 4)] for a, b in zip(marks, marks[1:])]
print(json.dumps(rows))
"""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(argv: list[str]) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """(wall, CPU seconds, result) of one child. On a box shared with other jobs the CPU
    time (user + sys) is close to what an idle box's wall would be: the work is one thread."""
    cpu = _children_cpu()
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=CHILD_ENV)
    wall = time.perf_counter() - started
    return wall, _children_cpu() - cpu, done


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def stats(timings: list[tuple[float, float]]) -> dict[str, Any]:
    walls, cpus = [w for w, _ in timings], [c for _, c in timings]
    return {
        "runs": len(walls),
        "p50_s": round(statistics.median(walls), 3),
        "p95_s": round(_p95(walls), 3),
        "min_s": round(min(walls), 3),
        "max_s": round(max(walls), 3),
        "cpu_p50_s": round(statistics.median(cpus), 3),
        "cpu_p95_s": round(_p95(cpus), 3),
    }


def entry(checkout: Path | None) -> list[str]:
    """The installed `memvault`, or the same entry point run from another checkout's code
    (`--before-dir`: the code before this change, measured in the same run)."""
    if checkout is None:
        return memvault()
    code = (f"import sys; sys.path.insert(0, {str(checkout)!r}); sys.argv[0] = 'memvault'; "
            "from memvault_cli.main import main; sys.exit(main())")  # fmt: skip
    return [sys.executable, "-c", code]


def searches(
    root: Path, queries: list[str], checkout: Path | None = None
) -> list[tuple[float, float]]:
    timings = []
    for query in queries:
        wall, cpu, done = run([*entry(checkout), "--vault", str(root), "search", query, *SCOPE])
        if done.returncode != 0:
            raise RuntimeError(f"search {query!r} exited {done.returncode}: {done.stderr}")
        timings.append((wall, cpu))
    return timings


def answers(root: Path, queries: list[str]) -> list[tuple[int, str]]:
    out = []
    for query in queries:
        _, _, done = run(
            [*memvault(), "--vault", str(root), "--json", "search", query, *SCOPE, "--no-decay"]
        )
        out.append((done.returncode, done.stdout))
    return out


def remembers(
    root: Path, count: int, tag: str, check: bool
) -> tuple[list[tuple[float, float]], int]:
    """(wall, CPU) of each remember; how many a search found right after it returned."""
    walls, found = [], 0
    for i in range(count):
        token = f"coldshell{tag}{i}x{os.getpid()}x{time.time_ns() % 10**9}"
        argv = [*memvault(), "--vault", str(root), "remember", f"bench note {token}", *SCOPE]
        wall, cpu, done = run(argv)
        if done.returncode != 0:
            raise RuntimeError(f"remember exited {done.returncode}: {done.stderr}")
        walls.append((wall, cpu))
        if check:
            _, _, hit = run([*memvault(), "--vault", str(root), "search", token, *SCOPE, "--mode",
                          "text", "--gate", "off"])  # fmt: skip
            found += done.stdout.strip() in hit.stdout
    return walls, found


def start_writer(root: Path) -> subprocess.Popen[str]:
    writer = subprocess.Popen(
        [*memvault(), "--vault", str(root), "watch"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert writer.stderr is not None
    line = writer.stderr.readline()  # "watching ..." once the start-up sync is done
    if not line.startswith("watching"):
        writer.kill()
        raise RuntimeError(f"memvault watch did not start: {line}")
    time.sleep(1.0)  # its socket thread warms the model before it accepts
    return writer


def phases(root: Path, query: str) -> list[list[Any]]:
    done = subprocess.run(
        [sys.executable, "-c", PHASES, str(root), query, BOT, SESSION],
        capture_output=True, text=True, check=True, env=CHILD_ENV,
    )  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.cold_shell", description=__doc__)
    ap.add_argument("--size", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=20, help="timed searches per phase")
    ap.add_argument("--remembers", type=int, default=8, help="timed remembers per phase")
    ap.add_argument("--out", type=Path, default=RESULTS / "cold_shell.json")
    ap.add_argument(
        "--before-dir", type=Path, default=None,
        help="a checkout of the code before (git worktree add DIR COMMIT): its searches "
        "without a writer are timed too, alternating with this code's",
    )  # fmt: skip
    args = ap.parse_args(argv)
    root, built = ensure(args.size)
    host_turns_corpus.DATA = shared_data()
    queries = [q.text for q in host_turns_corpus.questions(args.runs + 1, seed=11)]
    before = load()
    searches(root, queries[:1])  # warm-up: page cache, a catch-up of files left behind
    if args.before_dir:
        searches(root, queries[:1], args.before_dir)  # its compiled modules too
    phase_times = phases(root, queries[0])
    no_writer, before_code = [], []
    for query in queries[1:]:  # alternating: both see the same load
        no_writer += searches(root, [query])
        if args.before_dir:
            before_code += searches(root, [query], args.before_dir)
    local = answers(root, queries[1 : 1 + EQUAL_CHECKS])
    writer = start_writer(root)
    try:
        with_writer = searches(root, queries[1:])
        through = answers(root, queries[1 : 1 + EQUAL_CHECKS])
        remember_writer, found = remembers(root, args.remembers, "w", check=True)
    finally:
        writer.send_signal(signal.SIGTERM)
        writer.wait(timeout=60)
    remember_alone, _ = remembers(root, args.remembers, "n", check=False)
    same = sum(a == b and a[0] == 0 for a, b in zip(local, through, strict=True))
    result = {
        "vault": {"path": str(root), **built},
        "machine": machine_info(),
        "load_before": before,
        "load_after": load(),
        "search_no_writer": stats(no_writer),
        "search_before_change": stats(before_code) if before_code else None,
        "before_dir": str(args.before_dir) if args.before_dir else None,
        "search_with_writer": stats(with_writer),
        "remember_no_writer": stats(remember_alone),
        "remember_with_writer": stats(remember_writer),
        "remember_with_writer_searchable_on_return": f"{found}/{len(remember_writer)}",
        "same_answer_through_writer": f"{same}/{len(local)}",
        "cold_search_phases_wall_cpu_s": phase_times,
        "goals_s": GOALS,
    }
    result["met"] = {
        "search_no_writer": result["search_no_writer"]["p50_s"] <= GOALS["search_no_writer_s"],
        "search_with_writer": result["search_with_writer"]["p50_s"]
        <= GOALS["search_with_writer_s"],
    }
    write_json(args.out, result)
    for name in ("search_before_change", "search_no_writer", "search_with_writer",
                 "remember_no_writer", "remember_with_writer"):  # fmt: skip
        s = result[name]
        if s is None:
            continue
        cpu = f"CPU p50 {s['cpu_p50_s']:.3f} s  p95 {s['cpu_p95_s']:.3f} s"
        print(f"{name:22} wall p50 {s['p50_s']:.3f} s  p95 {s['p95_s']:.3f} s; {cpu}")
    print(f"goals: search <= {GOALS['search_no_writer_s']} s alone, <= "
          f"{GOALS['search_with_writer_s']} s with a writer; met: {result['met']}")  # fmt: skip
    found_text = result["remember_with_writer_searchable_on_return"]
    print(f"same answer through the writer: {result['same_answer_through_writer']}; "
          f"remember searchable on return: {found_text}")  # fmt: skip
    print("cold search phases, wall / CPU s:")
    for name, wall, cpu in phase_times:
        print(f"  {name:55} {wall:7.3f} {cpu:7.3f}")
    print(f"load {before['loadavg']} -> {result['load_after']['loadavg']}; wrote {args.out}")


if __name__ == "__main__":
    main()
