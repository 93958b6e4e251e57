"""bench.memory's printed table and the quality check read from bench.retrieval outputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def quality(specs: list[str]) -> dict[str, Any]:
    """{label: {dataset: {system: hit@5}}} from FILE=LABEL bench.retrieval result files."""
    out: dict[str, Any] = {}
    for spec in specs:
        path, label = spec.rsplit("=", 1)
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        table: dict[str, dict[str, float]] = {}
        for row in data["results"]:
            if row["system"].startswith("memvault-"):
                table.setdefault(row["dataset"], {})[row["system"]] = row["scores"]["hit@5"]
        out[label] = {"file": path, "hit@5": table}
    return out


def _cell(run: dict[str, Any], path: tuple[str, ...]) -> str:
    value: Any = run
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return "-"
        value = value[key]
    return f"{value:,.1f}" if isinstance(value, float | int) else str(value)


def _last(run: dict[str, Any], mode: str) -> str:
    phases = run.get(mode, {}).get("phases")
    return f"{phases[-1]['rss_mb']:,.1f}" if phases else "-"


ROWS = (
    ("plugin RSS after start MB", lambda r: _phase(r, "plugin", "watcher started")),
    ("plugin RSS after the turns MB", lambda r: _last(r, "plugin")),
    ("plugin peak RSS MB", lambda r: _cell(r, ("plugin", "phases", "-1", "peak_mb"))),
    ("injector p95 ms (FAKE host)", lambda r: _cell(r, ("plugin", "injector_p95_ms"))),
    ("indexing process peak RSS MB", lambda r: _cell(r, ("build", "peak_rss_mb"))),
    ("cold build s", lambda r: _cell(r, ("build", "restart_s"))),
    ("search-only process peak RSS MB", lambda r: _cell(r, ("search", "peak_rss_mb"))),
    ("search p95 ms, largest scope", lambda r: _cell(r, ("search", "search", "p95_ms"))),
    ("restart (open + reconcile) s", lambda r: _cell(r, ("restart", "restart_s"))),
    ("restart peak RSS MB", lambda r: _cell(r, ("restart", "peak_rss_mb"))),
)


def _phase(run: dict[str, Any], mode: str, name: str) -> str:
    for row in run.get(mode, {}).get("phases", []):
        if row["phase"] == name:
            return f"{row['rss_mb']:,.1f}"
    return "-"


def table(data: dict[str, Any]) -> str:
    runs = data["runs"]
    for run in runs.values():  # "-1" above: the last phase's peak
        if "plugin" in run and run["plugin"].get("phases"):
            run["plugin"]["phases"] = list(run["plugin"]["phases"])
            run["plugin"].setdefault("phases_last", run["plugin"]["phases"][-1])
    labels = list(runs)
    lines = [f"{'':<36}" + "".join(f"{label:>14}" for label in labels)]
    for name, get in ROWS:
        if name == "plugin peak RSS MB":
            cells = [_cell(runs[k], ("plugin", "phases_last", "peak_mb")) for k in labels]
        else:
            cells = [get(runs[k]) for k in labels]
        if any(c != "-" for c in cells):
            lines.append(f"{name:<36}" + "".join(f"{c:>14}" for c in cells))
    for label, q in data.get("quality", {}).items():
        for dataset, systems in q["hit@5"].items():
            hit = systems.get("memvault-hybrid", "-")
            vec = systems.get("memvault-vector", "-")
            lines.append(f"hit@5 {label:<10} {dataset:<12} hybrid {hit}  vector {vec}")
    return "\n".join(lines)
