"""bench.host_turns' numbers: per variant summaries, the goals, the printed table."""

from __future__ import annotations

import argparse
import statistics
import time
from collections import Counter
from typing import Any

from bench.host_turns_corpus import SHARE_LOCOMO, SHARE_MADIAL
from bench.inject.__main__ import summary
from bench.sync.report import load, machine_info
from hostsuite.local_agent import RUNNER_ID

# Issue 12: with a 10,000-episode chat on this box.
GOALS = {"injector_p50_ms": 30.0, "injector_p95_ms": 80.0, "plugin_rss_mb": 350.0}
# Issue 23, per settings variant (bench/host_turns_variant.PRESETS): RSS with `index: local`
# and the embedded model; RSS with `index: host` and the host's embedding model; injection
# p95 with the host's vector database in the loop (its round trip is inside the injector).
GOALS_23: dict[str, dict[str, float]] = {
    "local": {"plugin_rss_mb": 250.0},
    "after": {"plugin_rss_mb": 250.0},
    "host": {"injector_p95_ms": 60.0},
    "host-langbot": {"plugin_rss_mb": 150.0, "injector_p95_ms": 60.0},
}


def _stats(values: list[float]) -> dict[str, float] | None:
    return summary(values) if values else None


def variant_report(v: Any) -> dict[str, Any]:
    turns = v.turns
    injector = [t["injector_ms"] for t in turns if t["injector_ms"] is not None]
    by_kind = {
        kind: _stats([t["injector_ms"] for t in turns if t["kind"] == kind and t["injector_ms"]])
        for kind in sorted({t["kind"] for t in turns})
    }
    searches = [t["searches"] for t in turns]
    return {
        **v.facts,
        "plugin_id": v.plugin_id,
        "turns": len(turns),
        "turns_without_injector_line": len(turns) - len(injector),
        # A turn the host cut short (no runner, no model call) is not a full turn.
        "turns_without_model_reply": sum(1 for t in turns if not t["model_replied"]),
        "injector_ms": _stats(injector),
        "injector_ms_by_question_kind": by_kind,
        "retrieve_ms": _stats([t["retrieve_ms"] for t in turns if t["retrieve_calls"]]),
        "memvault_ms_per_turn": _stats(
            [(t["injector_ms"] or 0.0) + t["retrieve_ms"] for t in turns]
        ),
        "round_trip_ms": _stats([t["round_trip_ms"] for t in turns]),
        "searches_per_turn": {
            "mean": round(statistics.fmean(searches), 3) if searches else None,
            "histogram": dict(sorted(Counter(searches).items())),
            "injector_recalls": sum(t["injector_recalls"] for t in turns),
            "retrieve_calls": sum(t["retrieve_calls"] for t in turns),
            "retrieve_searches": sum(t["retrieve_searches"] for t in turns),
        },
        "injected_episodes_mean": round(statistics.fmean(t["injected_episodes"] for t in turns), 2)
        if turns
        else None,
        "retrieve_results_mean": round(statistics.fmean(t["retrieve_results"] for t in turns), 2)
        if turns
        else None,
        "failures": dict(Counter(f for t in turns for f in t["failures"])),
        "memory": v.memory,
        "per_turn": {
            "injector_ms": [t["injector_ms"] for t in turns],
            "round_trip_ms": [t["round_trip_ms"] for t in turns],
            "searches": searches,
        },
    }


def _verdicts(
    after: dict[str, Any], goals: dict[str, float] = GOALS, rss_of: Any = None
) -> dict[str, Any]:
    injector = after.get("injector_ms") or {}
    memory = after.get("memory") or []
    # Issue 12's verdict took the RSS at the end; issue 23's the largest after any block.
    rss = (rss_of or (lambda m: m[-1]["rss_mb"]))(memory) if memory else None
    measured = {
        "injector_p50_ms": injector.get("p50_ms"),
        "injector_p95_ms": injector.get("p95_ms"),
        "plugin_rss_mb": rss,
    }
    return {
        name: {
            "goal": goal,
            "measured": measured[name],
            "met": measured[name] is not None and measured[name] <= goal,
        }
        for name, goal in goals.items()
    }


