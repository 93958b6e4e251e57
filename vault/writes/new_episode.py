"""NewEpisode: what a caller asks to remember, as one frozen value built where input arrives.

The CLI (`memvault remember`), the plugin's `remember` tool, the console's form, an import,
an accepted candidate, a KB upload and a consolidation summary each build ONE NewEpisode;
Vault.remember / Vault.new_episode / build_episode take it as it is. Construction checks
and normalises every field that needs neither the vault's clock nor redaction (the same
messages as before, each saying what to write instead); vault.writes.episode_create then
redacts, dates and counts what is left. Two equal inputs give two equal values.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from vault.errors import BadRequestError
from vault.format.durations import parse_duration
from vault.format.episodes import normalise_body
from vault.format.model import CATEGORIES, PRIORITIES, SOURCES, Speaker
from vault.layout.keys import ScopeId, checked_scope
from vault.layout.store import check_episode_id, check_speaker_id


@dataclass(frozen=True)
class NewEpisode:
    """One memory to write into `scope`. `priority` None: what `importance` maps onto;
    `expires_in` ("7d" or a timedelta, kept as a timedelta) counts from the write and
    excludes `expires_at`; `verified` None: as the source implies (a person's word is)."""

    scope: ScopeId
    text: str
    speaker: Speaker | None = None
    tags: tuple[str, ...] = ()
    importance: int = 2
    key: str | None = None
    category: str | None = None
    source: str = "agent"
    query_id: int | str | None = None
    created_at: datetime | None = None
    episode_id: str | None = None
    status: str = "active"
    priority: str | None = None
    confidence: float | None = None
    expires_at: datetime | None = None
    expires_in: str | timedelta | None = None  # stored as a timedelta
    verified: bool | None = None

    def __post_init__(self) -> None:
        checked_scope(self.scope)
        body = normalise_body(self.text or "")  # as the parser reads a body back
        if not body:
            raise BadRequestError("content is empty: say what to remember")
        _set(self, "text", body)
        _set(self, "tags", tuple(self.tags))  # a list from JSON or argparse: hashable, equal
        importance = self.importance
        if (
            isinstance(importance, bool)
            or not isinstance(importance, int)
            or not 1 <= importance <= 5
        ):
            raise BadRequestError(f"importance must be an integer from 1 to 5 (got {importance!r})")
        if self.category is not None and self.category not in CATEGORIES:
            raise BadRequestError(f"category must be one of {', '.join(CATEGORIES)}")
        if self.source not in SOURCES:
            raise BadRequestError(f"source must be one of {', '.join(SOURCES)}")
        if self.speaker is not None:  # stripped like the parser reads it; a blank id is refused
            _set(self, "speaker", Speaker(check_speaker_id(self.speaker.id), self.speaker.name))
        if self.episode_id is not None:
            _set(self, "episode_id", check_episode_id(self.episode_id))
        if self.created_at is not None:
            _set(self, "created_at", self.created_at.astimezone(UTC))
        if self.priority is not None:
            _set(self, "priority", _priority(self.priority))
        if self.confidence is not None:
            _set(self, "confidence", _confidence(self.confidence))
        _set(self, "expires_in", _span(self.expires_at, self.expires_in))
        if self.expires_at is not None:
            # A past date is kept (an import of an expired memory stays expired): not recalled.
            at = self.expires_at
            _set(
                self,
                "expires_at",
                (at.replace(tzinfo=UTC) if at.tzinfo is None else at).astimezone(UTC),
            )


def _set(value: NewEpisode, name: str, normalised: object) -> None:
    object.__setattr__(value, name, normalised)  # frozen: only __post_init__ normalises


def _priority(value: str) -> str:
    text = value.strip().lower() if isinstance(value, str) else value
    if text not in PRIORITIES:
        raise BadRequestError(
            f"priority must be one of {', '.join(PRIORITIES)} (got {str(value)[:40]!r})"
        )
    return text


def _confidence(value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise BadRequestError(f"confidence must be a number from 0 to 1 (got {value!r})")
    return float(value)


def _span(expires_at: datetime | None, expires_in: str | timedelta | None) -> timedelta | None:
    if expires_in is None:
        return None
    if expires_at is not None:
        raise BadRequestError("give expires_at or expires_in, not both")
    span = parse_duration(expires_in) if isinstance(expires_in, str) else expires_in
    if span <= timedelta(0):
        raise BadRequestError("expires_in must be a positive duration, e.g. 7d")
    return span
