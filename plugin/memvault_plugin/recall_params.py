"""`recall_memory`'s parameters, checked once at the edge (the tool's own messages).

Two kinds of filter: the upstream ones (speaker, time, importance, source), applied to the
candidates of a search, and Synapse's fields (vault.format.episode_filter: tags, category,
priority, verified, expiring_within), which the indexes apply inside their query.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from indexer.retrieval.filters import Filters as FieldFilters
from indexer.retrieval.filters import parse_filters
from vault.errors import BadInput, BadRequestError
from vault.format.model import Episode

STATUSES = ("active", "superseded", "archived", "deleted")


class BadTimestamp(BadInput, ValueError):
    pass


def parse_time(text: str) -> int | None:
    """Unix seconds of an ISO-8601 time (`Z` and dates allowed; naive means UTC)."""
    if not text:
        return None
    try:
        when = datetime.fromisoformat(text.strip().replace("z", "Z"))
    except ValueError:
        raise BadTimestamp(
            f"invalid timestamp '{text}'. Use ISO-8601 such as 2026-03-14T00:00:00Z"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return int(when.timestamp())


@dataclass(frozen=True)
class Filters:
    speaker_id: str
    speaker_name: str
    after: int | None
    before: int | None
    importance_min: int | None
    source: str

    def any(self) -> bool:
        return bool(
            self.speaker_id
            or self.speaker_name
            or self.after is not None
            or self.before is not None
            or self.importance_min is not None
            or self.source
        )

    def names(self) -> tuple[str, ...]:
        """The tool parameters of the filters that are set (what an empty answer names)."""
        given = {
            "speaker_id": self.speaker_id,
            "speaker_name": self.speaker_name,
            "time_after": self.after is not None,
            "time_before": self.before is not None,
            "importance_min": self.importance_min is not None,
            "source": self.source,
        }
        return tuple(name for name, value in given.items() if value)

    def admits(self, episode: Episode) -> bool:
        speaker = episode.speaker
        created = int(episode.created_at.timestamp())
        return (
            (not self.speaker_id or (speaker is not None and speaker.id == self.speaker_id))
            and (
                not self.speaker_name
                or (
                    speaker is not None
                    and (speaker.name or "").casefold() == self.speaker_name.casefold()
                )
            )
            and (self.after is None or created >= self.after)
            and (self.before is None or created <= self.before)
            and (self.importance_min is None or episode.importance >= self.importance_min)
            and (not self.source or episode.source == self.source)
        )


@dataclass(frozen=True)
class Recall:
    """What to look for: the query ("" = list), how many, and both kinds of filter."""

    query: str
    top_k: int
    status: str
    filters: Filters
    fields: FieldFilters


def _text_param(params: dict[str, Any], name: str) -> str | None:
    value = params.get(name, "")
    if value is None:
        return ""
    return value.strip() if isinstance(value, str) else None


def parse_recall(params: dict[str, Any]) -> Recall | str:
    """The tool's parameters checked once, or the "Error: ..." to answer with."""
    query = params.get("query", "")
    if query is None:
        query = ""
    if not isinstance(query, str):
        return "Error: query must be a string (or leave it out to list memories)."
    top_k = params.get("top_k", 5)
    if top_k is None:
        top_k = 5
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k <= 0:
        return "Error: top_k must be a positive integer."
    texts: dict[str, str] = {}
    for name in ("speaker_id", "speaker_name", "time_after", "time_before", "source"):
        value = _text_param(params, name)
        if value is None:
            return f"Error: {name} must be a string."
        texts[name] = value
    status = params.get("status", "active")
    if status is None:
        status = "active"
    if not isinstance(status, str):
        return "Error: status must be a string."
    status = status.strip().lower() or "active"
    if status not in STATUSES:
        return "Error: status must be one of active, superseded, archived, or deleted."
    importance_min = params.get("importance_min")
    if importance_min is not None and (
        isinstance(importance_min, bool)
        or not isinstance(importance_min, int)
        or not 1 <= importance_min <= 5
    ):
        return "Error: importance_min must be an integer between 1 and 5."
    try:
        filters = Filters(
            speaker_id=texts["speaker_id"],
            speaker_name=texts["speaker_name"],
            after=parse_time(texts["time_after"]),
            before=parse_time(texts["time_before"]),
            importance_min=importance_min,
            source=texts["source"],
        )
        fields = parse_filters(
            tags=params.get("tags"),
            category=params.get("category"),
            priority=params.get("priority"),
            verified=params.get("verified"),
            expiring_within=params.get("expiring_within"),
        )
    except (BadTimestamp, BadRequestError) as exc:
        return f"Error: {exc}"
    return Recall(query.strip(), top_k, status, filters, fields)
