"""Duplicate detection (issue 24 item 4): how often "already remembered as ..." is right, with
the shipped embedding model, on pairs from ../shared/bench (bench.dedupe.pairs says which).

    .venv/bin/python -m bench.dedupe [--out bench/results/dedupe.json] [--skip-chats]

1. Lines: every pair embedded as the index embeds it ("<speaker>: <text>"); for each line
   (the model's calibration mean + k standard deviations, k = 4 .. 12; the same-language
   line swept with the cross-language one as shipped, then the other way) and each rule
   (the cosine alone; the cosine and indexer.same_fact, which ships), the share of every
   class called "duplicate", and precision / recall of "duplicate" over all pairs but the
   noisy class (nearest other fact, same person: LoCoMo repeats some facts), which is
   reported on its own. The exact rule (folded text) is part of both rules.
2. Chats, at the shipped lines only, through the product's own path (bench.dedupe.chats):
   real vaults written with Vault.remember, indexed by the Engine with the shipped model,
   then Vault.find_duplicate (indexer.dedupe.EngineDuplicates) for each probe against the
   whole chat: LoCoMo's observations (one chat per conversation) and MADial's memories in
   both languages (one bilingual chat per user). Leave-one-out (each memory against the
   rest of its chat) counts the facts that would be refused; variants of each memory count
   the repeats found.
Prints the tables; writes the JSON (machine, versions, load, every number, examples).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from bench.cold_shell.vault10k import shared_data
from bench.dedupe import chats
from bench.dedupe.pairs import Pair, build
from bench.sync.report import load, machine_info
from indexer.backends.calibration import (
    CROSS_LANGUAGE_SIGMAS,
    DUPLICATE_SIGMAS,
    Calibration,
    calibrate,
)
from indexer.backends.embeddings import default_embedder
from indexer.dedupe import episode_text, probe_text
from indexer.same_fact import differs, is_chinese
from vault.format.model import Episode, Speaker
from vault.layout.keys import ScopeId
from vault.writes.duplicates import Probe, folded

RESULTS = Path(__file__).resolve().parents[1] / "results" / "dedupe.json"
SIGMAS = [x / 2 for x in range(8, 25)]  # 4.0 .. 12.0
NOISY = "nearest other fact, same person"
_AT = datetime(2026, 1, 1, tzinfo=UTC)
_SCOPE = ScopeId("bench", "group_1")


def texts_of(p: Pair) -> tuple[str, str]:
    """(new, stored) as the product embeds and compares them."""
    who = Speaker(p.stored.speaker, p.stored.speaker) if p.stored.speaker else None
    stored = Episode(id="ep_x", created_at=_AT, body=p.stored.text, speaker=who)
    new = Episode(
        id="",
        created_at=_AT,
        body=p.new.text,
        speaker=Speaker(p.new.speaker, p.new.speaker) if p.new.speaker else None,
    )
    return probe_text(Probe.of(_SCOPE, new, _AT)), episode_text(stored)


def measure_pairs(
    pairs: list[Pair], embed: Callable[[Sequence[str]], np.ndarray]
) -> dict[str, Any]:
    news, olds = zip(*(texts_of(p) for p in pairs), strict=True)
    unique = sorted(set(news) | set(olds))
    vectors = dict(zip(unique, embed(unique), strict=True))
    cosine = np.array([float(vectors[n] @ vectors[o]) for n, o in zip(news, olds, strict=True)])
    exact = np.array([folded(p.new.text) == folded(p.stored.text) for p in pairs])
    cross = np.array([is_chinese(p.new.text) != is_chinese(p.stored.text) for p in pairs])
    agree = np.array([differs(n, o) is None for n, o in zip(news, olds, strict=True)])
    return {"cosine": cosine, "exact": exact, "agree": agree, "cross": cross}


def rates(pairs: list[Pair], called: np.ndarray) -> dict[str, Any]:
    classes: dict[str, list[bool]] = defaultdict(list)
    for p, c in zip(pairs, called, strict=True):
        classes[f"{'dup' if p.duplicate else 'new'} | {p.kind} | {p.lang}"].append(bool(c))
    scored = [(p.duplicate, bool(c)) for p, c in zip(pairs, called, strict=True) if p.kind != NOISY]
    tp = sum(1 for d, c in scored if d and c)
    fp = sum(1 for d, c in scored if not d and c)
    fn = sum(1 for d, c in scored if d and not c)
    return {
        "precision": round(tp / (tp + fp), 4) if tp + fp else None,
        "recall": round(tp / (tp + fn), 4) if tp + fn else None,
        "false_duplicates": fp,
        "classes": {
            k: {"n": len(v), "called_duplicate": round(sum(v) / len(v), 4)}
            for k, v in sorted(classes.items())
        },
    }


def _called(m: dict[str, Any], line: float, cross_line: float, guard: bool) -> np.ndarray:
    lines = np.where(m["cross"], cross_line, line)
    near = m["cosine"] >= lines
    return m["exact"] | (near & m["agree"] if guard else near)


def _line(cal: Calibration, k: float) -> float:
    return min(0.99, max(cal.mean + k * cal.std, cal.threshold))


def sweep(pairs: list[Pair], m: dict[str, Any], cal: Calibration) -> list[dict[str, Any]]:
    """Same-language line swept (the cross-language line as shipped), then the other way."""
    rows = []
    for which in ("same_language", "cross_language"):
        for k in SIGMAS:
            line = _line(cal, k) if which == "same_language" else cal.duplicate_line
            cross = _line(cal, k) if which == "cross_language" else cal.cross_language_line
            rows.append({
                "swept": which, "sigmas": k, "line": round(_line(cal, k), 4),
                "cosine_only": rates(pairs, _called(m, line, cross, False)),
                "shipped_rule": rates(pairs, _called(m, line, cross, True)),
            })  # fmt: skip
    return rows


def _without_classes(row: dict[str, Any]) -> dict[str, Any]:
    rules = ("cosine_only", "shipped_rule")
    return {**row, **{k: {n: v for n, v in row[k].items() if n != "classes"} for k in rules}}


def print_sweep(rows: list[dict[str, Any]]) -> None:
    for which, shipped in (
        ("same_language", DUPLICATE_SIGMAS),
        ("cross_language", CROSS_LANGUAGE_SIGMAS),
    ):
        print(f"\n{which.replace('_', '-')} line swept (the other as shipped)")
        alone, ruled = "cosine only P / R (false dup)", "cosine + same_fact P / R (false dup)"
        print(f"{'k':>5} {'line':>6}  {alone:<30} {ruled:<36}")
        for r in (r for r in rows if r["swept"] == which):
            a, b = r["cosine_only"], r["shipped_rule"]
            mark = "  <- shipped" if r["sigmas"] == shipped else ""
            print(f"{r['sigmas']:>5} {r['line']:>6.3f}  {_pr(a)}{'':<8} {_pr(b)}{mark}")


def _pr(r: dict[str, Any]) -> str:
    return f"{r['precision']:.3f} / {r['recall']:.3f} ({r['false_duplicates']:>4})"


def print_classes(row: dict[str, Any]) -> None:
    print(
        f"\nper class at the shipped lines {row['line']:.3f} (k = {row['sigmas']}) and across "
        f"languages {row['cross_line']:.3f} (k = {CROSS_LANGUAGE_SIGMAS}): share called duplicate"
    )
    print(f"{'class':<58} {'n':>5} {'cosine only':>12} {'shipped':>8}")
    for name, shipped in row["shipped_rule"]["classes"].items():
        alone = row["cosine_only"]["classes"][name]
        share, ours = alone["called_duplicate"], shipped["called_duplicate"]
        print(f"{name:<58} {shipped['n']:>5} {share:>12.3f} {ours:>8.3f}")


def examples(
    pairs: list[Pair], m: dict[str, Any], cal: Calibration, limit: int = 8
) -> dict[str, list[dict[str, Any]]]:
    """The hardest cases at the shipped lines: refused non-duplicates, missed duplicates."""
    called = _called(m, cal.duplicate_line, cal.cross_language_line, True)
    out: dict[str, list[dict[str, Any]]] = {
        "false_duplicates": [],
        "missed_duplicates": [],
        "noisy_called": [],
    }
    order = np.argsort(-m["cosine"])
    for i in order:
        p = pairs[int(i)]
        row = {
            "kind": p.kind,
            "lang": p.lang,
            "cosine": round(float(m["cosine"][i]), 3),
            "stored": p.stored.text,
            "new": p.new.text,
        }
        bucket = (
            "noisy_called"
            if p.kind == NOISY and called[i]
            else "false_duplicates"
            if not p.duplicate and called[i] and p.kind != NOISY
            else None
        )
        if bucket and len(out[bucket]) < limit:
            out[bucket].append(row)
    for i in order[::-1]:
        p = pairs[int(i)]
        if (
            p.duplicate
            and not called[i]
            and len(out["missed_duplicates"]) < limit
            and p.kind != "exact variant"
        ):
            out["missed_duplicates"].append(
                {
                    "kind": p.kind,
                    "lang": p.lang,
                    "cosine": round(float(m["cosine"][i]), 3),
                    "stored": p.stored.text,
                    "new": p.new.text,
                }
            )
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.dedupe", description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--skip-chats", action="store_true", help="pairs only (no vaults)")
    args = ap.parse_args(argv)
    data = shared_data()
    started, before = time.perf_counter(), load()
    model = default_embedder()
    cal = calibrate(model)
    pairs = build(data, model.embed_documents)
    print(
        f"{len(pairs)} pairs from {data}; model {model.identity.key}; calibration mean "
        f"{cal.mean:.3f} std {cal.std:.3f} max unrelated {cal.max_unrelated:.3f}; supersede "
        f"line {cal.threshold:.3f}; shipped duplicate lines {cal.duplicate_line:.3f} (k = "
        f"{DUPLICATE_SIGMAS}), across languages {cal.cross_language_line:.3f} (k = "
        f"{CROSS_LANGUAGE_SIGMAS})",
        flush=True,
    )
    measured = measure_pairs(pairs, model.embed_documents)
    rows = sweep(pairs, measured, cal)
    print_sweep(rows)
    shipped = next(
        r for r in rows if r["swept"] == "same_language" and r["sigmas"] == DUPLICATE_SIGMAS
    )
    shipped = {
        **shipped,
        "cross_line": round(cal.cross_language_line, 4),
        "cross_sigmas": CROSS_LANGUAGE_SIGMAS,
    }
    print_classes(shipped)
    result: dict[str, Any] = {
        "suite": "dedupe",
        "machine": machine_info(),
        "load_before": before,
        "model": model.identity.key,
        "data": str(data),
        "calibration": {
            "mean": cal.mean,
            "std": cal.std,
            "max_unrelated": cal.max_unrelated,
            "supersede_line": cal.threshold,
            "duplicate_line": cal.duplicate_line,
            "duplicate_sigmas": DUPLICATE_SIGMAS,
            "cross_language_line": cal.cross_language_line,
            "cross_language_sigmas": CROSS_LANGUAGE_SIGMAS,
        },  # fmt: skip
        "pairs": len(pairs),
        "sweep": [_without_classes(r) for r in rows],  # per class: the shipped lines only
        "shipped": shipped,
        "examples": examples(pairs, measured, cal),
    }
    if not args.skip_chats:
        with tempfile.TemporaryDirectory(prefix="memvault-dedupe-") as tmp:
            result["chats"] = chats.run(Path(tmp), data, model)
        chats.print_report(result["chats"])
    result["seconds"] = round(time.perf_counter() - started, 1)
    result["load_after"] = load()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out} in {result['seconds']} s", file=sys.stderr)


if __name__ == "__main__":
    main()
