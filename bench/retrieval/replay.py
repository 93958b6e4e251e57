"""Capture every candidate list a benchmark query gets from the real indexes once, then
replay search (fusion, relevance, gate) on them without tantivy, FAISS or the model.

    .venv/bin/python -m bench.retrieval.replay capture [--out /tmp/memvault-replay]
    .venv/bin/python -m bench.retrieval.replay score [--out /tmp/memvault-replay]

`capture` builds each benchmark vault once (embeddings from the eval cache) and stores, per
query, the text index's wide candidate list, the vector index's list, the term statistics
of the query's terms and every candidate's doc. `score` runs indexer.retrieval.search.hybrid_search
on those through replay backends: the search code under test is exactly the product's, only
the two index answers are recorded. A tuning tool, not part of the benchmark run.
"""

from __future__ import annotations

import argparse
import pickle
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.retrieval.datasets import SHARED, read_jsonl
from indexer.backends import tokenize
from indexer.backends.calibration import calibrate
from indexer.backends.records import ChunkDoc, Hit
from indexer.engine import Engine
from indexer.evaluate import build_vault
from indexer.retrieval.relevance import BIGRAM_FIELD, WORD_FIELD, VectorScale
from indexer.retrieval.relevance_judge import Calibrated
from indexer.retrieval.search import (
    CANDIDATES,
    CONTEXT_CANDIDATES,
    SearchRequest,
    hybrid_search,
)
from vault.layout.keys import ScopeId

CACHE = Path.home() / ".cache" / "memvault" / "eval-embeddings.sqlite"
OUT = Path("/tmp/memvault-replay")
CATS = {"1", "2", "3", "4"}
# vault name -> (episodes, {set name: (queries file, answerable?)})
VAULTS: dict[str, tuple[str, dict[str, tuple[str, bool]]]] = {
    "locomo": ("locomo/episodes.jsonl", {
        "locomo": ("locomo/queries.jsonl", True),
        "locomo-chitchat": ("locomo/queries_chitchat.jsonl", False),
        "locomo-swapped": ("locomo/queries_noanswer.jsonl", False),
    }),
    "madial-zh": ("madial/episodes_zh.jsonl", {
        "madial-zh": ("madial/queries_zh.jsonl", True),
        "madial-zh-chitchat": ("madial/queries_zh_chitchat.jsonl", False),
        "xl-en-on-zh": ("madial/queries_en_on_zh.jsonl", True),
    }),
    "madial-en": ("madial/episodes_en.jsonl", {
        "madial-en": ("madial/queries_en.jsonl", True),
        "madial-en-chitchat": ("madial/queries_en_chitchat.jsonl", False),
        "xl-zh-on-en": ("madial/queries_zh_on_en.jsonl", True),
    }),
}  # fmt: skip


@dataclass(frozen=True)
class Captured:
    query_id: str
    query: str
    key: str
    gold: tuple[str, ...]
    text: tuple[Hit, ...]
    vector: tuple[Hit, ...]
    num_docs: int
    freq: Mapping[tuple[str, str], int]
    present: frozenset[tuple[str, str]]  # the query terms some memory of the scope holds


def _keys(query: str) -> list[tuple[str, str]]:
    analysis = tokenize.analyze_query(query)
    return [(WORD_FIELD, t) for t in analysis.words] + [(BIGRAM_FIELD, t) for t in analysis.bigrams]


def capture(out: Path) -> None:
    import tempfile

    out.mkdir(parents=True, exist_ok=True)
    for vault_name, (episodes, sets) in VAULTS.items():
        with tempfile.TemporaryDirectory(prefix="memvault-replay-") as tmp:
            build_vault(Path(tmp) / "vault", SHARED / episodes)
            with Engine.open(Path(tmp) / "vault", cache_path=CACHE) as engine:
                t0 = time.perf_counter()
                engine.reconcile()
                print(f"[{vault_name}] indexed in {time.perf_counter() - t0:.0f} s", flush=True)
                scale = VectorScale.of(calibrate(engine.embedder))
                docs: dict[int, ChunkDoc] = {}
                data: dict[str, list[Captured]] = {}
                for set_name, (qfile, answerable) in sets.items():
                    rows = [r for r in read_jsonl(SHARED / qfile) if _wanted(r, answerable)]
                    data[set_name] = [_one(engine, r, docs) for r in rows]
                    print(f"[{set_name}] {len(rows)} queries", flush=True)
                blob = {"scale": scale, "docs": docs, "sets": data}
                (out / f"{vault_name}.pkl").write_bytes(pickle.dumps(blob))


def _wanted(row: dict[str, Any], answerable: bool) -> bool:
    if not answerable:
        return True
    return bool(row.get("gold_ids")) and str(row.get("category", "1")) in CATS


