"""/persons, /person/link, /person/unlink: the linked persons of the selected chat's bot
(vault.persons does the work).

A person belongs to a bot, not to a chat: the scope picks the bot (and labels the commit
with its chat). Linking is the operator's decision, and the console is the operator's;
a sender id already linked to another person is refused (400) with that person's id, and a
person file that cannot be read is shown as a problem and never rewritten.
"""

from __future__ import annotations

from typing import Any

from console.context import ConsoleContext
from console.requests import Body
from vault.layout.names import MAX_ID_CHARS
from vault.persons import StoredPerson, link, load_persons, unlink


def person_json(stored: StoredPerson) -> dict[str, Any]:
    p = stored.person
    return {
        "id": p.id,
        "name": p.name,
        "senders": list(p.senders),
        "path": stored.rel,
        "sha256": stored.sha,
    }


def persons(ctx: ConsoleContext, body: Body) -> dict[str, Any]:
    scope = body.scope(ctx)
    book = load_persons(ctx.vault.layout, scope.bot)
    return {
        "bot": scope.bot,
        "persons": [person_json(s) for s in book.stored],
        "problems": [p.as_json() for p in book.every_problem()],
    }


def _result(ctx: ConsoleContext, bot: str | None, person: str, changed: tuple[str, ...]) -> Any:
    stored = load_persons(ctx.vault.layout, bot).get(person)
    return {"person": person_json(stored) if stored else None, "changed": list(changed)}


def link_person(ctx: ConsoleContext, body: Body) -> dict[str, Any]:
    scope = body.scope(ctx)
    done = link(
        ctx.vault,
        scope.bot,
        body.need("person", limit=MAX_ID_CHARS),
        [body.need("sender", limit=MAX_ID_CHARS)],
        name=body.text("name", required=False, limit=200),
        source="console",
        chat=scope.session,
    )
    return _result(ctx, scope.bot, done.person.id, done.changed)


def unlink_person(ctx: ConsoleContext, body: Body) -> dict[str, Any]:
    scope = body.scope(ctx)
    done = unlink(
        ctx.vault,
        scope.bot,
        body.need("sender", limit=MAX_ID_CHARS),
        source="console",
        chat=scope.session,
    )
    return _result(ctx, scope.bot, done.person.id, done.changed)


ROUTES = {
    "/persons": persons,
    "/person/link": link_person,
    "/person/unlink": unlink_person,
}
