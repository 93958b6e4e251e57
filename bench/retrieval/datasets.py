"""The benchmark datasets under ../shared/bench and how score.py is asked to score them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SHARED = Path(__file__).resolve().parents[3] / "shared" / "bench"


@dataclass(frozen=True)
class Dataset:
    name: str
    episodes: Path
    queries: Path
    categories: tuple[str, ...] = ()  # score only these `category` values (empty = all)

    def score_args(self) -> list[str]:
        return ["--categories", ",".join(self.categories)] if self.categories else []

    def wanted(self, row: dict[str, Any]) -> bool:
        """Queries score.py will count (others are not run at all, to save time)."""
        if not row.get("gold_ids"):
            return False
        return not self.categories or str(row.get("category")) in self.categories


def datasets(root: Path = SHARED) -> list[Dataset]:
    return [
        Dataset(
            "locomo",
            root / "locomo" / "episodes.jsonl",
            root / "locomo" / "queries.jsonl",
            ("1", "2", "3", "4"),
        ),
        Dataset(
            "madial-zh", root / "madial" / "episodes_zh.jsonl", root / "madial" / "queries_zh.jsonl"
        ),
        Dataset(
            "madial-en", root / "madial" / "episodes_en.jsonl", root / "madial" / "queries_en.jsonl"
        ),
    ]


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def queries(ds: Dataset) -> list[dict[str, Any]]:
    return [row for row in read_jsonl(ds.queries) if ds.wanted(row)]


def write_ranked(path: Path, ranked: dict[str, list[str]]) -> None:
    with path.open("w", encoding="utf-8") as out:
        for qid, ids in ranked.items():
            out.write(json.dumps({"query_id": qid, "ranked": ids}) + "\n")
