"""What automatic injection would put into the prompt, per set and per relevance floor.

    .venv/bin/python -m bench.retrieval.abstain [--vaults locomo,madial-zh,madial-en]
        [--out bench/results/relevance.json] [--no-plot]

For each vault of ../shared/bench it builds the throw-away vault once (as `memvault eval
retrieval` does) and runs, through the product's search:
- every answerable set (LoCoMo cat 1-4, MADial zh/en, and the two cross-language sets:
  English dialogues against the Chinese memories, Chinese against the English) in text,
  vector and hybrid mode, scored with ../shared/bench/score.py;
- hybrid with the message gate on (as the plugin injects) on the answerable and the
  no-answer sets (everyday chat in every scope; LoCoMo's questions asked in the next
  conversation with the names swapped), keeping each result's absolute relevance, then for
  every floor of the curve the ranked lines with "relevant": N (DESIGN.md 6), scored with
  ../shared/bench/score_injection.py;
- search latency of the landed pipeline (zconf-3, no gate, no scope check) and this one,
  interleaved so both see the same load.
Prints one table per vault and the goals of issue 21, writes the results JSON (+ a plot).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.retrieval.abstain_report import check_goals, plot, table
from bench.retrieval.datasets import SHARED, Dataset, read_jsonl
from bench.retrieval.report import machine, score, write_json
from indexer.engine import Engine
from indexer.evaluate import build_vault, leading
from indexer.gate.rules import GATE_VERSION
from indexer.retrieval.fusion import FULL_EVIDENCE
from indexer.retrieval.relevance import (
    DEFAULT_FLOOR,
    FOLLOW_SHARE,
    RELEVANCE_VERSION,
    Relevance,
    with_followers,
)
from indexer.retrieval.relevance_judge import Calibrated
from indexer.retrieval.search import SearchRequest, hybrid_search
from vault.layout.keys import ScopeId

RESULTS = Path(__file__).resolve().parents[1] / "results" / "relevance.json"
CACHE = Path.home() / ".cache" / "memvault" / "eval-embeddings.sqlite"
SCORER = SHARED / "score_injection.py"
FLOORS = (0.0, 0.2, 0.3, 0.35, 0.4, 0.42, 0.44, 0.46, 0.5, 0.55, 0.6, 0.7, 0.8, 1.01)
CATS = ("1", "2", "3", "4")
# vault -> (episodes, answerable sets (name, queries, categories), no-answer sets)
VAULTS: dict[str, tuple[str, list[tuple[str, str, tuple[str, ...]]], dict[str, str]]] = {
    "locomo": ("locomo/episodes.jsonl", [("locomo", "locomo/queries.jsonl", CATS)],
               {"chitchat": "locomo/queries_chitchat.jsonl",
                "swapped": "locomo/queries_noanswer.jsonl"}),
    "madial-zh": ("madial/episodes_zh.jsonl", [
        ("madial-zh", "madial/queries_zh.jsonl", ()),
        ("xl-en-on-zh", "madial/queries_en_on_zh.jsonl", ()),
    ], {"chitchat": "madial/queries_zh_chitchat.jsonl"}),
    "madial-en": ("madial/episodes_en.jsonl", [
        ("madial-en", "madial/queries_en.jsonl", ()),
        ("xl-zh-on-en", "madial/queries_zh_on_en.jsonl", ()),
    ], {"chitchat": "madial/queries_en_chitchat.jsonl"}),
}  # fmt: skip


@dataclass(frozen=True)
class Line:
    query_id: str
    ranked: tuple[str, ...]
    values: tuple[float, ...]  # absolute relevance of each ranked id
    gated: bool  # the message gate skipped the query: nothing passes at any floor

    def relevant(self, floor: float) -> int:
        """Leading results that pass at `floor`, by the product's own rule (the floor, then
        runners-up: indexer.retrieval.relevance.with_followers)."""
        judged = [Relevance(None, None, v, floor, gated=self.gated) for v in self.values]
        return leading([r.passed for r in with_followers(judged)])


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m bench.retrieval.abstain")
    ap.add_argument("--vaults", default=",".join(VAULTS))
    ap.add_argument("--cache", type=Path, default=CACHE)
    ap.add_argument("--top-k", type=int, default=10)
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--no-plot", action="store_true")
    return ap.parse_args(argv)


def _request(row: dict[str, Any], top_k: int, **kw: Any) -> SearchRequest:
    key = ScopeId(None, str(row["scope"])).index_key
    return SearchRequest(query=str(row["question"]), index_key=key, top_k=top_k, **kw)


def run_set(engine: Engine, rows: Sequence[dict[str, Any]], top_k: int) -> list[Line]:
    """Hybrid search with the gate on, as the plugin's automatic recall runs it."""
    backends = {"text": engine.text, "vector": engine.vector}
    calibrated = engine.calibrated()
    out = []
    for row in rows:
        request = _request(row, top_k, gate=True)
        results = hybrid_search(request, backends, engine.lookup, calibrated=calibrated)
        values = tuple(r.relevance.value for r in results if r.relevance is not None)
        gated = any(r.relevance is not None and r.relevance.gated for r in results)
        ranked = tuple(r.doc.episode_id for r in results)
        out.append(Line(row["query_id"], ranked, values, gated))
    return out


