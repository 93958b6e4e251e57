"""Abstention: what automatic injection would put into the prompt, per relevance floor.

    .venv/bin/python -m bench.retrieval.abstain [--datasets locomo,madial-zh,madial-en]
        [--fusion zconf] [--out bench/results/relevance.json] [--no-plot]

For each dataset of ../shared/bench it builds the throw-away vault once (as `memvault eval
retrieval` does), runs the answerable questions and the no-answer sets (everyday chat in
every scope; LoCoMo's questions asked in the next conversation with the names swapped)
through hybrid search, keeps each result's absolute relevance (indexer.relevance), then for
every floor of the curve writes ranked lines with "relevant": N (DESIGN.md 6) and scores
them with ../shared/bench/score_injection.py. Prints the curve, marks the default floor and
writes the results JSON (+ a plot).
"""

from __future__ import annotations

import argparse
import json
import pickle
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.retrieval.datasets import SHARED, Dataset, datasets, read_jsonl
from bench.retrieval.report import machine, write_json
from indexer.engine import Engine
from indexer.evaluate import build_vault, leading_passed
from indexer.relevance import DEFAULT_FLOOR, RELEVANCE_VERSION
from indexer.search import SearchRequest, hybrid_search
from vault.keys import ScopeId

RESULTS = Path(__file__).resolve().parents[1] / "results" / "relevance.json"
CACHE = Path.home() / ".cache" / "memvault" / "eval-embeddings.sqlite"
SCORER = SHARED / "score_injection.py"
FLOORS = (0.0, 0.2, 0.25, 0.3, 0.35, 0.4, 0.44, 0.45, 0.5, 0.55, 0.6, 0.7, 0.8, 1.01)
NOANSWER = {
    "locomo": {
        "chitchat": "locomo/queries_chitchat.jsonl",
        "swapped": "locomo/queries_noanswer.jsonl",
    },
    "madial-zh": {"chitchat": "madial/queries_zh_chitchat.jsonl"},
    "madial-en": {"chitchat": "madial/queries_en_chitchat.jsonl"},
}  # fmt: skip


@dataclass(frozen=True)
class Line:
    query_id: str
    ranked: tuple[str, ...]
    values: tuple[float, ...]  # absolute relevance of each ranked id
    parts: tuple[tuple[float | None, ...], ...]  # (text, vector, matched, query weight)


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m bench.retrieval.abstain")
    ap.add_argument("--datasets", default="locomo,madial-zh,madial-en")
    ap.add_argument("--fusion", default="zconf3")
    ap.add_argument("--cache", type=Path, default=CACHE)
    ap.add_argument("--top-k", type=int, default=10)
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--no-plot", action="store_true")
    ap.add_argument("--dump", type=Path, help="also write every line's components here (pickle)")
    return ap.parse_args(argv)


def run_set(engine: Engine, rows: Sequence[dict[str, Any]], fusion: str, top_k: int) -> list[Line]:
    backends = {"text": engine.text, "vector": engine.vector}
    calibrated = engine.calibrated()
    out = []
    for row in rows:
        request = SearchRequest(
            query=str(row["question"]),
            index_key=ScopeId(None, str(row["scope"])).index_key,
            top_k=top_k,
            fusion=fusion,
        )
        results = hybrid_search(request, backends, engine.lookup, calibrated=calibrated)
        rel = [r.relevance for r in results if r.relevance is not None]
        values = tuple(x.value for x in rel)
        parts = tuple((x.text, x.vector, x.matched, x.query_weight) for x in rel)
        ranked = tuple(r.doc.episode_id for r in results)
        out.append(Line(row["query_id"], ranked, values, parts))
    return out


def latency(engine: Engine, rows: Sequence[dict[str, Any]]) -> dict[str, float]:
    """p50/p95 ms of one top-5 hybrid search (query embedding included), today's pipeline
    (zconf-2, no relevance) against this one (zconf-3 + relevance), interleaved so both see
    the same machine load."""
    backends = {"text": engine.text, "vector": engine.vector}
    calibrated = engine.calibrated()
    lat: dict[str, list[float]] = {"before": [], "after": []}
    for row in rows:
        key = ScopeId(None, str(row["scope"])).index_key
        for name, fusion, cal in (("before", "zconf", None), ("after", "zconf3", calibrated)):
            request = SearchRequest(query=str(row["question"]), index_key=key, fusion=fusion)
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
            n = leading_passed(line.values, floor)
            row = {"query_id": line.query_id, "ranked": list(line.ranked), "relevant": n}
            handle.write(json.dumps(row) + "\n")


