"""What indexer.chatter refuses of what people really said: the false positives, counted.

    python -m bench.chatter [--shared ../shared/bench] [--out bench/results/chatter.json]

Reads, in place, every person's line the benchmark data holds: LoCoMo's 5,882 dialogue
turns, MADial's 331 memories (zh, en) and the people's lines of its 320 dialogues, and the
150 everyday-chat messages (greetings, thanks, small tasks). Each is judged twice: as a text
to store (`judge(text)`, what the remember tool and a candidate's text get) and as a chat
message given as a person's own (`judge(text, message=True)`, the user turn of candidate
extraction). Every refusal is a false positive (these are all people's words); the result
lists each with its rule.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.retrieval.datasets import SHARED, read_jsonl
from indexer.chatter import CHATTER_VERSION, judge

# MADial's dialogues: `<Name>:"text"` lines, the assistant's as <Assistant>.
_LINE = re.compile(r'^<([^>\n]+)>\s*[:：]\s*["“]?(.*?)["”]?\s*$')


def _dialogue_lines(path: Path) -> Iterator[str]:
    for row in read_jsonl(path):
        for line in str(row["question"]).splitlines():
            found = _LINE.match(line.strip())
            if found and found.group(1).strip().lower() not in ("assistant", "bod", "eod"):
                yield found.group(2)


def corpora(shared: Path) -> dict[str, list[str]]:
    madial = shared / "madial"
    return {
        "locomo_turns": [r["text"] for r in read_jsonl(shared / "locomo" / "episodes.jsonl")],
        "madial_memories": [
            r["text"]
            for name in ("episodes_zh.jsonl", "episodes_en.jsonl")
            for r in read_jsonl(madial / name)
        ],  # fmt: skip
        "madial_dialogue_lines": [
            *_dialogue_lines(madial / "queries_zh.jsonl"),
            *_dialogue_lines(madial / "queries_en.jsonl"),
        ],
        "everyday_chat": sorted(
            {
                r["question"]
                for path in (
                    shared / "locomo" / "queries_chitchat.jsonl",
                    madial / "queries_zh_chitchat.jsonl",
                    madial / "queries_en_chitchat.jsonl",
                )
                for r in read_jsonl(path)
            }
        ),
    }


# Words the rules look for, said in passing: what must still be remembered.
_MENTIONS = re.compile(
    r"\b(?:tools?|system|ai|assistant|json|template|placeholder|notice)\b|系统|工具|助手|模板|通知",
    re.IGNORECASE,
)


def measure(texts: list[str]) -> dict[str, Any]:
    mentions = [t for t in texts if _MENTIONS.search(t)]
    out: dict[str, Any] = {
        "texts": len(texts),
        "mention_tool_system_ai": len(mentions),
        "of_those_refused_as_memory": sum(1 for t in mentions if not judge(t).said),
    }
    for mode, message in (("as_memory", False), ("as_message", True)):
        refused = [(t, v) for t in texts if not (v := judge(t, message=message)).said]
        out[mode] = {
            "refused": len(refused),
            "by_rule": dict(Counter(v.rule for _, v in refused)),
            "examples": [{"rule": v.rule, "text": t[:200]} for t, v in refused],
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=SHARED)
    parser.add_argument("--out", type=Path, default=Path("bench/results/chatter.json"))
    args = parser.parse_args()
    started = time.perf_counter()
    results = {name: measure(texts) for name, texts in corpora(args.shared).items()}
    total = sum(r["texts"] for r in results.values())
    report = {
        "rules": CHATTER_VERSION,
        "texts": total,
        "refused_as_memory": sum(r["as_memory"]["refused"] for r in results.values()),
        "refused_as_message": sum(r["as_message"]["refused"] for r in results.values()),
        "ms_per_text": round((time.perf_counter() - started) * 1000 / max(total, 1) / 2, 4),
        "sets": results,
    }
    args.out.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in report.items() if k != "sets"}))
    for name, r in results.items():
        print(name, r["texts"], r["as_memory"]["by_rule"], r["as_message"]["by_rule"])


if __name__ == "__main__":
    main()
