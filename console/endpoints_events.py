"""/events/people, /events, /event/close: the key events of the selected chat's bot, per
person (vault.events does the work).

Events belong to a person of a bot, not to a chat: the scope picks the bot (and labels a
close with its chat), the `speaker` field picks the person. Closing carries the sha256
the page showed and is refused (409) when the file changed since, so nothing is decided
over an edit the person has not seen.
"""

from __future__ import annotations

from typing import Any

from console.context import ConsoleContext
from console.requests import Body, checked_id
from vault.errors import BadRequestError
from vault.events import (
    STATUS_FILTERS,
    Actor,
    close_event,
    event_json,
    load_events,
    people_with_events,
    select,
)
from vault.layout.names import MAX_ID_CHARS


def _speaker(body: Body) -> str:
    speaker = checked_id(body.need("speaker", limit=MAX_ID_CHARS), "sender id")
    assert speaker is not None  # need() never returns None
    return speaker


def people(ctx: ConsoleContext, body: Body) -> dict[str, Any]:
    scope = body.scope(ctx)
    found = people_with_events(ctx.vault.layout, scope.bot)
    return {
        "bot": scope.bot,
        "people": [
            {"speaker": p.person, "open": p.open, "closed": p.closed, "problems": p.problems}
            for p in found
        ],
    }


def events(ctx: ConsoleContext, body: Body) -> dict[str, Any]:
    scope = body.scope(ctx)
    speaker = _speaker(body)
    status = body.choice("status", STATUS_FILTERS, "open")
    stored, problems = load_events(ctx.vault.layout, scope.bot, speaker)
    counts = {s: len(select(stored, s)) for s in STATUS_FILTERS if s != "all"}
    return {
        "bot": scope.bot,
        "speaker": speaker,
        "status": status,
        "counts": counts,
        "items": [event_json(s, history=True) for s in select(stored, status)],
        "problems": [p.as_json() for p in problems],
    }


def close(ctx: ConsoleContext, body: Body) -> dict[str, Any]:
    scope = body.scope(ctx)
    speaker = _speaker(body)
    expected = body.sha()
    if expected is None:
        raise BadRequestError(
            "`expected_sha256` is missing: send the event's sha256 the console showed"
        )
    actor = Actor(scope.bot, speaker, chat=scope.session, source="console")
    done = close_event(
        ctx.vault,
        actor,
        body.need("id", limit=200),
        body.need("resolution", limit=4000),
        expected_hash=expected,
    )
    return {"event": event_json(done, history=True)}


ROUTES = {
    "/events/people": people,
    "/events": events,
    "/event/close": close,
}
