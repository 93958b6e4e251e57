"""A new episode: the Episode a NewEpisode asks for (redacted, dated) and the file that holds it.

The checks say what to fix before anything is written; the file is created, never
overwritten, and only once its text provably reads back as the episode (render_episode).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

from vault.errors import BadRequestError
from vault.format.episode_fields import clean_text
from vault.format.episodes import normalise_body, render_episode
from vault.format.model import Episode, Speaker, default_confidence, importance_priority
from vault.format.redact_forms import redacted_name
from vault.format.tags import normalise_tags
from vault.layout.keys import ScopeId
from vault.layout.layout import Layout
from vault.layout.store import check_episode_id
from vault.writes.fresh_ids import create_under_fresh_id, dated_id, rendered
from vault.writes.new_episode import NewEpisode
from vault.writes.redact_write import scrub, scrub_all
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


def build_episode(request: NewEpisode, *, clock: Callable[[], datetime]) -> Episode:
    """The episode `request` asks for (id still empty; `clock` dates it if undated), after
    the checks that need redaction or the clock (NewEpisode made the others)."""
    # The one redaction of a new episode (body, tags, key, speaker name): every writer
    # builds its episode here (remember, import, uploads, candidates, consolidation).
    body = normalise_body(scrub(request.text, "the content"))
    if len(body) > MAX_EPISODE_CHARS:
        raise BadRequestError(
            f"content is {len(body)} characters: keep one memory under {MAX_EPISODE_CHARS}"
        )
    clean_tags = unique_tags(scrub_all(list(request.tags)))
    now = clock().astimezone(UTC)
    speaker = request.speaker
    if speaker is not None:
        speaker = Speaker(speaker.id, clean_text(redacted_name(speaker.name)))
    source, importance = request.source, request.importance
    return Episode(
        id="",
        created_at=request.created_at or now,
        body=body,
        speaker=speaker,
        importance=importance,
        tags=clean_tags,
        status=request.status,
        key=clean_text(redacted_name(request.key)),
        category=request.category,
        source=source,
        # None: as the source implies (a person's word is verified, an assistant's is not);
        # the console passes True for a memory a person typed there.
        verified=source == "user" if request.verified is None else bool(request.verified),
        confidence=default_confidence(source) if request.confidence is None else request.confidence,
        expires_at=now + request.expires_in if request.expires_in else request.expires_at,
        priority=request.priority or importance_priority(importance),
        updated_at=now,
    )


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
