"""A new episode: what a caller may ask to remember, checked, and the file that holds it.

The checks say what to fix before anything is written; the file is created, never
overwritten, and only once its text provably reads back as the episode (render_episode).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

from vault.format.durations import parse_duration
from vault.format.episode_fields import clean_text
from vault.format.episodes import normalise_body, render_episode
from vault.format.model import (
    CATEGORIES,
    PRIORITIES,
    SOURCES,
    Episode,
    Speaker,
    default_confidence,
    importance_priority,
)
from vault.format.tags import normalise_tags
from vault.layout.keys import ScopeId
from vault.layout.layout import Layout
from vault.layout.store import BadRequestError, check_episode_id, check_speaker_id
from vault.redaction.redact_forms import redacted_name
from vault.redaction.redact_write import scrub, scrub_all
from vault.writes.fresh_ids import create_under_fresh_id, dated_id, rendered
from vault.writes.transaction import Txn

MAX_EPISODE_CHARS = 20_000
MAX_TAGS = 20


def unique_tags(tags: Iterable[str]) -> tuple[str, ...]:
    """Tags stripped, blanks and case-folded repeats dropped (first spelling kept:
    vault.format.tags),
    at most MAX_TAGS."""
    out = normalise_tags(t for t in tags if t)
    if len(out) > MAX_TAGS:
        raise BadRequestError(f"{len(out)} tags: use at most {MAX_TAGS}")
    return out


def build_episode(
    text: str,
    speaker: Speaker | None,
    tags: tuple[str, ...] | list[str],
    importance: int,
    key: str | None,
    category: str | None,
    source: str,
    created_at: datetime | None,
    status: str,
    *,
    clock: Callable[[], datetime],
    priority: str | None = None,
    confidence: float | None = None,
    expires_at: datetime | None = None,
    expires_in: str | timedelta | None = None,
    verified: bool | None = None,
) -> Episode:
    """The episode a caller asked for, checked (id still empty; `clock` dates it if undated).

    `priority` defaults to the one `importance` maps onto (as for an old file); `expires_in`
    ("7d", or a timedelta) counts from now and excludes `expires_at`.
    """
    body = normalise_body(text or "")  # as the parser reads a body back
    if not body:
        raise BadRequestError("content is empty: say what to remember")
    # The one redaction of a new episode (body, tags, key, speaker name): every writer
    # builds its episode here (remember, import, uploads, candidates, consolidation).
    body = normalise_body(scrub(body, "the content"))
    if len(body) > MAX_EPISODE_CHARS:
        raise BadRequestError(
            f"content is {len(body)} characters: keep one memory under {MAX_EPISODE_CHARS}"
        )
    if isinstance(importance, bool) or not isinstance(importance, int) or not 1 <= importance <= 5:
        raise BadRequestError(f"importance must be an integer from 1 to 5 (got {importance!r})")
    if category is not None and category not in CATEGORIES:
        raise BadRequestError(f"category must be one of {', '.join(CATEGORIES)}")
    if source not in SOURCES:
        raise BadRequestError(f"source must be one of {', '.join(SOURCES)}")
    clean_tags = unique_tags(scrub_all(list(tags)))
    now = clock().astimezone(UTC)
    if speaker is not None:  # stripped like the parser reads it; a blank id is refused
        speaker = Speaker(check_speaker_id(speaker.id), clean_text(redacted_name(speaker.name)))
    return Episode(
        id="",
        created_at=(created_at or now).astimezone(UTC),
        body=body,
        speaker=speaker,
        importance=importance,
        tags=clean_tags,
        status=status,
        key=clean_text(redacted_name(key)),
        category=category,
        source=source,
        # None: as the source implies (a person's word is verified, an assistant's is not);
        # the console passes True for a memory a person typed there.
        verified=source == "user" if verified is None else bool(verified),
        confidence=default_confidence(source) if confidence is None else _confidence(confidence),
        expires_at=_expiry(expires_at, expires_in, now),
        priority=importance_priority(importance) if priority is None else _priority(priority),
        updated_at=now,
    )


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


def _expiry(
    expires_at: datetime | None, expires_in: str | timedelta | None, now: datetime
) -> datetime | None:
    if expires_at is not None and expires_in is not None:
        raise BadRequestError("give expires_at or expires_in, not both")
    if expires_in is not None:
        span = parse_duration(expires_in) if isinstance(expires_in, str) else expires_in
        if span <= timedelta(0):
            raise BadRequestError("expires_in must be a positive duration, e.g. 7d")
        return now + span
    if expires_at is None:
        return None
    # A past date is kept (an import of an expired memory stays expired): it is not recalled.
    aware = expires_at.replace(tzinfo=UTC) if expires_at.tzinfo is None else expires_at
    return aware.astimezone(UTC)


def create_episode_file(
    layout: Layout, scope: ScopeId, episode: Episode, episode_id: str | None, txn: Txn
) -> Episode:
    """Create the episode's file inside `txn` under a fresh id (or `episode_id`, if free).
    `episode` comes from build_episode (Vault.new_episode), which redacted it."""
    if episode_id is not None:
        episode_id = check_episode_id(episode_id)

    def draft(new_id: str) -> tuple[Episode, Path, bytes]:
        candidate = replace(episode, id=new_id)
        path = layout.new_episode_path(scope, new_id, candidate.created_at)
        # Rendering proves the file reads back as `candidate` (same rule as the parser).
        return candidate, path, rendered(render_episode, candidate, "memory")

    fresh = partial(dated_id, "ep", episode.created_at)
    return create_under_fresh_id(txn, "episode", episode_id, fresh, draft)[0]
