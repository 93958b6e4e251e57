"""The key-events block: the current speaker's open events, fenced as data (pure), and the
one read the injector makes for it.

The block is a system message of its own after the memory block (prompt_route). Every
value from a file or a chat is escaped as the memory block's are (prompt_values): the
summary and the last note as prose, the id and the type as fields, so nothing in an event
can close `<key-events>` or pose as another entry. Each entry is capped (SUMMARY_CHARS,
NOTE_CHARS), so the block stays small whatever the files hold: at most about 450
characters an event, `events_injected` (at most 20) events.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from dataclasses import dataclass

import yaml

from templates import read_template
from vault.events import Event, EventType, open_events
from vault.layout.layout import Layout
from vault.layout.views import iso
from vault.persons import open_events_of

from .prompt_values import field, neutralise

log = logging.getLogger(__name__)

SUMMARY_CHARS = 200
NOTE_CHARS = 160


@functools.cache
def wording() -> dict[str, str]:
    data = yaml.safe_load(read_template("events_en.yaml"))
    return {key: str(value) for key, value in data.items()}


@dataclass(frozen=True)
class EventsBlock:
    text: str  # the prompt message; "" = no block
    ids: tuple[str, ...] = ()  # the events in it, in order


def _cut(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def last_note(event: Event) -> str | None:
    notes = [e.text for e in event.history() if e.kind == "note" and e.text]
    return notes[-1] if notes else None


def entry(event: Event) -> str:
    """`(id:evt_x, type:appointment, status:open, opened:..., updated:...) <event>summary</event>
    [<note>last note</note>] [<resolution>...</resolution>]`, one line, escaped."""
    parts = [
        f"id:{field(event.id)}",
        f"type:{field(event.type)}",
        f"status:{field(event.status)}",
        f"opened:{iso(event.opened_at)}",
        f"updated:{iso(event.last_change)}",
    ]
    line = f"({', '.join(parts)}) <event>{neutralise(_cut(event.summary, SUMMARY_CHARS))}</event>"
    note = last_note(event)
    if note:
        line += f" <note>{neutralise(_cut(note, NOTE_CHARS))}</note>"
    if event.status == "closed" and event.resolution:
        line += f" <resolution>{neutralise(_cut(event.resolution, NOTE_CHARS))}</resolution>"
    return line


def types_line(types: Sequence[EventType]) -> str:
    shown = "; ".join(
        f"{field(t.name)} ({neutralise(t.description)})" if t.description else field(t.name)
        for t in types
    )
    return wording()["types"].format(types=shown)


def fenced(events: Sequence[Event]) -> str:
    words = wording()
    lines = [f"[{i}] {entry(e)}" for i, e in enumerate(events, 1)]
    return "\n".join([words["fence_open"], *lines, words["fence_close"]])


def render(events: Sequence[Event], types: Sequence[EventType]) -> EventsBlock:
    """The block for these open events (best first); "" when the feature is off."""
    if not types:
        return EventsBlock("")
    words = wording()
    body = fenced(events) if events else words["none_open"]
    text = "\n\n".join([words["intro"], types_line(types), body])
    return EventsBlock(text, tuple(e.id for e in events))


def listing(events: Sequence[Event], status: str, types: Sequence[EventType]) -> str:
    """What list_events answers the model: a header, the fenced entries, the types."""
    words = wording()
    if not events:
        return words["list_none"].format(status=status) + "\n" + types_line(types)
    title = words["list_title"].format(count=len(events), status=status)
    return "\n".join([title, fenced(events), types_line(types)])


def for_turn(
    layout: Layout,
    bot: str | None,
    sender_id: str,
    types: Sequence[EventType],
    limit: int,
    senders: Sequence[str] = (),
) -> EventsBlock:
    """The speaker's block for this turn; no block without types, a sender or a count, and
    none (logged) when their folder cannot be read: memory never breaks a turn. `senders`:
    every sender id of the speaker's linked person (vault.persons), whose events are theirs."""
    if not types or not sender_id or limit <= 0:
        return EventsBlock("")
    try:
        if len(senders) > 1:
            stored = open_events_of(layout, bot, senders, limit)
        else:
            stored = open_events(layout, bot, sender_id, limit)
    except (ValueError, OSError) as exc:
        log.warning(
            "memvault=events_unreadable bot=%s sender_id=%r error=%r", bot, sender_id, str(exc)
        )
        return EventsBlock("")
    return render([s.event for s in stored], types)
