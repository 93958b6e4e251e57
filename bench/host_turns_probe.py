"""What bench.host_turns reads from outside the plugin: its log, its process memory, its index.

- The plugin process log (the `lbp run` output): per turn, the injector's own timing
  (`memvault=injection_ready ... ms=`), whether it recalled (`recall=done`), and every
  `memvault=retrieve` line of the knowledge engine (LocalAgent's retrieval through our KB),
  with whether that call ran a search of its own.
- /proc: VmRSS of the `lbp run` process and all its descendants, and its peak (VmHWM).
- The index manifest (SQLite, WAL; opened read-only): how many episode files are indexed,
  to time the start-up indexing without asking the plugin.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from indexer.sync.manifest import MANIFEST_NAME, index_dir

EVENT = re.compile(r"memvault=(\w+)((?:\s+\w+=(?:'[^']*'|\"[^\"]*\"|\S*))*)")
FIELD = re.compile(r"(\w+)=('[^']*'|\"[^\"]*\"|\S*)")
RECONCILE = re.compile(r"sync=reconcile files=(\d+) .*? ms=([\d.]+)")
# A retrieve line that says it served from the injector's recall ran no search of its own.
NO_SEARCH = {"searched": ("0", "false", "False", "no")}


@dataclass(frozen=True)
class Event:
    name: str
    fields: dict[str, str]

    def number(self, key: str) -> float | None:
        try:
            return float(self.fields[key])
        except (KeyError, ValueError):
            return None


def events(text: str) -> list[Event]:
    out = []
    for line in text.splitlines():
        match = EVENT.search(line)
        if match:
            out.append(Event(match.group(1), dict(FIELD.findall(match.group(2)))))
    return out


class PluginLog:
    """The plugin process's log file, read by byte offsets (one turn = one slice)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def offset(self) -> int:
        return self.path.stat().st_size if self.path.exists() else 0

    def text(self, start: int, end: int | None = None) -> str:
        with self.path.open("rb") as f:
            f.seek(start)
            raw = f.read() if end is None else f.read(max(0, end - start))
        return raw.decode("utf-8", "replace")


def searched(event: Event) -> bool:
    """Did this retrieve call run a search (rather than reuse the injector's recall)?"""
    return not any(event.fields.get(k) in values for k, values in NO_SEARCH.items())


def turn_cost(text: str) -> dict[str, Any]:
    """What the plugin did in one turn's slice of its log."""
    found = events(text)
    ready = [e for e in found if e.name == "injection_ready"]
    retrieves = [e for e in found if e.name == "retrieve"]
    injector_ms = ready[-1].number("ms") if ready else None
    recalls = sum(1 for e in ready if e.fields.get("recall") == "done")
    retrieve_searches = sum(1 for e in retrieves if searched(e))
    return {
        "injector_ms": injector_ms,
        "injector_turns": len(ready),
        "injector_recalls": recalls,
        "injected_episodes": int(ready[-1].number("episodes") or 0) if ready else 0,
        "retrieve_calls": len(retrieves),
        "retrieve_searches": retrieve_searches,
        "retrieve_ms": sum(e.number("ms") or 0.0 for e in retrieves),
        "retrieve_results": int(sum(e.number("results") or 0 for e in retrieves)),
        "searches": recalls + retrieve_searches,
        "failures": [e.name for e in found if e.name.endswith("_failed")],
    }


def reconciles(text: str) -> list[dict[str, float]]:
    """The indexer's own full reconciles (`sync=reconcile files=N ... ms=M`) in a log."""
    return [{"files": int(files), "ms": float(ms)} for files, ms in RECONCILE.findall(text)]


def _children() -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            raw = stat.read_text()
        except OSError:  # the process ended while we looked
            continue
        ppid = int(raw[raw.rindex(")") + 2 :].split()[1])
        out.setdefault(ppid, []).append(int(stat.parent.name))
    return out


def _status_kb(pid: int, key: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_memory(pid: int) -> dict[str, Any]:
    """RSS (MB) of `pid` and its descendants now, and the peak RSS of `pid` itself."""
    children, todo, pids = _children(), [pid], []
    while todo:
        current = todo.pop()
        pids.append(current)
        todo.extend(children.get(current, []))
    per = {p: _status_kb(p, "VmRSS") for p in pids}
    return {
        "rss_mb": round(sum(per.values()) / 1024, 1),
        "root_rss_mb": round(per.get(pid, 0) / 1024, 1),
        "root_peak_rss_mb": round(_status_kb(pid, "VmHWM") / 1024, 1),
        "processes": len(pids),
    }


def indexed_episode_files(vault_root: Path) -> int:
    """Episode files the plugin's index holds (0 while its manifest does not exist yet)."""
    path = index_dir(vault_root) / MANIFEST_NAME
    if not path.exists():
        return 0
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    try:
        row = db.execute(
            "SELECT COUNT(*) FROM files WHERE path LIKE '%/episodes/%' AND error IS NULL"
        ).fetchone()
    except sqlite3.OperationalError:  # the schema is being created
        return 0
    finally:
        db.close()
    return int(row[0])
