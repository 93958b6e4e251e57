"""/episode/create and what /episodes, /search and /episode/edit read of Synapse's fields.

The create form and the edit form send the same fields as `remember` (tool and CLI) takes:
category, key, priority, tags, expires_at or expires_in, confidence (the create form also the
speaker's id and name and the importance, 1-5); the filter controls
send tags, category, priority, verified, expiring_within. Both are parsed by the vault's
own rules (vault.format.field_input, vault.format.episode_filter), so the page can never accept a
value the CLI refuses, or the other way round.
"""

from __future__ import annotations

from typing import Any

from console.context import ConsoleContext
from console.requests import Body
from vault.errors import BadRequestError
from vault.format.episode_filter import Filters, parse_filters
from vault.format.field_input import parse_edit, parse_fields
from vault.format.model import DEFAULT_IMPORTANCE, Speaker
from vault.layout.names import MAX_ID_CHARS
from vault.layout.views import episode_full
from vault.writes.new_episode import NewEpisode

EDIT_FIELDS = ("category", "key", "priority", "confidence", "expires_at", "expires_in")


def body_filters(body: Body) -> Filters:
    """The filter controls' values (absent or "" = no such filter)."""
    raw = body.raw
    return parse_filters(
        tags=raw.get("tags"),
        category=raw.get("category"),
        priority=raw.get("priority"),
        verified=raw.get("verified"),
        expiring_within=raw.get("expiring_within"),
    )


def edit_fields(ctx: ConsoleContext, body: Body) -> dict[str, object]:
    """The fields an edit sends (left out = unchanged), checked."""
    return parse_edit({k: body.raw[k] for k in EDIT_FIELDS if k in body.raw}, ctx.vault.clock())


def create(ctx: ConsoleContext, body: Body) -> dict[str, Any]:
    """A new memory a person typed in the console: verified, as it is their own word; unless
    the chat already remembers it (vault.writes.duplicates) and `allow_duplicate` is not
    true: then nothing is written and the answer is that memory, with `duplicate_of`."""
    scope = body.scope(ctx)
    content = body.need("content")
    raw = body.raw
    fields = parse_fields(
        now=ctx.vault.clock(),
        category=raw.get("category"),
        key=raw.get("key"),
        priority=raw.get("priority"),
        tags=body.strings("tags"),
        expires_at=raw.get("expires_at"),
        expires_in=raw.get("expires_in"),
        confidence=raw.get("confidence"),
    )
    speaker_id = body.text("speaker_id", required=False, limit=MAX_ID_CHARS)
    speaker_name = body.text("speaker_name", required=False, limit=MAX_ID_CHARS)
    if speaker_name and not (speaker_id or "").strip():
        # as `memvault remember --speaker-name` without --speaker: a name alone is no one
        raise BadRequestError("a speaker name needs the speaker's id as well: fill in both")
    speaker = Speaker(speaker_id, speaker_name) if speaker_id else None
    request = NewEpisode(
        scope,
        content,
        speaker=speaker,
        importance=body.integer("importance", DEFAULT_IMPORTANCE, 1, 5),
        tags=fields.tags,
        key=fields.key,
        category=fields.category,
        source="console",
        priority=fields.priority,
        confidence=fields.confidence,
        expires_at=fields.expires_at,
        verified=True,
    )
    done = ctx.vault.remember_once(request, allow_duplicate=body.flag("allow_duplicate"))
    shown = episode_full(ctx.vault.find_episode(scope, done.episode.id))
    if done.duplicate is not None:  # nothing written: the memory that already says it
        return {**shown, "duplicate_of": done.duplicate.as_json(), "created": False}
    return {**shown, "created": True}


ROUTES = {"/episode/create": create}