def _one(engine: Engine, row: dict[str, Any], docs: dict[int, ChunkDoc]) -> Captured:
    query = str(row["question"])
    key = ScopeId(None, str(row["scope"])).index_key
    kw = {"statuses": ("active",), "kinds": ("episode",), "now": None, "allowed": None}
    text = engine.text.search(query, (key,), CONTEXT_CANDIDATES, **kw)
    vector = engine.vector.search(query, (key,), CANDIDATES, **kw)
    wanted = {h.chunk_id for h in (*text, *vector)} - docs.keys()
    docs.update(engine.lookup(wanted))
    num_docs, freq = engine.text.term_stats(_keys(query))
    present = engine.text.present(_keys(query), (key,))
    gold = tuple(str(g) for g in row.get("gold_ids") or ())
    return Captured(
        row["query_id"], query, key, gold, tuple(text), tuple(vector), num_docs, freq, present
    )


class _Backend:
    """Answers a search with the recorded list of the query being replayed."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.current: Captured | None = None

    def search(self, query: str, keys: Any, limit: int, **_: Any) -> list[Hit]:
        assert self.current is not None and self.current.query == query
        return list(getattr(self.current, self.name)[:limit])


def replay(
    blob: Mapping[str, Any],
    rows: Sequence[Captured],
    request_for: Any = None,
    top_k: int = 10,
) -> list[tuple[Captured, list[Any]]]:
    """(captured, results) per query through the product's hybrid_search."""
    text, vector = _Backend("text"), _Backend("vector")
    docs: Mapping[int, ChunkDoc] = blob["docs"]
    current: list[Captured] = []

    def stats(keys: Iterable[tuple[str, str]]) -> tuple[int, dict[tuple[str, str], int]]:
        row = current[0]
        return row.num_docs, {k: row.freq.get(k, 0) for k in keys}

    def present(keys: Iterable[tuple[str, str]], scope: Sequence[str]) -> frozenset:
        return frozenset(k for k in keys if k in current[0].present)

    calibrated = Calibrated(stats, blob["scale"], present)
    out = []
    for row in rows:
        text.current = vector.current = row
        current[:] = [row]
        request = (request_for or _request)(row, top_k)
        results = hybrid_search(
            request,
            {"text": text, "vector": vector},
            lambda ids: {i: docs[i] for i in ids if i in docs},
            calibrated=calibrated,
        )
        out.append((row, results))
    return out


def _request(row: Captured, top_k: int) -> SearchRequest:
    return SearchRequest(query=row.query, index_key=row.key, top_k=top_k, gate=GATE)


GATE = True


def metrics(pairs: Sequence[tuple[Captured, list[Any]]], k: int = 5) -> dict[str, float]:
    """score.py's hit@5 / recall@5 / recall@10 / MRR and score_injection.py's numbers."""
    n = len(pairs) or 1
    hit = rec5 = rec10 = mrr = inj = injected_n = abstain = 0.0
    for row, results in pairs:
        ranked = [r.doc.episode_id for r in results]
        passed = 0
        for r in results:
            if r.relevance is None or not r.relevance.passed:
                break
            passed += 1
        cut = min(k, passed)
        injected_n += cut
        abstain += passed == 0
        gold = set(row.gold)
        if not gold:
            continue
        hit += bool(gold & set(ranked[:k]))
        inj += bool(gold & set(ranked[:cut]))
        rec5 += len(gold & set(ranked[:5])) / len(gold)
        rec10 += len(gold & set(ranked[:10])) / len(gold)
        mrr += next((1 / i for i, e in enumerate(ranked, 1) if e in gold), 0.0)
    pct = 100 / n
    return {
        "hit@5": hit * pct, "recall@5": rec5 * pct, "recall@10": rec10 * pct,
        "mrr": mrr * pct, "injected_hit@5": inj * pct, "abstain": abstain * pct,
        "mean_injected": injected_n / n,
    }  # fmt: skip


class _Unpickler(pickle.Unpickler):
    # `capture` run as __main__ pickles Captured as __main__.Captured.
    def find_class(self, module: str, name: str) -> Any:
        return super().find_class(__name__ if module == "__main__" else module, name)


def load(out: Path, vault_name: str) -> dict[str, Any]:
    with (out / f"{vault_name}.pkl").open("rb") as handle:
        return _Unpickler(handle).load()


def score_all(out: Path, request_for: Any = None) -> dict[str, dict[str, float]]:
    table: dict[str, dict[str, float]] = {}
    for vault_name in VAULTS:
        blob = load(out, vault_name)
        for set_name, rows in blob["sets"].items():
            table[set_name] = metrics(replay(blob, rows, request_for))
    return table


def print_table(table: Mapping[str, Mapping[str, float]]) -> None:
    cols = ("hit@5", "recall@5", "recall@10", "injected_hit@5", "abstain", "mean_injected")
    print(f"{'set':20s} " + " ".join(f"{c:>14s}" for c in cols))
    for name, row in table.items():
        print(f"{name:20s} " + " ".join(f"{row[c]:14.1f}" for c in cols))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.retrieval.replay")
    ap.add_argument("what", choices=("capture", "score"))
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    if args.what == "capture":
        capture(args.out)
    else:
        print_table(score_all(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
