"""A new episode: what a caller may ask to remember, checked, and the file that holds it.

The checks say what to fix before anything is written; the file is created, never
overwritten, and only once its text provably reads back as the episode (render_episode).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import UTC, datetime

from vault.episode_fields import clean_text
from vault.episodes import normalise_body, render_episode
from vault.keys import ScopeId
from vault.layout import Layout
from vault.model import CATEGORIES, SOURCES, Episode, Speaker, default_confidence
from vault.safewrite import create_new
from vault.store import BadRequestError, check_episode_id, check_speaker_id
from vault.transaction import Txn

MAX_EPISODE_CHARS = 20_000
MAX_TAGS = 20


def unique_tags(tags: Iterable[str]) -> tuple[str, ...]:
    """Tags stripped, blanks and repeats dropped (first spelling kept), at most MAX_TAGS."""
    out = tuple(dict.fromkeys(t.strip() for t in tags if t and t.strip()))
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
) -> Episode:
    """The episode a caller asked for, checked (id still empty; `clock` dates it if undated)."""
    body = normalise_body(text or "")  # as the parser reads a body back
    if not body:
        raise BadRequestError("content is empty: say what to remember")
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
    clean_tags = unique_tags(tags)
    if speaker is not None:  # stripped like the parser reads it; a blank id is refused
        speaker = Speaker(check_speaker_id(speaker.id), clean_text(speaker.name))
    return Episode(
        id="",
        created_at=(created_at or clock()).astimezone(UTC),
        body=body,
        speaker=speaker,
        importance=importance,
        tags=clean_tags,
        status=status,
        key=clean_text(key),
        category=category,
        source=source,
        verified=source == "user",
        confidence=default_confidence(source),
    )


def create_episode_file(
    layout: Layout, scope: ScopeId, episode: Episode, episode_id: str | None, txn: Txn
) -> Episode:
    """Create the episode's file inside `txn` under a fresh id (or `episode_id`, if free)."""
    if episode_id is not None:
        episode_id = check_episode_id(episode_id)
    for _ in range(20):
        new_id = episode_id or f"ep_{episode.created_at:%Y%m%d}_{secrets.token_hex(3)}"
        candidate = replace(episode, id=new_id)
        path = layout.new_episode_path(scope, new_id, candidate.created_at)
        try:  # proves the file reads back as `candidate` (same rule as the parser)
            data = render_episode(candidate).encode("utf-8")
        except ValueError as exc:
            raise BadRequestError(f"cannot save this memory: {exc}") from exc
        if create_new(path, data):
            txn.written.append(path)
            return candidate
        if episode_id:
            raise BadRequestError(f"an episode file {new_id} already exists: pick another id")
    raise RuntimeError("could not find a free episode id after 20 tries")
