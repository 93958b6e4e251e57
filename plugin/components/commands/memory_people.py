"""`!memory link [<sender> [person]]` and `!memory unlink [sender]`: one person across the
chats and platforms of this bot (vault.persons), linked only when a person asks.

Linking decides whose key events and profile another chat sees, so only LangBot's bot
admins may link (LangBot gives a command privilege 2 when the chat it comes from is an
admin of the bot); anyone may see their own link and unlink themselves. The sender id and
the person id come from chat: they go to the vault API, which checks them as folder names,
and never into a path here.
"""

from __future__ import annotations

from vault.persons import Person, link, load_persons, unlink

from .memory_call import Call, Reply
from .memory_views import echo

ADMIN = 2  # LangBot's privilege of a command sent from a chat that is an admin of the bot
LINK_USAGE = "Usage: !memory link | !memory link <sender> [person]"
UNLINK_USAGE = "Usage: !memory unlink [sender]"
NOT_ADMIN = (
    "[Memory] Only a bot admin can link sender ids (LangBot: Bots -> this bot -> admins); "
    "or edit bots/<bot>/persons/<person>/person.yaml, or use the Memory Console's People."
)


def _setting_note(call: Call) -> str:
    if call.memory.settings.linked_people:
        return "Their profile and key events follow them in every chat with this bot."
    return "This takes effect once the setting linked_people is on (plugin settings)."


def _described(person: Person, *, ids: bool) -> str:
    name = f" ({echo(person.name)})" if person.name else ""
    if ids:
        listed = ", ".join(echo(s) for s in person.senders) or "none"
        return f"person {echo(person.id)}{name}, sender ids: {listed}"
    return f"person {echo(person.id)}{name}, {len(person.senders)} sender id(s)"


def link_people(call: Call) -> str:
    if not call.params:
        return _status(call)
    if call.privilege < ADMIN:
        raise Reply(NOT_ADMIN, "forbidden")
    if len(call.params) > 2:
        raise Reply(LINK_USAGE)
    sender = call.params[0]
    me = call.sender_id.strip()
    book = load_persons(call.v.layout, call.scope.bot)
    if len(call.params) == 2:
        person_id, senders, name = call.params[1], [sender], None
    else:  # `link <sender>`: the other account is the asker's own person
        if not me:
            raise Reply(f"[Memory] LangBot did not say who is asking: {LINK_USAGE}")
        mine = book.person_of(me)
        person_id = mine.id if mine else me
        senders = [sender] if mine else [me, sender]
        name = None if mine else call.sender_name or None
    done = link(
        call.v,
        call.scope.bot,
        person_id,
        senders,
        name=name,
        source="user",
        chat=call.scope.session,
        query_id=call.query_id,
    )
    if not done.changed:
        return f"[Memory] Already linked: {_described(done.person, ids=True)}."
    return (
        f"[Memory] Linked {', '.join(echo(s) for s in done.changed)} to "
        f"{_described(done.person, ids=True)} ({done.rel}). {_setting_note(call)}"
    )


def _status(call: Call) -> str:
    me = call.sender_id.strip()
    if not me:
        raise Reply(f"[Memory] LangBot did not say who is asking. {LINK_USAGE}")
    book = load_persons(call.v.layout, call.scope.bot)
    if me in book.disputed:
        return (
            f"[Memory] You ({echo(me)}) are listed by several persons "
            f"({', '.join(echo(p) for p in book.disputed[me])}), so by none: a bot admin "
            "fixes their person.yaml files."
        )
    person = book.person_of(me)
    if person is None:
        return f"[Memory] You ({echo(me)}) are not linked to a person of this bot. {LINK_USAGE}"
    state = "on" if call.memory.settings.linked_people else "off"
    shown = _described(person, ids=call.privilege >= ADMIN)
    return f"[Memory] You ({echo(me)}) are {shown} (linked_people: {state})."


def unlink_people(call: Call) -> str:
    if len(call.params) > 1:
        raise Reply(UNLINK_USAGE)
    me = call.sender_id.strip()
    sender = call.params[0] if call.params else me
    if not sender:
        raise Reply(f"[Memory] LangBot did not say who is asking. {UNLINK_USAGE}")
    if call.privilege < ADMIN and sender.strip() != me:
        raise Reply(
            "[Memory] Only a bot admin can unlink another sender id; !memory unlink alone "
            "unlinks you.",
            "forbidden",
        )
    done = unlink(
        call.v,
        call.scope.bot,
        sender,
        source="user",
        chat=call.scope.session,
        query_id=call.query_id,
    )
    return (
        f"[Memory] Unlinked {echo(done.changed[0])} from person {echo(done.person.id)} "
        f"({len(done.person.senders)} sender id(s) left, {done.rel} kept)."
    )


def person_line(call: Call) -> str | None:
    """The overview's line when linked_people is on and the asker is linked, else None."""
    me = call.sender_id.strip()
    if not me or not call.memory.settings.linked_people:
        return None
    person = load_persons(call.v.layout, call.scope.bot).person_of(me)
    if person is None:
        return "Person: not linked (!memory link)"
    return f"Person: {_described(person, ids=False)}"
