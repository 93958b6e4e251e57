"""What the model received: the request bodies the FAKE LLM logged (fake_llm.jsonl), found by
the user text that ends them and taken apart by where each memory sits.

On LangBot 4.11.2 with LocalAgent a request is: the pipeline prompt, MemVault's profile block,
memory block and (with key events on) key-events block (system messages MemVault appended to
`default_prompt`), the chat's history, LocalAgent's own retrieval block (a system message of
JSON, `langbot_retrieved_context`, from the knowledge bases in the runner's config), then the
user text. A memory record shows its episode id as `(id:ep_...` (indexer/injection/prompting.py
`display`), in both MemVault's block and in the chunks `retrieve` hands LocalAgent, so counting
ids over ALL messages counts what the model saw, duplicates included.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hostsuite.fake_llm import text_of

MEMORY_ID = re.compile(r"\(id:([^,\s)]+)")
PROFILE_HEAD = "# Long-term Memory"  # templates/prompts_en.yaml profile_intro
MEMORY_HEAD = "# Relevant Memories"  # templates/prompts_en.yaml episodes_intro
RETRIEVED = '"type": "langbot_retrieved_context"'  # LocalAgent pkg/messages.py
EVENTS_HEAD = "# Key Events"  # templates/events_en.yaml intro (its entries show `(id:evt_...`)


@dataclass(frozen=True)
class Request:
    at: float
    messages: tuple[dict[str, Any], ...]

    @property
    def user_text(self) -> str:
        users = [m for m in self.messages if m.get("role") == "user"]
        return text_of(users[-1].get("content")).strip() if users else ""

    def texts(self) -> list[tuple[str, str]]:
        """(role, text) of every message; a tool call's arguments count as its text."""
        out = []
        for m in self.messages:
            text = text_of(m.get("content"))
            for call in m.get("tool_calls") or []:
                text += " " + str((call.get("function") or {}).get("arguments", ""))
            out.append((str(m.get("role")), text))
        return out


def read_requests(log: Path) -> list[Request]:
    if not log.exists():
        return []
    found = []
    for line in log.read_text("utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        if record.get("kind") == "chat":
            messages = tuple(record["body"].get("messages") or ())
            found.append(Request(float(record["at"]), messages))
    return found


def requests_for(log: Path, text: str, after: float) -> list[Request]:
    """The model requests of the turn that sent `text` (the first, then a tool loop's
    follow-ups), logged after `after`."""
    return [r for r in read_requests(log) if r.at >= after and r.user_text == text.strip()]


@dataclass(frozen=True)
class Contents:
    """One request, taken apart: which block held what."""

    label: str
    profile: str  # MemVault's profile message, "" when absent
    block_ids: tuple[str, ...]  # ids in MemVault's memory block (default_prompt)
    retrieved_ids: tuple[str, ...]  # ids in LocalAgent's retrieval block (our `retrieve`)
    elsewhere_ids: tuple[str, ...]  # ids anywhere else (history, the user text)
    other_chat: int  # occurrences of the other chat's marker texts
    memory_block: bool  # a "# Relevant Memories" message is present
    text: str  # every message's text, joined
    events: str = ""  # MemVault's key-events message, "" when absent
    event_ids: tuple[str, ...] = ()  # the key-event ids in it (not memories: not in `ids`)

    @property
    def ids(self) -> tuple[str, ...]:
        return self.block_ids + self.retrieved_ids + self.elsewhere_ids

    @property
    def duplicates(self) -> int:
        return len(self.ids) - len(set(self.ids))

    def count(self, needle: str) -> int:
        return self.text.count(needle)

    def times(self, episode_id: str) -> int:
        return Counter(self.ids)[episode_id]


def take_apart(request: Request, label: str, other_markers: Iterable[str]) -> Contents:
    profile, block, retrieved, elsewhere = "", [], [], []
    events, event_ids = "", []
    memory_block = False
    texts = request.texts()
    for role, text in texts:
        ids = MEMORY_ID.findall(text)
        if role == "system" and text.startswith(PROFILE_HEAD):
            profile = text
            elsewhere += ids  # a profile never shows a record: one here is a defect
        elif role == "system" and text.startswith(MEMORY_HEAD):
            memory_block = True
            block += ids
        elif role == "system" and text.startswith(EVENTS_HEAD):
            events = text
            event_ids += ids
        elif role == "system" and RETRIEVED in text:
            retrieved += ids
        else:
            elsewhere += ids
    joined = "\n".join(text for _, text in texts)
    other = sum(joined.count(m) for m in other_markers)
    return Contents(
        label,
        profile,
        tuple(block),
        tuple(retrieved),
        tuple(elsewhere),
        other,
        memory_block,
        joined,
        events,
        tuple(event_ids),
    )


def table(rows: Sequence[Contents]) -> str:
    """The request table the suite prints: what each request contained."""
    head = (
        "request/chat",
        "profile",
        "memories (ids)",
        "duplicates",
        "other chat's text",
        "key events",
    )
    body = [
        (
            r.label,
            "y" if r.profile else "n",
            _ids(r),
            str(r.duplicates),
            str(r.other_chat),
            (",".join(r.event_ids) or "none open") if r.events else "-",
        )
        for r in rows
    ]
    widths = [max(len(row[i]) for row in (head, *body)) for i in range(len(head))]
    lines = [
        " | ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))
        for row in (head, *body)
    ]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines)


def _ids(contents: Contents) -> str:
    parts = []
    if contents.block_ids:
        parts.append("block " + ",".join(contents.block_ids))
    if contents.retrieved_ids:
        parts.append("retrieve " + ",".join(contents.retrieved_ids))
    if contents.elsewhere_ids:
        parts.append("elsewhere " + ",".join(contents.elsewhere_ids))
    return "; ".join(parts) or "-"
