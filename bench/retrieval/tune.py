"""Fusion tuning on cached candidate lists (not part of the benchmark run).

    .venv/bin/python -m bench.retrieval.tune [--refresh]

Collects, once per dataset, each query's text hits (depth 200) and the cosine of every
chunk of its scope, then replays fusion variants offline and scores them in-process with
the same metrics as score.py. Every variant is applied to all datasets alike.
"""

from __future__ import annotations

import argparse
import math
import pickle
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.retrieval.datasets import datasets, queries
from indexer.backends.records import Hit
from indexer.engine import Engine
from indexer.evaluate import build_vault
from indexer.retrieval.fusion import rrf, zconf
from vault.layout.keys import ScopeId

CACHE = Path(tempfile.gettempdir()) / "memvault-tune"
Lists = dict[str, list[Hit]]


def collect(refresh: bool = False) -> dict[str, dict[str, Any]]:
    from bench.retrieval.__main__ import CACHE as EMB

    CACHE.mkdir(exist_ok=True)
    out = {}
    for ds in datasets():
        path = CACHE / f"{ds.name}.pkl"
        if path.exists() and not refresh:
            out[ds.name] = pickle.loads(path.read_bytes())
            continue
        rows = queries(ds)
        data: dict[str, Any] = {"queries": [], "episode": {}}
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "v"
            build_vault(root, ds.episodes)
            with Engine.open(root, cache_path=EMB) as engine:
                engine.reconcile()
                for row in rows:
                    key = ScopeId(None, str(row["scope"])).index_key
                    q = str(row["question"])
                    text = engine.text.search(q, key, 200, kinds=("episode",))
                    vec = engine.vector.search(q, key, 100000, kinds=("episode",))
                    for h in (*text, *vec):
                        if h.chunk_id not in data["episode"]:
                            data["episode"][h.chunk_id] = engine.manifest.doc(h.chunk_id).episode_id
                    data["queries"].append((row["query_id"], row["gold_ids"], text, vec))
        path.write_bytes(pickle.dumps(data))
        out[ds.name] = data
    return out


def metrics(results: Sequence[tuple[list[str], list[str]]]) -> dict[str, float]:
    acc = {"hit@5": 0.0, "recall@5": 0.0, "recall@10": 0.0, "mrr": 0.0}
    for gold, ranked in results:
        g = set(gold)
        acc["hit@5"] += 100.0 * bool(g & set(ranked[:5]))
        acc["recall@5"] += 100.0 * len(g & set(ranked[:5])) / len(g)
        acc["recall@10"] += 100.0 * len(g & set(ranked[:10])) / len(g)
        first = next((i for i, r in enumerate(ranked) if r in g), None)
        acc["mrr"] += 0.0 if first is None else 100.0 / (first + 1)
    return {k: v / len(results) for k, v in acc.items()}


Fuser = Callable[[Lists, list[Hit]], list[tuple[int, float]]]


def evaluate(data: dict[str, Any], fuser: Fuser) -> dict[str, float]:
    results = []
    for _qid, gold, text, vec in data["queries"]:
        seen: dict[str, None] = {}
        for cid, _ in fuser({"text": text, "vector": vec}, vec):
            seen.setdefault(data["episode"][cid], None)
        results.append((gold, list(seen)[:50]))
    return metrics(results)


def lib_zconf(depth: int = 50, weights: Mapping[str, float] | None = None) -> Fuser:
    w = dict(weights or {"text": 1.0, "vector": 0.25})

    def run(lists: Lists, _all: list[Hit]) -> list[tuple[int, float]]:
        cut = {k: v[:depth] for k, v in lists.items() if v[:depth]}
        return [(f.chunk_id, f.score) for f in zconf(cut, w)]

    return run