def score(ds: Dataset, ans: Path, noq: Path, noa: Path, k: int = 5) -> dict[str, Any]:
    cmd = [sys.executable, str(SCORER), str(ds.queries), str(ans), str(noq), str(noa),
           "--k", str(k), "--json", *ds.score_args()]  # fmt: skip
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def curve(ds: Dataset, answerable: list[Line], sets: dict[str, tuple[Path, list[Line]]],
          tmp: Path) -> list[dict[str, Any]]:  # fmt: skip
    rows = []
    for floor in FLOORS:
        ans = tmp / f"{ds.name}-answerable.jsonl"
        write_lines(ans, answerable, floor)
        row: dict[str, Any] = {"floor": floor, "default": floor == DEFAULT_FLOOR}
        for name, (qpath, lines) in sets.items():
            noa = tmp / f"{ds.name}-{name}.jsonl"
            write_lines(noa, lines, floor)
            res = score(ds, ans, qpath, noa)
            row["injected_hit@5"] = res["injected_hit@5"]
            row["plain_hit@5"] = res["plain_hit@5"]
            row["mean_injected_answerable"] = res["mean_injected_answerable"]
            row[f"abstain_{name}"] = res["abstain"]
            row[f"mean_injected_{name}"] = res["mean_injected_noanswer"]
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    wanted = args.datasets.split(",")
    started = time.perf_counter()
    out: dict[str, Any] = {}
    timings: dict[str, Any] = {}
    dumps: dict[str, Any] = {}
    for ds in (d for d in datasets() if d.name in wanted):
        with tempfile.TemporaryDirectory(prefix="memvault-abstain-") as tmp_name:
            tmp = Path(tmp_name)
            build_vault(tmp / "vault", ds.episodes)
            with Engine.open(tmp / "vault", cache_path=args.cache) as engine:
                engine.reconcile()
                t0 = time.perf_counter()
                rows = [r for r in read_jsonl(ds.queries) if ds.wanted(r)]
                answerable = run_set(engine, rows, args.fusion, args.top_k)
                sets = {}
                for name, rel in NOANSWER[ds.name].items():
                    qpath = SHARED / rel
                    lines = run_set(engine, list(read_jsonl(qpath)), args.fusion, args.top_k)
                    sets[name] = (qpath, lines)
                timings[ds.name] = {"query_s": time.perf_counter() - t0, **latency(engine, rows)}
                print(f"[{ds.name}] latency {timings[ds.name]}", flush=True)
            out[ds.name] = curve(ds, answerable, sets, tmp)
            dumps[ds.name] = (answerable, {k: v[1] for k, v in sets.items()})
        print(table(ds.name, out[ds.name]), flush=True)
    data = {
        "suite": "relevance",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "parameters": {
            "relevance": RELEVANCE_VERSION,
            "fusion": args.fusion,
            "default_floor": DEFAULT_FLOOR,
            "top_k": args.top_k,
        },  # fmt: skip
        "curves": out,
        "timings": timings,
        "total_s": time.perf_counter() - started,
    }
    write_json(args.out, data)
    if not args.no_plot:
        print(f"wrote {plot(data, args.out.with_name('relevance_curve.png'))}")
    if args.dump:
        args.dump.write_bytes(pickle.dumps(dumps))
    print(f"wrote {args.out} in {data['total_s']:.0f} s")
    return 0


def plot(data: dict[str, Any], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curves = data["curves"]
    fig, axes = plt.subplots(1, len(curves), figsize=(5 * len(curves), 4), squeeze=False)
    for ax, (name, rows) in zip(axes[0], curves.items(), strict=True):
        floors = [r["floor"] for r in rows]
        ax.plot(floors, [r["injected_hit@5"] for r in rows], "o-", label="injected hit@5")
        for key in (k for k in rows[0] if k.startswith("abstain_")):
            ax.plot(floors, [r[key] for r in rows], "s--", label=key.replace("_", " "))
        ax.axvline(data["parameters"]["default_floor"], color="grey", linestyle=":")
        ax.set_title(f"{name} (default floor dotted)")
        ax.set_xlabel("relevance floor")
        ax.set_ylim(0, 100)
        ax.legend(fontsize=8)
    axes[0][0].set_ylabel("%")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def table(name: str, rows: list[dict[str, Any]]) -> str:
    keys = [
        k for k in rows[0] if k.startswith(("abstain_", "mean_injected_")) and "answerable" not in k
    ]
    head = f"[{name}] floor  inj_hit@5 plain  mean_ans  " + "  ".join(keys)
    lines = [head]
    for r in rows:
        mark = " *" if r["default"] else "  "
        vals = "  ".join(f"{r[k]:>{len(k)}.1f}" for k in keys)
        lines.append(
            f"{mark}{r['floor']:>12.2f}  {r['injected_hit@5']:9.1f} {r['plain_hit@5']:5.1f}"
            f"  {r['mean_injected_answerable']:8.2f}  {vals}"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
