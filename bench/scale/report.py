"""The printed table, the 1M extrapolation (an ESTIMATE, labelled so) and the plot."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

# (label, getter) for the latency rows; p95 of each is extrapolated as a power law in N.
SERIES = {
    "search largest scope, no query embedding": lambda r: r["search"]["largest_scope"][
        "without_query_embedding"
    ],
    "search largest scope, with query embedding": lambda r: r["search"]["largest_scope"][
        "with_query_embedding"
    ],
    "search random scope, no query embedding": lambda r: r["search"]["random_scopes"][
        "without_query_embedding"
    ],
    "injection handler (largest scope)": lambda r: r["injection"]["handler"],
}
LINEAR = {
    "peak_rss_mb": lambda r: r["build"]["peak_rss_mb"],
    "index_mb": lambda r: r["build"]["index_bytes"] / 2**20,
    "build_s": lambda r: r["build"]["build_wall_s"],
}


def _fit(xs: list[float], ys: list[float], target: float, power: bool) -> float | None:
    """Through the two largest points: y = a*N**b (power) or y = a + b*N (linear)."""
    if len(xs) < 2:
        return None
    (x0, y0), (x1, y1) = sorted(zip(xs, ys, strict=True))[-2:]
    if power:
        if min(x0, y0, x1, y1) <= 0:
            return None
        b = math.log(y1 / y0) / math.log(x1 / x0)
        return y1 * (target / x1) ** b
    return y1 + (y1 - y0) / (x1 - x0) * (target - x1)


def estimate(runs: list[dict[str, Any]], n: int) -> dict[str, Any]:
    xs = [float(r["episodes"]) for r in runs]
    out: dict[str, Any] = {
        "episodes": n,
        "ESTIMATE": "not run: extrapolated from the two largest measured sizes "
        "(latency p95 as a power law in N, RSS / index size / build time linear in N)",
    }
    for name, get in SERIES.items():
        value = _fit(xs, [get(r)["p95_ms"] for r in runs], n, power=True)
        out[f"{name} p95_ms"] = None if value is None else round(value, 1)
    for name, get in LINEAR.items():
        value = _fit(xs, [get(r) for r in runs], n, power=False)
        out[name] = None if value is None else round(value, 1)
    return out


def _reader_rss(run: dict[str, Any]) -> float:
    return float(run.get("search_only_process", {}).get("peak_rss_mb", float("nan")))


def _verdict(value: float | None, goal: float) -> str:
    return "n/a" if value is None else "met" if value < goal else "MISSED"


def table(data: dict[str, Any], goals: dict[str, float]) -> str:
    runs = data["runs"]
    head = f"{'p50/p95/p99 ms':<46}" + "".join(f"{r['episodes']:>22,}" for r in runs)
    lines = [f"MemVault at scale, embedder {data['embedder']}, 1,000 scopes", head]
    for name, get in SERIES.items():
        cells = "".join(
            f"{get(r)['p50_ms']:>8.1f}/{get(r)['p95_ms']:.1f}/{get(r)['p99_ms']:.1f}".rjust(22)
            for r in runs
        )
        lines.append(f"{name:<46}{cells}")
    for label, key in (("largest scope episodes", "largest_scope_episodes"),):
        lines.append(f"{label:<46}" + "".join(f"{r['corpus'][key]:>22,}" for r in runs))
    for label, get in (
        ("build s (cold; embedded texts in next row)", LINEAR["build_s"]),
        ("texts embedded during the build", lambda r: r["build"]["embedded_texts"]),
        ("peak RSS of indexing process MB", LINEAR["peak_rss_mb"]),
        ("peak RSS of a search-only process MB", _reader_rss),
        ("index size on disk MB", LINEAR["index_mb"]),
    ):
        lines.append(f"{label:<46}" + "".join(f"{get(r):>22.1f}" for r in runs))
    lines.append(f"{'1-min load avg (search / injection)':<46}" + "".join(
        f"{r['loadavg']['before_search'][0]:>14.2f} / {r['loadavg']['before_injection'][0]:.2f}"
        for r in runs
    ))  # fmt: skip
    by_n = {r["episodes"]: r for r in runs}
    inj = by_n.get(100_000)
    inj_p95 = inj["injection"]["handler"]["p95_ms"] if inj else None
    lines.append("")
    lines.append(
        f"goal injection p95 < {goals['injection_p95_ms_at_100k']:g} ms at 100k: "
        f"{inj_p95} ms -> {_verdict(inj_p95, goals['injection_p95_ms_at_100k'])}"
    )
    at_1m = by_n.get(1_000_000)
    if at_1m:
        s = SERIES["search largest scope, no query embedding"](at_1m)["p95_ms"]
        rss = LINEAR["peak_rss_mb"](at_1m)
        lines.append(
            f"goal search p95 excl. embedding < {goals['search_p95_ms_excl_embedding_at_1m']:g}"
            f" ms at 1M: {s} ms -> {_verdict(s, goals['search_p95_ms_excl_embedding_at_1m'])}; "
            f"indexing RSS < {goals['index_rss_mb_at_1m']:g} MB: {rss} MB -> "
            f"{_verdict(rss, goals['index_rss_mb_at_1m'])}"
        )
    for est in data["estimates"]:
        s = est["search largest scope, no query embedding p95_ms"]
        rss = est["peak_rss_mb"]
        lines.append(
            f"ESTIMATE at {est['episodes']:,} (not run): search p95 excl. embedding ~{s} ms "
            f"(goal < {goals['search_p95_ms_excl_embedding_at_1m']:g}: "
            f"{_verdict(s, goals['search_p95_ms_excl_embedding_at_1m'])}), indexing RSS "
            f"~{rss} MB (goal < {goals['index_rss_mb_at_1m']:g}: "
            f"{_verdict(rss, goals['index_rss_mb_at_1m'])}), index ~{est['index_mb']} MB, "
            f"build ~{est['build_s']} s"
        )
    return "\n".join(lines)


def plot(data: dict[str, Any], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plot")
        return False
    runs = data["runs"]
    xs = [r["episodes"] for r in runs]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, get in SERIES.items():
        line = ax.plot(xs, [get(r)["p95_ms"] for r in runs], marker="o", label=f"{name} p95")
        for est in data["estimates"]:
            value = est.get(f"{name} p95_ms")
            if value is not None:
                ax.plot([xs[-1], est["episodes"]], [get(runs[-1])["p95_ms"], value],
                        ls=":", color=line[0].get_color())  # fmt: skip
                ax.plot([est["episodes"]], [value], marker="x", color=line[0].get_color())
    ax.axhline(50, color="grey", ls="--", lw=0.8, label="injection goal 50 ms (100k)")
    ax.axhline(20, color="black", ls="--", lw=0.8, label="search goal 20 ms (1M)")
    ax.set_xscale("log")
    estimated = "; x = estimate, not run" if data["estimates"] else ""
    ax.set_xlabel(f"episodes in the vault (1,000 scopes){estimated}")
    ax.set_ylabel("p95 latency, ms")
    ax.set_title(f"MemVault latency against vault size ({data['date'][:10]}, 2 cores)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