def lib_rrf(depth: int = 50, k: float = 3.0, weights: Mapping[str, float] | None = None) -> Fuser:
    w = dict(weights or {"text": 1.0, "vector": 0.25})

    def run(lists: Lists, _all: list[Hit]) -> list[tuple[int, float]]:
        cut = {s: v[:depth] for s, v in lists.items()}
        return [(f.chunk_id, f.score) for f in rrf(cut, w, k=k)]

    return run


def zconf_true(
    depth: int = 50,
    weights: Mapping[str, float] | None = None,
    bonus: float = 0.5,
    text_floor: str = "min",
) -> Fuser:
    """zconf, but a candidate missing from the vector top-`depth` gets its true cosine's z
    (the scope's cosines are all known), not the list's lowest z."""
    w = dict(weights or {"text": 1.0, "vector": 0.25})

    def z_of(values: list[float]) -> tuple[float, float]:
        mean = sum(values) / len(values)
        std = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
        return mean, std

    def run(lists: Lists, everything: list[Hit]) -> list[tuple[int, float]]:
        text, vec = lists["text"][:depth], lists["vector"][:depth]
        cos = {h.chunk_id: h.score for h in everything}
        parts: dict[str, tuple[dict[int, float], float, float]] = {}
        if text:
            mean, std = z_of([h.score for h in text])
            if std == 0:
                parts["text"] = ({h.chunk_id: 1.0 for h in text}, 0.0, (1 + bonus) * w["text"])
            else:
                z = {h.chunk_id: (h.score - mean) / std for h in text}
                floor = min(z.values()) if text_floor == "min" else min(z.values()) - 0.5
                parts["text"] = (z, floor, (max(0.0, max(z.values())) + bonus) * w["text"])
        if vec:
            mean, std = z_of([h.score for h in vec])
            std = std or 1.0
            z = {cid: (c - mean) / std for cid, c in cos.items()}
            conf = (max(0.0, (vec[0].score - mean) / std) + bonus) * w["vector"]
            parts["vector"] = (z, min(z.values()), conf)
        total = sum(p[2] for p in parts.values()) or 1.0
        ids = {h.chunk_id for h in text} | {h.chunk_id for h in vec}
        scores = {
            cid: sum(c / total * zs.get(cid, fl) for zs, fl, c in parts.values()) for cid in ids
        }
        return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))

    return run


def variants() -> dict[str, Fuser]:
    v: dict[str, Fuser] = {"zconf-2 (current)": lib_zconf()}
    for wv in (0.3, 0.4):
        v[f"zconf vec w {wv}"] = lib_zconf(weights={"text": 1.0, "vector": wv})
        v[f"zconf true-cos d50 w{wv}"] = zconf_true(weights={"text": 1.0, "vector": wv})
    for d in (20, 30, 100, 200):
        v[f"zconf depth {d}"] = lib_zconf(depth=d)
    for wv in (0.15, 0.35, 0.5):
        v[f"zconf vec w {wv}"] = lib_zconf(weights={"text": 1.0, "vector": wv})
    for k in (2.0, 5.0, 10.0):
        for wv in (0.5, 0.75, 1.0):
            v[f"rrf k{k:g} vec w {wv}"] = lib_rrf(k=k, weights={"text": 1.0, "vector": wv})
    for wv in (0.25, 0.35, 0.5):
        for d in (50, 100):
            v[f"zconf true-cos d{d} w{wv}"] = zconf_true(
                depth=d, weights={"text": 1.0, "vector": wv}
            )
    return v


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.retrieval.tune")
    ap.add_argument("--refresh", action="store_true")
    args = ap.parse_args(argv)
    data = collect(args.refresh)
    names = list(data)
    print(f"{'variant':<28} " + " ".join(f"{n[:9]:>9} h5/R5/R10" for n in names))
    for name, fuser in variants().items():
        cells = []
        for ds in names:
            m = evaluate(data[ds], fuser)
            cells.append(f"{m['hit@5']:5.1f}/{m['recall@5']:4.1f}/{m['recall@10']:4.1f}")
        print(f"{name:<28} " + "  ".join(cells), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
