"""The chat and the questions of bench.host_turns: one group chat of N real-looking memories.

Episodes: every LoCoMo dialogue turn and every MADial memory (zh + en) from
`../shared/bench` (read in place, never copied into the project), then bench.sync.corpus's
composed bilingual notes until N. Each goes through `Vault.remember` (the write path the
plugin's tools use: lock, atomic file, audit line) with git off, and the vault is committed
once at the end, as a vault that grew over months would look. Dates keep each data set's own
order, moved so the newest memory is from yesterday.

Questions come from the same data: LoCoMo questions, the last user line of each MADial
dialogue, and everyday chat (greetings, thanks) for which nothing should be recalled.
"""

from __future__ import annotations

import json
import random
import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.sync.corpus import body, git
from vault.format.model import Speaker
from vault.layout.keys import ScopeId
from vault.writes.create import init_vault
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault
from vault.writes.profile_edit import ProfileEdit

DATA = Path(__file__).resolve().parents[2] / "shared" / "bench"
# Shares of the asked questions (the rest is everyday chat that should recall nothing).
SHARE_LOCOMO, SHARE_MADIAL = 0.75, 0.10


@dataclass(frozen=True)
class Question:
    text: str
    kind: str  # locomo | madial | chitchat


def _jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: the benchmark data lives in ../shared/bench")
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def _when(raw: str) -> datetime:
    return datetime.fromisoformat(raw).replace(tzinfo=UTC)


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "user"


def _source_records() -> list[tuple[datetime, Speaker, str, str]]:
    """(date, speaker, text, data set) of every LoCoMo turn and MADial memory."""
    out = []
    for row in _jsonl(DATA / "locomo" / "episodes.jsonl"):
        speaker = Speaker(_slug(row["speaker"]), row["speaker"])
        out.append((_when(row["timestamp"]), speaker, row["text"], "locomo"))
    for lang in ("zh", "en"):
        for row in _jsonl(DATA / "madial" / f"episodes_{lang}.jsonl"):
            speaker = Speaker(row["scope"], row["scope"])
            out.append((_when(row["timestamp"]), speaker, row["text"], f"madial-{lang}"))
    return out


def seed_chat(root: Path, scope: ScopeId, episodes: int, seed: int) -> dict[str, Any]:
    """Write `episodes` memories into `scope` of a new git vault at `root`; one commit."""
    started = time.perf_counter()
    rng = random.Random(seed)
    init_vault(root, git=True)
    vault = Vault(root, git=False)  # one commit at the end, not one per memory
    records = _source_records()[:episodes]
    newest = max(when for when, *_ in records)
    shift = datetime.now(UTC).replace(microsecond=0) - timedelta(days=1) - newest
    sources: dict[str, int] = {}
    for when, speaker, text, origin in records:
        vault.remember(
            NewEpisode(
                scope,
                text,
                speaker=speaker,
                importance=rng.choice((1, 2, 2, 2, 3, 3, 4, 5)),
                created_at=when + shift,
            ),
        )
        sources[origin] = sources.get(origin, 0) + 1
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(days=700)
    for i in range(episodes - len(records)):
        vault.remember(
            NewEpisode(
                scope,
                body(rng),
                speaker=Speaker(f"u{i % 11 + 1}", f"member {i % 11 + 1}"),
                importance=rng.choice((1, 2, 2, 3, 4)),
                created_at=start + timedelta(seconds=rng.randrange(699 * 86400)),
            ),
        )
        sources["composed"] = sources.get("composed", 0) + 1
    vault.update_profile(
        ProfileEdit(scope, "notes", "set", "A long-running group chat among friends.")
    )
    vault.update_profile(
        ProfileEdit(scope, "preferences", "add", "answers in the language of the question")
    )
    written = time.perf_counter()
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", f"bench: {episodes} memories in one chat")
    return {
        "episodes": episodes,
        "sources": sources,
        "write_s": round(written - started, 1),
        "git_commit_s": round(time.perf_counter() - written, 1),
    }


def _madial_line(dialogue: str) -> str:
    """The last line a user (not the assistant) said in a MADial dialogue."""
    said = re.findall(r"^<([^>]+)>:(.*)$", dialogue, flags=re.M)
    lines = [text.strip().strip('"“”').strip() for who, text in said if who != "Assistant"]
    return next((line for line in reversed(lines) if line), "")


def questions(count: int, seed: int) -> list[Question]:
    """`count` chat messages drawn from the data (with repeats only when count is large)."""
    rng = random.Random(seed)
    locomo = [q["question"] for q in _jsonl(DATA / "locomo" / "queries.jsonl")]
    madial = [
        line
        for lang in ("zh", "en")
        for q in _jsonl(DATA / "madial" / f"queries_{lang}.jsonl")
        if (line := _madial_line(q["question"]))
    ]
    chat = sorted(
        {
            q["question"]
            for name in ("locomo/queries_chitchat", "madial/queries_zh_chitchat")
            for q in _jsonl(DATA / f"{name}.jsonl")
        }
    )
    pools = {"locomo": locomo, "madial": madial, "chitchat": chat}
    for pool in pools.values():
        rng.shuffle(pool)
    out = []
    for i in range(count):
        pick = rng.random()
        kind = "locomo" if pick < SHARE_LOCOMO else "madial"
        if pick >= SHARE_LOCOMO + SHARE_MADIAL:
            kind = "chitchat"
        pool = pools[kind]
        out.append(Question(pool[i % len(pool)], kind))
    return out
