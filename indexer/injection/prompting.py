"""The texts MemVault injects into a LangBot prompt, built by pure functions.

Two messages per turn, like LongTermMemory: the profiles (session, current speaker) and the
current speaker's identity, then the recalled episodes fenced as data (both into
`default_prompt` on LangBot 4.11: prompt_route.py decides where). Fixed wording lives in
templates/prompts_en.yaml.

Everything that came from a chat or a file is escaped before it is placed in a prompt
(prompt_values.py): prose (memory text, traits, notes) with `neutralise`, so it stays on its
line and cannot close the `<memory-records>` fence or its `<mem>`; metadata (ids, tags,
speaker names and ids, profile keys) with `field`/`label`, so it cannot imitate the record
syntax either: a tag `a] (id:ep_root, importance:5) [b` cannot pose as a record's id or
importance.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import yaml

from indexer.retrieval.ranking import SECONDS_PER_DAY, is_update, recency_hint
from indexer.retrieval.search import SearchResult
from templates import read_template
from vault.format.model import Profile

from .prompt_values import field, label, neutralise

# One record never takes more than this in the prompt: a 20,000-character episode must not
# push every other record out of the budget. recall_memory returns the full text.
MAX_RECORD_CHARS = 1000
PROMPT_HINTS = 3  # recent-change lines per profile in the prompt (upstream: 3)
TOOL_HINTS = 2  # ... and in tool output (upstream: 2)
RECENT_CHANGE_DAYS = 30


@functools.cache
def wording() -> dict[str, str]:
    data = yaml.safe_load(read_template("prompts_en.yaml"))
    # The write policy is worded once, in memory_policy.yaml (the tools and the extraction
    # prompt say the same).
    policy = str(yaml.safe_load(read_template("memory_policy.yaml"))["injected"]["en_US"])
    return {key: str(value).replace("{write_policy}", policy) for key, value in data.items()}


# --------------------------------------------------------------------------- values


def iso(value: datetime | int | None) -> str:
    """`YYYY-MM-DDTHH:MM:SSZ` (UTC) like upstream; "" for no time."""
    if value is None or value == 0:
        return ""
    when = datetime.fromtimestamp(value, UTC) if isinstance(value, int) else value
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[: limit - 1].rstrip()}… (+{len(text) - limit + 1} chars)"


# --------------------------------------------------------------------------- profiles


def profile_summary(profile: Profile | None) -> dict[str, Any]:
    """The five upstream keys, for `_ltm_context` and the injection snapshot."""
    profile = profile or Profile()
    return {
        "name": profile.name or "",
        "traits": list(profile.traits),
        "preferences": list(profile.preferences),
        "notes": profile.notes.strip() if profile.notes else "",
        "updated_at": iso(profile.updated_at),
    }


def _slot(item: str) -> tuple[str | None, str]:
    key, sep, value = item.partition(": ")
    normalised = "_".join(key.lower().split())
    if sep and normalised and value.strip():
        return normalised, value.strip()
    return None, item


def recent_changes(profile: Profile, now: datetime, limit: int) -> list[str]:
    """`Recent trait update (key): now X; previously Y`, newest first, within 30 days
    (already escaped: the key as a label, the values as prose)."""
    found: list[tuple[datetime, str]] = []
    for name, kind in (("traits", "trait"), ("preferences", "preference")):
        for item in getattr(profile, name):
            key, current = _slot(item)
            if key is None:
                continue
            older = [h for h in profile.history if "_".join(h.key.lower().split()) == key]
            if not older:
                continue
            last = max(older, key=lambda h: h.until)
            age = (now - last.until).total_seconds() / SECONDS_PER_DAY
            if last.value.strip() != current and age <= RECENT_CHANGE_DAYS:
                line = (
                    f"Recent {kind} update ({label(key)}): now {neutralise(current)}; "
                    f"previously {neutralise(last.value)}"
                )
                found.append((last.until, line))
    found.sort(key=lambda pair: pair[0], reverse=True)
    return [line for _, line in found[:limit]]


def _profile_lines(profile: Profile, now: datetime, hints: int) -> list[str]:
    lines: list[str] = []
    if profile.name:
        lines.append(f"Name: {label(profile.name)}")
    if profile.traits:
        lines.append(f"Traits: {', '.join(neutralise(t) for t in profile.traits)}")
    if profile.preferences:
        lines.append(f"Preferences: {', '.join(neutralise(p) for p in profile.preferences)}")
    lines.extend(recent_changes(profile, now, hints))
    if profile.notes and profile.notes.strip():
        notes = "; ".join(line.strip() for line in profile.notes.splitlines() if line.strip())
        lines.append(f"Notes: {neutralise(notes)}")
    return lines


def profile_text(profile: Profile, now: datetime) -> str:
    """The compact profile tools return (upstream format_profile_text)."""
    return "\n".join(_profile_lines(profile, now, TOOL_HINTS))


def profile_block(profile: Profile | None, title: str, now: datetime) -> str:
    """One `## ...` section of the profile message; "" for an empty profile."""
    if profile is None or profile.is_empty():
        return ""
    lines = [f"- {line}" for line in _profile_lines(profile, now, PROMPT_HINTS)]
    if profile.updated_at is not None:
        lines.append(f"- Last updated: {iso(profile.updated_at)}")
    return "\n".join([title, *lines])


def speaker_block(speaker_id: str, speaker_name: str) -> str:
    title = wording()["current_speaker_title"]
    if speaker_name:
        return f"{title}\n- Name: {label(speaker_name)}\n- ID: {field(speaker_id)}"
    if speaker_id:
        return f"{title}\n- ID: {field(speaker_id)}"
    return ""


def profile_blocks(
    session_profile: Profile | None,
    speaker_profile: Profile | None,
    speaker_id: str,
    speaker_name: str,
    now: datetime,
    person_profile: Profile | None = None,
) -> list[str]:
    """`person_profile`: the linked person's profile (vault.persons, setting linked_people),
    the same in every chat of the bot; the chat's own speaker profile stays the chat's."""
    words = wording()
    blocks = [
        profile_block(session_profile, words["session_profile_title"], now),
        profile_block(person_profile, words["person_profile_title"], now),
        profile_block(speaker_profile, words["speaker_profile_title"], now),
        speaker_block(speaker_id, speaker_name),
    ]
    return [b for b in blocks if b]


def profile_message(blocks: Sequence[str], budget: int) -> str:
    """The default_prompt message; "" when there is nothing to say. Cut visibly at `budget`."""
    if not blocks:
        return ""
    text = wording()["profile_intro"] + "\n\n" + "\n\n".join(blocks)
    if len(text) <= budget:
        return text
    marker = "\n" + wording()["profile_cut"]
    return text[: max(0, budget - len(marker))].rstrip() + marker


# --------------------------------------------------------------------------- episodes


@dataclass(frozen=True)
class Recalled:
    """One recalled episode, as the engine ranked it (best first)."""

    id: str
    content: str
    created_at: int  # unix seconds, 0 = unknown
    importance: int
    tags: tuple[str, ...] = ()
    speaker_id: str = ""
    speaker_name: str = ""
    score: float = 0.0
    # False for a memory an assistant stored that no person confirmed: shown [unverified].
    verified: bool = True


def recalled_from(result: SearchResult) -> Recalled:
    """A search result as the record the prompt and the knowledge engine display."""
    doc = result.doc
    return Recalled(
        id=doc.episode_id,
        content=doc.text,
        created_at=doc.created_at,
        importance=doc.importance,
        tags=doc.tags,
        speaker_id=doc.speaker_id,
        speaker_name=doc.speaker_name,
        score=result.score,
        verified=doc.verified,
    )


def display(record: Recalled, now: int, current_speaker_id: str | Collection[str] = "") -> str:
    """Upstream's decorated record line with the episode id in front (the same shape the
    knowledge engine's `retrieve` gives): `[ts] [unverified] (id:ep_x, importance:n[,
    recency:hint][, speaker:current][, signal:update]) [tags] <mem>content</mem>`, all on
    one line; `[unverified]` (as recall_memory marks it) only for a memory no person
    confirmed, placed before the `(`: a tag spelled `unverified` comes after it and cannot
    pose as the mark. Also what `_ltm_context.episodes[].content` holds. The id and the
    tags are escaped with `field` (no `[ ] ( ) , :` of their own), the content with
    `neutralise` (no `< >`). `current_speaker_id` may be every sender id of the speaker's
    linked person (vault.persons): each one's memory is the current speaker's."""
    parts = [f"id:{field(record.id)}", f"importance:{int(record.importance)}"]
    age = (now - record.created_at) / SECONDS_PER_DAY if record.created_at else None
    hint = recency_hint(age)
    if hint:
        parts.append(f"recency:{hint}")
    current = {current_speaker_id} if isinstance(current_speaker_id, str) else current_speaker_id
    if record.speaker_id and record.speaker_id in current:
        parts.append("speaker:current")
    if is_update(record.tags):
        parts.append("signal:update")
    stamp = f"[{iso(record.created_at)}] " if record.created_at else ""
    mark = "" if record.verified else "[unverified] "
    tags = f" [{','.join(field(t) for t in record.tags)}]" if record.tags else ""
    return f"{stamp}{mark}({', '.join(parts)}){tags} <mem>{_content(record)}</mem>"


def _content(record: Recalled) -> str:
    """The text as prose, and the `Name: ` the indexer put in front of it as a label: the
    speaker's name came from a chat and must not imitate the record syntax either."""
    text = _cut(record.content, MAX_RECORD_CHARS)
    prefix = f"{record.speaker_name}: " if record.speaker_name else ""
    if prefix and text.startswith(prefix):
        return f"{label(record.speaker_name)}: {neutralise(text[len(prefix) :])}"
    return neutralise(text)


@dataclass(frozen=True)
class EpisodeBlock:
    text: str  # the prompt message; "" when nothing fits or nothing was recalled
    shown: tuple[Recalled, ...]  # the records in `text`, best first
    displays: tuple[str, ...]  # their display lines (for _ltm_context)
    left_out: int  # recalled records not shown because of the budget


def _render(displays: Sequence[str], left_out: int, total_budget: int) -> str:
    words = wording()
    lines = [f"[{i}] {line}" for i, line in enumerate(displays, 1)]
    text = "\n".join(
        [words["episodes_intro"], "", words["fence_open"], "\n\n".join(lines), words["fence_close"]]
    )
    if not displays:
        text = words["episodes_intro"]
    if left_out:
        text += "\n" + words["left_out"].format(count=left_out, budget=total_budget)
    return text


def episodes_message(
    records: Sequence[Recalled],
    now: int,
    current_speaker_id: str | Collection[str],
    budget: int,
    total_budget: int | None = None,
) -> EpisodeBlock:
    """The fenced records that fit in `budget` characters, dropping the lowest-ranked first;
    the message says how many were left out (and names `total_budget`, the setting)."""
    if not records:
        return EpisodeBlock("", (), (), 0)
    total = total_budget or budget
    displays = [display(r, now, current_speaker_id) for r in records]
    for keep in range(len(records), -1, -1):
        text = _render(displays[:keep], len(records) - keep, total)
        if len(text) <= budget:
            shown = tuple(records[:keep])
            return EpisodeBlock(text, shown, tuple(displays[:keep]), len(records) - keep)
    return EpisodeBlock("", (), (), len(records))


@dataclass(frozen=True)
class Injection:
    profile: str  # the default_prompt message, "" for none
    episodes: EpisodeBlock  # the prompt message and what it holds

    @property
    def chars(self) -> int:
        return len(self.profile) + len(self.episodes.text)


def fit(
    blocks: Sequence[str],
    records: Sequence[Recalled],
    now: int,
    current_speaker_id: str | Collection[str],
    budget: int,
) -> Injection:
    """Both messages within `budget` characters together. If they do not fit, the profile
    keeps at least half the budget and is cut visibly beyond that; the episodes get the
    rest, lowest-ranked dropped first."""
    profile = profile_message(blocks, budget)
    episodes = episodes_message(records, now, current_speaker_id, budget, budget)
    if len(profile) + len(episodes.text) <= budget:
        return Injection(profile, episodes)
    profile = profile_message(blocks, max(budget // 2, budget - len(episodes.text)))
    rest = budget - len(profile)
    return Injection(profile, episodes_message(records, now, current_speaker_id, rest, budget))
