"""`memvault eval retrieval` (DESIGN.md 6): a throw-away vault from a benchmark, searched
through the normal pipeline, one query at a time inside its own scope; each line also says
how many leading results pass the relevance floor ("relevant")."""

from __future__ import annotations

import json
import logging
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from indexer.backends.embeddings import Embedder
from indexer.engine import Engine
from indexer.retrieval.relevance import passes
from indexer.retrieval.search import SearchRequest
from vault.errors import BadRequestError
from vault.files.safewrite import atomic_write
from vault.format.episodes import render_episode
from vault.format.jsonin import load_json
from vault.format.model import Episode, Speaker
from vault.format.yamlio import parse_datetime
from vault.layout.keys import ScopeId
from vault.layout.layout import Layout

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EvalStats:
    episodes: int
    queries: int
    index_seconds: float
    query_seconds: float


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                try:
                    yield load_json(line, f"{path}:{number}")
                except json.JSONDecodeError as exc:
                    raise BadRequestError(f"{path}:{number}: not JSON ({exc.msg})") from exc


def _scope(name: str) -> ScopeId:
    return ScopeId(None, str(name))


def build_vault(root: Path, episodes_path: Path) -> int:
    """Write each benchmark episode as a real episode file in its scope's folder."""
    layout = Layout(root)
    count = 0
    for row in read_jsonl(episodes_path):
        created = parse_datetime(str(row["timestamp"])) if row.get("timestamp") else None
        speaker = str(row.get("speaker") or "").strip()
        episode = Episode(
            id=str(row["episode_id"]),
            created_at=created or datetime(1970, 1, 1, tzinfo=UTC),
            body=str(row["text"]).strip() or "(empty)",
            speaker=Speaker(speaker, speaker) if speaker else None,
            source="import",
            verified=False,
            confidence=0.7,
        )
        path = layout.new_episode_path(_scope(row["scope"]), episode.id, episode.created_at)
        atomic_write(path, render_episode(episode).encode("utf-8"))
        count += 1
    return count


def run_eval(
    episodes_path: Path,
    queries_path: Path,
    out_path: Path,
    *,
    mode: str = "hybrid",
    top_k: int = 50,
    now: datetime | None = None,
    embedder: Embedder | None = None,
    workdir: Path | None = None,
    cache_path: Path | None = None,
    gate: bool = True,
) -> EvalStats:
    """`gate`: the message gate as automatic injection applies it (recall_gate: on)."""
    with tempfile.TemporaryDirectory(prefix="memvault-eval-", dir=workdir) as tmp:
        root = Path(tmp) / "vault"
        started = time.perf_counter()
        count = build_vault(root, episodes_path)
        with Engine.open(root, embedder=embedder, cache_path=cache_path) as engine:
            engine.reconcile()
            indexed = time.perf_counter()
            queries = 0
            clock = int(now.timestamp()) if now else None
            with out_path.open("w", encoding="utf-8") as out:
                for row in read_jsonl(queries_path):
                    scope = _scope(row["scope"])
                    request = SearchRequest(
                        query=str(row["question"]),
                        index_key=scope.index_key,
                        top_k=top_k,
                        mode=mode,
                        now=clock,
                        gate=gate,
                    )
                    results = engine.run(request)
                    ranked = [r.doc.episode_id for r in results]
                    passed = [bool(r.relevance and r.relevance.passed) for r in results]
                    line = {
                        "query_id": row["query_id"],
                        "ranked": ranked,
                        "relevant": leading(passed),
                    }
                    out.write(json.dumps(line) + "\n")
                    queries += 1
            done = time.perf_counter()
    return EvalStats(count, queries, indexed - started, done - indexed)


def leading(passed: Sequence[bool]) -> int:
    """How many leading results passed (gate and floor): DESIGN.md 6 "relevant"."""
    count = 0
    for ok in passed:
        if not ok:
            break
        count += 1
    return count


def leading_passed(values: Sequence[float], floor: float) -> int:
    """How many leading results reach the floor (DESIGN.md 6 "relevant"): what automatic
    injection would use, up to its top-k."""
    return leading([passes(value, floor) for value in values])
