"""Two vault replicas and a bare remote on this machine (`memvault sync`, vault.git.gitsync):
how long a sync of N memories takes each way, and how soon a running watcher makes a pulled
memory searchable.

    .venv/bin/python -m bench.replicas [--memories 500] [--samples 10]

Replica A and B each write N memories into the same chat (real Vault.remember, one commit
each); then A pushes (sync 1), B merges A's N into its own N and pushes (sync 2), A fast-
forwards (sync 3), and a sync with nothing new is timed (sync 4). Then B runs the watcher
(Engine.open + watch, the embedded model) and, per sample, A remembers one memory and syncs,
B syncs from a second Vault object (no index hook: only the watcher can index it), and
B's engine is polled every 10 ms until the memory is found. Prints the numbers and writes
bench/results/replicas.json.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from dulwich.repo import Repo

from bench.sync.report import machine_info, write_json
from indexer.engine import Engine
from indexer.retrieval.search_query import SearchQuery
from vault.git import gitsync
from vault.layout.keys import ScopeId
from vault.writes.create import init_vault
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

RESULTS = Path(__file__).resolve().parent / "results" / "replicas.json"
CHAT = ScopeId("b1", "group_1")


def timed(what: str, vault: Vault, found: dict[str, Any]) -> gitsync.SyncResult:
    started = time.perf_counter()
    result = gitsync.sync(vault)
    found[what] = {
        "seconds": round(time.perf_counter() - started, 3),
        "action": result.action,
        "pulled_files": len(result.pulled),
    }
    print(f"{what:28} {found[what]['seconds']:7.3f} s  {result.action:12} "
          f"{len(result.pulled)} files pulled")  # fmt: skip
    return result


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.replicas")
    ap.add_argument("--memories", type=int, default=500, help="per replica (default 500)")
    ap.add_argument("--samples", type=int, default=10, help="watcher pickup samples")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    found: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="memvault-replicas-") as tmp:
        base = Path(tmp)
        remote = base / "remote.git"
        Repo.init_bare(str(remote), mkdir=True, default_branch=b"main").close()
        a, b = (Vault(init(base / n, remote)) for n in ("a", "b"))
        for node in (a, b):
            for i in range(args.memories):
                node.remember(NewEpisode(CHAT, f"{node.root.name} memory {i}: fact {i * 7}"))
        timed("sync 1: A pushes N", a, found)
        timed("sync 2: B merges N, pushes", b, found)
        timed("sync 3: A fast-forwards N", a, found)
        timed("sync 4: nothing new", a, found)
        found["pickup_ms"] = pickup(a, b.root, args.samples)
    latencies = found["pickup_ms"]
    print(f"watcher pickup after sync: median {statistics.median(latencies):.0f} ms, "
          f"max {max(latencies):.0f} ms ({len(latencies)} samples)")  # fmt: skip
    data = {"machine": machine_info(), "memories_per_replica": args.memories, **found}
    write_json(args.out, data)
    print(f"wrote {args.out}")


def init(root: Path, remote: Path) -> Path:
    init_vault(root)
    gitsync.set_remote(root, str(remote))
    return root


def pickup(a: Vault, b_root: Path, samples: int) -> list[float]:
    engine = Engine.open(b_root)
    engine.watch()
    try:
        engine.reconcile()
        latencies = []
        for i in range(samples):
            wanted = a.remember(NewEpisode(CHAT, f"pickup probe {i} heron{i}x")).id
            gitsync.sync(a)
            gitsync.sync(Vault(b_root))
            started = time.perf_counter()
            while True:
                hits = engine.search(SearchQuery(f"pickup probe {i} heron{i}x", CHAT))
                if any(h.doc.episode_id == wanted for h in hits):
                    break
                if time.perf_counter() - started > 30:
                    raise RuntimeError(f"{wanted} not indexed 30 s after the sync")
                time.sleep(0.01)
            latencies.append(round((time.perf_counter() - started) * 1000, 1))
        return latencies
    finally:
        engine.close()


if __name__ == "__main__":
    main()
