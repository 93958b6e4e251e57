"""bench/results/retrieval_quality.png from retrieval.json: hit@5 and recall@10 per system,
grouped by dataset.  `python -m bench.retrieval.plot [retrieval.json]`"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parents[1] / "results"


def plot(data: dict[str, Any], out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = data["results"]
    names = list(dict.fromkeys(r["dataset"] for r in rows))
    systems = list(dict.fromkeys(r["system"] for r in rows))
    metrics = ("hit@5", "recall@5", "recall@10")
    fig, axes = plt.subplots(1, len(metrics), figsize=(5 * len(metrics), 4.2), sharey=True)
    width = 0.8 / len(systems)
    for ax, metric in zip(axes, metrics, strict=True):
        for i, system in enumerate(systems):
            vals = [
                next(
                    (
                        r["scores"][metric]
                        for r in rows
                        if r["dataset"] == d and r["system"] == system
                    ),
                    0,
                )
                for d in names
            ]
            xs = [j + (i - (len(systems) - 1) / 2) * width for j in range(len(names))]
            ax.bar(xs, vals, width, label=system)
        ax.set_xticks(range(len(names)), names)
        ax.set_title(metric)
        ax.set_ylim(0, 100)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("percent")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(systems), fontsize=8)
    fig.suptitle(f"Retrieval quality by system and dataset ({data['date'][:10]})")
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def main(argv: list[str]) -> int:
    src = Path(argv[0]) if argv else RESULTS / "retrieval.json"
    print(plot(json.loads(src.read_text()), src.with_name("retrieval_quality.png")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
