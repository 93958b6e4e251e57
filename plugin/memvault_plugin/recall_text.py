"""What `recall_memory` answers: readable text, Synapse style (pure functions).

    3 memories (2 verified, 1 unverified)
    1. (id:ep_20260301_7f3a9c) [unverified] [high · plan · 2026-03-01 · Alice · #travel] Alice…

A header with the counts, then one line per memory, best first: with a query in relevance
order (the engine's), without one by priority (critical first) then newest first. Everything
that came from a chat or a file is escaped as the injected prompt escapes it
(indexer/injection/prompt_values.py): the id, tags and names with `field`/`label`, so they
cannot pose as the line's own metadata, and the text with `neutralise`, last on its line, so a
memory that contains a line break or `[unverified] (id:...)` cannot start or fake another
record. Nothing found: one line that says why (`nothing`, indexer.retrieval.outcome's words).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from indexer.injection.prompt_values import field, neutralise
from indexer.retrieval.outcome import WhyEmpty
from vault.format.model import PRIORITIES, Episode

NOTHING = "No relevant memories found."
UNVERIFIED = "[unverified]"
SEPARATOR = " · "
# The tool returns the full text (the prompt cuts at 1000), but one memory must not flood
# the model's context either: the console shows the rest.
MAX_TEXT_CHARS = 4000


def by_priority(episodes: Sequence[Episode]) -> list[Episode]:
    """Critical, high, normal, low; newest first within each; ties by id (stable output)."""
    ordered = sorted(episodes, key=lambda e: e.id)
    ordered.sort(key=lambda e: e.created_at, reverse=True)
    ordered.sort(key=lambda e: -_rank(e.priority))
    return ordered


def _rank(priority: str) -> int:
    return PRIORITIES.index(priority) if priority in PRIORITIES else 1


def header(episodes: Sequence[Episode]) -> str:
    verified = sum(1 for e in episodes if e.verified)
    noun = "memory" if len(episodes) == 1 else "memories"
    return f"{len(episodes)} {noun} ({verified} verified, {len(episodes) - verified} unverified)"


def _meta(value: str) -> str:
    """A metadata value: `field` escaping, and the separator `·` too, so a tag `a · #b`
    stays one tag."""
    return field(value).replace(SEPARATOR.strip(), f"&#{ord(SEPARATOR.strip())};")


def line(number: int, episode: Episode) -> str:
    meta = [_meta(episode.priority), _meta(episode.category or "-"), _day(episode.created_at)]
    if episode.speaker is not None:
        meta.append(_meta(" ".join((episode.speaker.name or episode.speaker.id).split())))
    meta.extend(f"#{_meta(tag)}" for tag in episode.tags)
    if episode.status != "active":
        meta.append(_meta(episode.status))
    if episode.expires_at is not None:
        meta.append(f"expires {_day(episode.expires_at)}")
    mark = f" {UNVERIFIED}" if not episode.verified else ""
    text = episode.body
    if len(text) > MAX_TEXT_CHARS:
        text = f"{text[: MAX_TEXT_CHARS - 1].rstrip()}… (+{len(text) - MAX_TEXT_CHARS + 1} chars)"
    # The mark before the metadata, never next to the text: a memory that starts with
    # "[unverified]" must not look unverified, nor a tag (escaped) close the bracket.
    return f"{number}. (id:{field(episode.id)}){mark} [{SEPARATOR.join(meta)}] {neutralise(text)}"


def nothing(why: WhyEmpty | None) -> str:
    """The empty answer in one line, with the reason recall found nothing:
    "No relevant memories found: below the floor (best 0.31 < 0.44)."."""
    if why is None:
        return NOTHING
    return f"{NOTHING.removesuffix('.')}: {why.words()}."


def recall_text(episodes: Sequence[Episode], more: int = 0) -> str:
    """The tool's answer; `more` = matches left out by top_k (listing only)."""
    if not episodes:
        return NOTHING
    lines = [header(episodes), *(line(i, e) for i, e in enumerate(episodes, 1))]
    if more:
        lines.append(f"(+{more} more: raise top_k or add a filter to see them)")
    return "\n".join(lines)


def _day(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%d")
