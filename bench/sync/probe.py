"""Polling the real search until it reflects a change, and the numbers that come out of it.

A probe is the product's own search (Engine.search, text mode, inside the file's scope, no
time decay), called every POLL_S. The clock starts when the file operation has returned and
stops at the first search that shows the change; the cost of each search is kept too, since
it bounds the resolution (latency is over-stated by at most one poll interval + one search).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from indexer.engine import Engine
from indexer.retrieval.search_query import SearchQuery
from indexer.sync.watcher import VaultWatcher
from vault.layout.keys import ScopeId

POLL_S = 0.010
# Text mode: the hybrid fusion (zconf) ranks a lone exact keyword hit below the vector
# neighbours (one text hit has z = 0), so hybrid would not show a file found only by its
# token. The text index commits first, the manifest last: the checks below cover both.
MODE = "text"
TIMEOUT_S = 30.0
TOP_K = 10


@dataclass
class Samples:
    """Latencies of one change kind, in seconds; None for a sample that timed out."""

    kind: str
    latencies: list[float | None] = field(default_factory=list)
    op_seconds: list[float] = field(default_factory=list)  # how long the operation took
    note: str = ""

    def summary(self) -> dict[str, object]:
        done = sorted(x for x in self.latencies if x is not None)
        ms = [round(x * 1000, 1) for x in done]
        return {
            "kind": self.kind,
            "samples": len(self.latencies),
            "timeouts": len(self.latencies) - len(done),
            "p50_ms": percentile(ms, 50),
            "p95_ms": percentile(ms, 95),
            "max_ms": ms[-1] if ms else None,
            "mean_ms": round(sum(ms) / len(ms), 1) if ms else None,
            "op_p50_ms": percentile(sorted(x * 1000 for x in self.op_seconds), 50),
            "note": self.note,
            "latencies_ms": ms,
        }


def percentile(sorted_values: list[float], pct: float) -> float | None:
    """Nearest-rank percentile (p95 of 100 samples is the 95th smallest)."""
    if not sorted_values:
        return None
    rank = max(1, math.ceil(pct / 100 * len(sorted_values)))
    return round(sorted_values[rank - 1], 1)


class Probe:
    def __init__(self, engine: Engine, watcher: VaultWatcher) -> None:
        self.engine = engine
        self.watcher = watcher
        self.search_s: list[float] = []

    # ------------------------------------------------------------------ what search shows

    def paths(self, query: str, scope: ScopeId) -> list[tuple[str, str]]:
        """(path, text) of each result of the product search for `query` in `scope`."""
        started = time.perf_counter()
        results = self.engine.search(SearchQuery(query, scope, top_k=TOP_K, mode=MODE, decay=False))
        self.search_s.append(time.perf_counter() - started)
        return [(r.doc.path, r.doc.text) for r in results]

    def committed(self, rel: str) -> str | None:
        """The content hash the manifest holds for `rel` (None: not indexed). The manifest
        commits after both indexes, so this says the vector index has the change too."""
        entry = self.engine.manifest.get(rel)
        return None if entry is None else entry.sha

    # A result's text comes from the manifest, so "the token is in a result's text" also
    # means both indexes committed; the checks that see nothing add a manifest check.

    def found(self, token: str, scope: ScopeId, rel: str) -> bool:
        """The file `rel` is a result for `token`, with the text that holds the token."""
        return any(p == rel and token in t for p, t in self.paths(token, scope))

    def gone(self, token: str, scope: ScopeId, rel: str) -> bool:
        """No result is `rel` or holds `token`, and the manifest has dropped `rel`."""
        hits = self.paths(token, scope)
        return not any(p == rel or token in t for p, t in hits) and self.committed(rel) is None

    def reverted(self, token: str, scope: ScopeId, rel: str, sha: str) -> bool:
        """No result holds `token`, and `rel` is indexed with content hash `sha` again."""
        hits = self.paths(token, scope)
        return not any(token in t for _, t in hits) and self.committed(rel) == sha

    def moved(self, token: str, scope: ScopeId, old: str, new: str) -> bool:
        hits = self.paths(token, scope)
        return any(p == new and token in t for p, t in hits) and all(p != old for p, _ in hits)

    # ------------------------------------------------------------------ timing

    def measure(
        self, op: Callable[[], object], done: Callable[[], bool], timeout: float = TIMEOUT_S
    ) -> tuple[float | None, float]:
        """(seconds from `op` returning until `done()`, or None on timeout; op seconds)."""
        began = time.perf_counter()
        op()
        started = time.perf_counter()
        while not done():
            if time.perf_counter() - started > timeout:
                return None, started - began
            time.sleep(POLL_S)
        return time.perf_counter() - started, started - began

    def wait(self, done: Callable[[], bool], what: str, timeout: float = 120.0) -> float:
        """Untimed set-up: wait until `done()`, or fail loudly."""
        started = time.perf_counter()
        while not done():
            if time.perf_counter() - started > timeout:
                raise TimeoutError(f"set-up step {what!r} not reflected after {timeout:.0f} s")
            time.sleep(0.02)
        return time.perf_counter() - started

    def idle(self, quiet: float = 0.05, timeout: float = 60.0) -> None:
        """Between samples: no pending hint and no sync running for `quiet` seconds, so one
        sample's batch never carries the next sample's write."""
        # Reads the watcher's private queue: a benchmark may look inside what it measures.
        started = time.perf_counter()
        calm_since = None
        while time.perf_counter() - started < timeout:
            busy = bool(self.watcher._pending) or self.watcher.syncer._mutex.locked()
            now = time.perf_counter()
            if busy:
                calm_since = None
            elif calm_since is None:
                calm_since = now
            elif now - calm_since >= quiet:
                return
            time.sleep(0.005)
        raise TimeoutError("the watcher never went idle")

    def search_summary(self) -> dict[str, float | int | None]:
        ms = sorted(x * 1000 for x in self.search_s)
        return {
            "searches": len(ms),
            "p50_ms": percentile(ms, 50),
            "p95_ms": percentile(ms, 95),
            "poll_interval_ms": POLL_S * 1000,
        }
