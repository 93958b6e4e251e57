"""One `remember` with a long git journal behind it (issue 20 item 6): wall and CPU time of
the write, which is how long it holds the vault's write lock.

    .venv/bin/python -m bench.journal [--lines 20000 200000] [--shapes old deleted files]

Per journal length N and shape, a fresh git vault with one committed memory, then N pending
lines in `.memvault/git-pending.jsonl`, then one in-process Vault.remember, timed:
- old: N lines of an older MemVault (paths alone, distinct, absent): the shape of the
  issue's report (1.8 s CPU at 20,000, over 600 s at 200,000 before the fix). None is
  committed (unverified); all are dropped.
- deleted: N lines saying MemVault deleted N distinct paths that are absent: every one is
  accepted and goes through the whole commit path (lstat, tree lookup, index).
- files: N lines over 2,000 real files that hold what the lines say MemVault wrote (a
  backlog left by failed commits): all 2,000 are committed with the new memory.
Prints a table and writes bench/results/journal.json. `--old-code DIR` runs the same on
another checkout's `vault` package (e.g. `git archive main | tar -x -C DIR`; shape old
only, as that code reads nothing else): before/after on one machine.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results" / "journal.json"
FILES = 2_000
EPISODES = "bots/b1/sessions/group_1/episodes/2026/11"


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _line(op: int, files: dict[str, str | None] | None, paths: list[str] | None) -> str:
    data: dict[str, Any] = {"op": f"op{op}", "message": f"remember b1/group_1 op{op}"}
    data["owner"] = None
    data["final"] = True
    if files is not None:
        data["files"] = files
    else:
        data["paths"] = paths
    return json.dumps(data) + "\n"


def build(root: Path, lines: int, shape: str) -> None:
    from vault.layout.keys import ScopeId
    from vault.writes.create import init_vault
    from vault.writes.new_episode import NewEpisode
    from vault.writes.operations import Vault

    init_vault(root)
    Vault(root).remember(NewEpisode(ScopeId("b1", "group_1"), "the first memory"))
    out: list[str] = []
    if shape == "files":
        folder = root / EPISODES
        folder.mkdir(parents=True, exist_ok=True)
        digests = []
        for i in range(FILES):
            data = f"---\nid: ep_20261101_{i:06d}\n---\npending memory {i}\n".encode()
            (folder / f"ep_20261101_{i:06d}.md").write_bytes(data)
            digests.append(hashlib.sha256(data).hexdigest())
        for n in range(lines):
            i = n % FILES
            out.append(_line(n, {f"{EPISODES}/ep_20261101_{i:06d}.md": digests[i]}, None))
    else:
        for n in range(lines):
            path = f"{EPISODES}/gone_{n:07d}.md"
            deleted = shape == "deleted"
            out.append(_line(n, {path: None}, None) if deleted else _line(n, None, [path]))
    (root / ".memvault" / "git-pending.jsonl").write_text("".join(out), encoding="utf-8")


def measure(lines: int, shape: str) -> dict[str, Any]:
    from vault.layout.keys import ScopeId
    from vault.writes.new_episode import NewEpisode
    from vault.writes.operations import Vault

    work = Path(tempfile.mkdtemp(prefix="memvault-bench-journal-"))
    try:
        root = work / "memory"
        build(root, lines, shape)
        vault = Vault(root)
        wall, cpu = time.perf_counter(), cpu_s()
        vault.remember(
            NewEpisode(ScopeId("b1", "group_1"), "the memory written behind the journal")
        )
        wall, cpu = time.perf_counter() - wall, cpu_s() - cpu
        head = subprocess.run(
            ["git", "-C", str(root), "show", "--name-only", "--format=", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        left = (root / ".memvault" / "git-pending.jsonl").stat().st_size
        return {
            "lines": lines,
            "shape": shape,
            "wall_s": round(wall, 3),
            "cpu_s": round(cpu, 3),
            "committed_paths": len(head),
            "journal_bytes_after": left,
            "commit_failure": None if vault.commit_failure is None else vault.commit_failure.reason,
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.journal", description=__doc__.split("\n")[0])
    ap.add_argument("--lines", type=int, nargs="+", default=[20_000, 200_000])
    ap.add_argument("--shapes", nargs="+", default=["old", "deleted", "files"])
    ap.add_argument("--old-code", type=Path, default=None, help="a checkout to run instead")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    # The warnings name what was left uncommitted (thousands of paths here): counts suffice.
    logging.getLogger("vault").setLevel(logging.ERROR)
    if args.old_code is not None:
        sys.path.insert(0, str(args.old_code.resolve()))
    import vault

    code = str(Path(vault.__file__).resolve().parent)
    rows = []
    for lines in args.lines:
        for shape in args.shapes:
            print(f"{lines} lines, shape {shape} ...", file=sys.stderr, flush=True)
            rows.append(measure(lines, shape))
            r = rows[-1]
            print(
                f"{r['lines']:>8} {r['shape']:<8} wall {r['wall_s']:>8.3f} s  cpu "
                f"{r['cpu_s']:>8.3f} s  committed {r['committed_paths']:>5}  "
                f"journal after {r['journal_bytes_after']} B",
                flush=True,
            )
    result = {
        "code": code,
        "machine": {"cpu_count": os.cpu_count(), "python": sys.version.split()[0]},
        "loadavg": os.getloadavg(),
        "rows": rows,
    }
    out = args.out if args.old_code is None else args.out.with_name("journal_old_code.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
