"""bench.retrieval.abstain's table, issue 21's goals checked on its results, and the plot."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

CHITCHAT = {"locomo": "locomo", "madial-zh": "madial-zh", "madial-en": "madial-en"}
CROSS = ("xl-en-on-zh", "xl-zh-on-en")


def at_default(entry: Mapping[str, Any]) -> dict[str, Any]:
    return next(row for row in entry["curve"] if row["default"])


def table(name: str, entry: Mapping[str, Any]) -> str:
    m = entry["modes"]
    row = at_default(entry)
    abstain = "  ".join(
        f"{k[len('abstain_') :]} {v:.1f} %" for k, v in row.items() if k.startswith("abstain_")
    )
    lat = entry["latency"]
    lines = [
        f"[{name}] n={entry['n']}  hit@5 text {m['text']['hit@5']:.1f}  vector "
        f"{m['vector']['hit@5']:.1f}  hybrid {m['hybrid']['hit@5']:.1f}  injected "
        f"{row['injected_hit@5']:.1f} (plain {row['plain_hit@5']:.1f})  gate pass "
        f"{entry['gate_pass']:.1f} %",
        f"    hybrid recall@5 {m['hybrid']['recall@5']:.1f}  recall@10 "
        f"{m['hybrid']['recall@10']:.1f}  abstain: {abstain}  p50 ms {lat['p50_ms_before']} "
        f"-> {lat['p50_ms_after']}",
        "    floor  injected  " + "  ".join(k for k in row if k.startswith("abstain_")),
    ]
    for r in entry["curve"]:
        cells = "  ".join(f"{v:>{len(k)}.1f}" for k, v in r.items() if k.startswith("abstain_"))
        mark = "*" if r["default"] else " "
        lines.append(f"   {mark}{r['floor']:.2f}  {r['injected_hit@5']:8.1f}  {cells}")
    return "\n".join(lines)


def _goal(goal: str, measured: str, met: bool) -> dict[str, Any]:
    return {"goal": goal, "measured": measured, "met": met}


def check_goals(sets: Mapping[str, Any]) -> list[dict[str, Any]]:
    goals = []
    for name in CROSS:
        if name not in sets:
            continue
        m, row = sets[name]["modes"], at_default(sets[name])
        hybrid, vector = m["hybrid"]["hit@5"], m["vector"]["hit@5"]
        goals.append(_goal(f"{name}: hybrid >= vector - 1", f"{hybrid:.1f} vs {vector:.1f}",
                           hybrid >= vector - 1))  # fmt: skip
        inj = row["injected_hit@5"]
        goals.append(_goal(f"{name}: injected >= hybrid - 3", f"{inj:.1f} vs {hybrid:.1f}",
                           inj >= hybrid - 3))  # fmt: skip
    for name in CHITCHAT:
        if name not in sets:
            continue
        row = at_default(sets[name])
        chat = row["abstain_chitchat"]
        goals.append(_goal(f"{name}: everyday chat abstain >= 95 %", f"{chat:.1f} %", chat >= 95))
        inj, plain = row["injected_hit@5"], row["plain_hit@5"]
        goals.append(_goal(f"{name}: injected >= plain - 2", f"{inj:.1f} vs {plain:.1f}",
                           inj >= plain - 2))  # fmt: skip
    if "locomo" in sets:
        row, m = at_default(sets["locomo"]), sets["locomo"]["modes"]["hybrid"]
        swapped = row["abstain_swapped"]
        goals.append(_goal("locomo: swapped abstain >= 40 %", f"{swapped:.1f} %", swapped >= 40))
        goals.append(_goal("locomo: hit@5 >= 66", f"{m['hit@5']:.1f}", m["hit@5"] >= 66))
        goals.append(_goal("locomo: recall@10 >= 67", f"{m['recall@10']:.1f}",
                           m["recall@10"] >= 67))  # fmt: skip
    for name in ("madial-zh", "madial-en"):
        if name in sets:
            r5 = sets[name]["modes"]["hybrid"]["recall@5"]
            goals.append(_goal(f"{name}: recall@5 >= 62", f"{r5:.1f}", r5 >= 62))
    for name, entry in sets.items():
        m = entry["modes"]
        best = max(m["text"]["hit@5"], m["vector"]["hit@5"])
        goals.append(_goal(f"{name}: hybrid >= max(text, vector) - 1",
                           f"{m['hybrid']['hit@5']:.1f} vs {best:.1f}",
                           m["hybrid"]["hit@5"] >= best - 1))  # fmt: skip
        lat = entry["latency"]
        goals.append(_goal(f"{name}: search p50 <= landed + 1 ms",
                           f"{lat['p50_ms_after']} vs {lat['p50_ms_before']} ms",
                           lat["p50_ms_after"] <= lat["p50_ms_before"] + 1))  # fmt: skip
    return goals


def plot(data: Mapping[str, Any], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sets = data["sets"]
    fig, axes = plt.subplots(1, len(sets), figsize=(4 * len(sets), 4), squeeze=False)
    for ax, (name, entry) in zip(axes[0], sets.items(), strict=True):
        rows = entry["curve"]
        floors = [r["floor"] for r in rows]
        ax.plot(floors, [r["injected_hit@5"] for r in rows], "o-", label="injected hit@5")
        for key in (k for k in rows[0] if k.startswith("abstain_")):
            ax.plot(floors, [r[key] for r in rows], "s--", label=key.replace("_", " "))
        ax.axvline(data["parameters"]["default_floor"], color="grey", linestyle=":")
        ax.set_title(f"{name} (default floor dotted)", fontsize=9)
        ax.set_xlabel("relevance floor")
        ax.set_ylim(0, 100)
        ax.legend(fontsize=7)
    axes[0][0].set_ylabel("%")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
