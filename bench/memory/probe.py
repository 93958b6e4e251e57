"""RSS readings of THIS process: what each phase of a bench.memory child adds.

VmRSS / VmHWM from /proc/self/status; RssAnon / RssFile from /proc/self/status too (file-
backed pages are shared with the page cache: a memory-mapped index shows there, not in anon).
"""

from __future__ import annotations

import gc
from typing import Any

KEYS = ("VmRSS", "VmHWM", "RssAnon", "RssFile")


def status() -> dict[str, float]:
    out: dict[str, float] = {}
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            name, _, rest = line.partition(":")
            if name in KEYS:
                out[name] = round(int(rest.split()[0]) / 1024, 1)
    return out


class Phases:
    """RSS after each named phase, and what it added to the one before."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def mark(self, phase: str) -> dict[str, Any]:
        gc.collect()
        now = status()
        before = self.rows[-1]["rss_mb"] if self.rows else 0.0
        row = {
            "phase": phase,
            "rss_mb": now.get("VmRSS", 0.0),
            "added_mb": round(now.get("VmRSS", 0.0) - before, 1),
            "peak_mb": now.get("VmHWM", 0.0),
            "anon_mb": now.get("RssAnon", 0.0),
            "file_mb": now.get("RssFile", 0.0),
        }
        self.rows.append(row)
        return row
