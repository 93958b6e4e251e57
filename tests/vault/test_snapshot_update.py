"""vault.writes.snapshots.update_snapshot: the runner's `retrieve` adds what it served to the
injection snapshot of ITS turn, atomically, and never onto a newer turn's snapshot."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from vault.layout.keys import ScopeId
from vault.writes.snapshots import (
    read_snapshot,
    snapshot_path,
    update_snapshot,
    write_snapshot,
)

SCOPE = ScopeId("bot-1", "group_1")


def mark(query_id: int, pause: float = 0.0):
    def update(snapshot: dict) -> dict:
        time.sleep(pause)  # widens the read-modify-write window a lost update needs
        return {**snapshot, "retrieve": {"for": query_id}}

    return update


def test_update_applies_to_its_own_turn_only(tmp_path: Path):
    assert update_snapshot(tmp_path, SCOPE, 1, mark(1)) is False  # no snapshot yet
    write_snapshot(tmp_path, SCOPE, {"query_id": 2, "episode_ids": ["ep_a"]})
    assert update_snapshot(tmp_path, SCOPE, 1, mark(1)) is False
    assert read_snapshot(tmp_path, SCOPE) == {"query_id": 2, "episode_ids": ["ep_a"]}
    assert update_snapshot(tmp_path, SCOPE, 2, mark(2)) is True
    assert read_snapshot(tmp_path, SCOPE)["retrieve"] == {"for": 2}
    leftovers = [p.name for p in snapshot_path(tmp_path, SCOPE).parent.iterdir()]
    assert leftovers == [snapshot_path(tmp_path, SCOPE).name]  # no temp file left


def test_a_racing_update_never_brings_back_an_older_turn(tmp_path: Path):
    """The injector of turn k+1 writes while the retrieve of turn k (or k+1) updates: the
    snapshot never goes back to turn k, and `retrieve` always belongs to the snapshot's turn."""
    turns = 100
    seen: list[int] = [0]

    def injector() -> None:
        for k in range(1, turns + 1):
            write_snapshot(tmp_path, SCOPE, {"query_id": k})
            seen.append(k)
            time.sleep(0.002)  # let an update that read turn k-1 finish its write
            now = read_snapshot(tmp_path, SCOPE)
            assert now["query_id"] >= k, (now, k)
            if "retrieve" in now:
                assert now["retrieve"] == {"for": now["query_id"]}

    def retriever() -> None:
        for _ in range(turns * 2):
            k = seen[-1]
            for query_id in (k - 1, k):
                update_snapshot(tmp_path, SCOPE, query_id, mark(query_id, 0.001))

    with ThreadPoolExecutor(2) as pool:
        futures = [pool.submit(injector), pool.submit(retriever)]
        for future in futures:
            future.result()
    final = read_snapshot(tmp_path, SCOPE)
    assert final["query_id"] == turns