def modes(engine: Engine, ds: Dataset, rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """score.py's numbers for text, vector and hybrid (no gate: ranking only)."""
    out = {}
    for mode in ("text", "vector", "hybrid"):
        ranked = {
            row["query_id"]: [r.doc.episode_id for r in engine.run(_request(row, 10, mode=mode))]
            for row in rows
        }
        out[mode] = score(ds, ranked)
    return out


def latency(engine: Engine, rows: Sequence[dict[str, Any]]) -> dict[str, float]:
    """p50/p95 ms of one top-5 hybrid search (query embedding included): the landed
    pipeline (zconf-3, no gate, no scope check of the query's terms) against this one."""
    backends = {"text": engine.text, "vector": engine.vector}
    now = engine.calibrated()
    landed = Calibrated(now.term_stats, now.scale)  # no presence: no absent-term demand
    lat: dict[str, list[float]] = {"before": [], "after": []}
    for row in rows:
        for name, fusion, cal, gate in (("before", "zconf3", landed, False),
                                        ("after", "zconf4", now, True)):  # fmt: skip
            request = _request(row, 5, fusion=fusion, gate=gate)
            t0 = time.perf_counter()
            hybrid_search(request, backends, engine.lookup, calibrated=cal)
            lat[name].append(1000 * (time.perf_counter() - t0))
    out = {}
    for name, values in lat.items():
        values.sort()
        out[f"p50_ms_{name}"] = round(values[len(values) // 2], 2)
        out[f"p95_ms_{name}"] = round(values[int(0.95 * (len(values) - 1))], 2)
    return out


def write_lines(path: Path, lines: Sequence[Line], floor: float) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for line in lines:
            row = {"query_id": line.query_id, "ranked": list(line.ranked)}
            handle.write(json.dumps({**row, "relevant": line.relevant(floor)}) + "\n")


def inject_score(ds: Dataset, ans: Path, noq: Path, noa: Path) -> dict[str, Any]:
    cmd = [sys.executable, str(SCORER), str(ds.queries), str(ans), str(noq), str(noa),
           "--k", "5", "--json", *ds.score_args()]  # fmt: skip
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def curve(
    ds: Dataset, answerable: list[Line], sets: dict[str, tuple[Path, list[Line]]], tmp: Path
) -> list[dict[str, Any]]:
    rows = []
    for floor in FLOORS:
        ans = tmp / f"{ds.name}-answerable.jsonl"
        write_lines(ans, answerable, floor)
        row: dict[str, Any] = {"floor": floor, "default": floor == DEFAULT_FLOOR}
        for name, (qpath, lines) in sets.items():
            noa = tmp / f"{ds.name}-{name}.jsonl"
            write_lines(noa, lines, floor)
            res = inject_score(ds, ans, qpath, noa)
            row["injected_hit@5"] = res["injected_hit@5"]
            row["plain_hit@5"] = res["plain_hit@5"]
            row["mean_injected_answerable"] = res["mean_injected_answerable"]
            row[f"abstain_{name}"] = res["abstain"]
            row[f"mean_injected_{name}"] = res["mean_injected_noanswer"]
        rows.append(row)
    return rows


def run_vault(name: str, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    episodes, answerable_sets, noanswer = VAULTS[name]
    build_vault(tmp / "vault", SHARED / episodes)
    out: dict[str, Any] = {}
    with Engine.open(tmp / "vault", cache_path=args.cache) as engine:
        engine.reconcile()
        sets = {}
        for set_name, rel in noanswer.items():
            rows = list(read_jsonl(SHARED / rel))
            sets[set_name] = (SHARED / rel, run_set(engine, rows, args.top_k))
        for set_name, qfile, cats in answerable_sets:
            ds = Dataset(set_name, SHARED / episodes, SHARED / qfile, cats)
            rows = [r for r in read_jsonl(ds.queries) if ds.wanted(r)]
            t0 = time.perf_counter()
            lines = run_set(engine, rows, args.top_k)
            entry: dict[str, Any] = {"n": len(rows), "query_s": time.perf_counter() - t0}
            entry["gate_pass"] = round(100 * sum(not x.gated for x in lines) / len(lines), 2)
            entry["modes"] = modes(engine, ds, rows)
            entry["curve"] = curve(ds, lines, sets, tmp)
            entry["latency"] = latency(engine, rows)
            out[set_name] = entry
            print(table(set_name, entry), flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    started = time.perf_counter()
    results: dict[str, Any] = {}
    for name in args.vaults.split(","):
        with tempfile.TemporaryDirectory(prefix="memvault-abstain-") as tmp_name:
            results.update(run_vault(name, args, Path(tmp_name)))
    data = {
        "suite": "relevance",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "parameters": {
            "relevance": RELEVANCE_VERSION,
            "fusion": "zconf4",
            "full_evidence": FULL_EVIDENCE,
            "follow_share": FOLLOW_SHARE,
            "gate": GATE_VERSION,
            "default_floor": DEFAULT_FLOOR,
            "top_k": args.top_k,
        },
        "sets": results,
        "goals": check_goals(results),
        "total_s": time.perf_counter() - started,
    }
    for goal in data["goals"]:
        print(f"{'met ' if goal['met'] else 'MISS'}  {goal['goal']}: {goal['measured']}")
    write_json(args.out, data)
    if not args.no_plot:
        print(f"wrote {plot(data, args.out.with_name('relevance_curve.png'))}")
    print(f"wrote {args.out} in {data['total_s']:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