def _max_rss(memory: list[dict[str, Any]]) -> float:
    return max(m["rss_mb"] for m in memory)


def report(args: argparse.Namespace, variants: list[Any], blocks: list[dict]) -> dict[str, Any]:
    out = {v.label: variant_report(v) for v in variants}
    return {
        "benchmark": "host_turns",
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": machine_info(),
        "load_at_end": load(),
        "parameters": {
            "host": "LangBot 4.11.2 (loopback), plugins debug-attached with `lbp run`",
            "runner": f"{RUNNER_ID} (LocalAgent from ../shared/langbot/local-agent, renamed)",
            "llm": "FAKE remote LLM (hostsuite/fake_llm.py)",
            "episodes_in_chat": args.episodes,
            "turns": {v.label: len(v.turns) for v in variants},
            "vdb": getattr(args, "vdb", "chroma"),
            "settings": {v.label: v.facts.get("settings", {}) for v in variants},
            "block": args.block,
            "warmup": args.warmup,
            "seed": args.seed,
            "questions": f"LoCoMo {SHARE_LOCOMO:.0%}, MADial last user line {SHARE_MADIAL:.0%}, "
            f"everyday chat {1 - SHARE_LOCOMO - SHARE_MADIAL:.0%}",
            "injector_ms": "the injector's own `memvault=injection_ready ms=` (plugin log)",
            "round_trip_ms": "client side: WebSocket connect + message + reply",
            "rss": "VmRSS of the `lbp run` process and its descendants",
        },
        "goals": GOALS,
        "verdicts": _verdicts(out["after"]) if "after" in out else {},
        "goals_issue23": {k: GOALS_23[k] for k in out if k in GOALS_23},
        "verdicts_issue23": {
            k: _verdicts(out[k], GOALS_23[k], _max_rss) for k in out if k in GOALS_23
        },
        "variants": out,
        "blocks": blocks,
    }


def _cell(stats: dict[str, float] | None) -> str:
    return "-" if not stats else f"{stats['p50_ms']:.1f} / {stats['p95_ms']:.1f}"


def table(data: dict[str, Any]) -> str:
    variants = data["variants"]
    labels = list(variants)
    rows = [
        ("turns", lambda r: str(r["turns"])),
        ("injector ms p50 / p95", lambda r: _cell(r["injector_ms"])),
        ("KB retrieve ms p50 / p95", lambda r: _cell(r["retrieve_ms"])),
        ("MemVault ms per turn p50 / p95", lambda r: _cell(r["memvault_ms_per_turn"])),
        ("round trip ms p50 / p95", lambda r: _cell(r["round_trip_ms"])),
        ("searches per turn (mean)", lambda r: str(r["searches_per_turn"]["mean"])),
        ("turns without a model reply", lambda r: str(r["turns_without_model_reply"])),
        ("plugin RSS MB at the end", lambda r: f"{r['memory'][-1]['rss_mb']:.0f}"),
        ("plugin RSS MB after indexing", lambda r: f"{r['memory'][0]['rss_mb']:.0f}"),
        ("start-up indexing s", lambda r: str(r.get("index_s"))),
        ("peak RSS MB of the plugin", lambda r: f"{r['memory'][-1]['root_peak_rss_mb']:.0f}"),
    ]
    width = 34
    lines = [f"{'':<{width}}" + "".join(f"{label:>20}" for label in labels)]
    for name, cell in rows:
        lines.append(f"{name:<{width}}" + "".join(f"{cell(variants[k]):>20}" for k in labels))
    for name, verdict in data.get("verdicts", {}).items():
        mark = "met" if verdict["met"] else "MISSED"
        lines.append(f"goal {name} <= {verdict['goal']}: {verdict['measured']} {mark}")
    for label, verdicts in data.get("verdicts_issue23", {}).items():
        for name, verdict in verdicts.items():
            mark = "met" if verdict["met"] else "MISSED"
            lines.append(
                f"issue 23 {label}: {name} <= {verdict['goal']}: {verdict['measured']} {mark}"
            )
    loads = [b["load_after"][0] for b in data["blocks"]]
    if loads:
        lines.append(f"1-min load average per block: {min(loads):.2f} .. {max(loads):.2f}")
    return "\n".join(lines)
