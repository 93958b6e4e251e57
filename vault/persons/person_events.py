"""A linked person's key events: those of every sender id linked to it, within one bot.

Event files stay where the sender that opened them put them (`people/<sender>/events/`):
a link moves no file, so an unlink gives each sender back exactly its own events. Reading
for a person is the union over its senders' folders; changing an event goes to the folder
of the sender that holds it (`owner_of`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from vault.errors import BadRequestError, NotFoundError
from vault.events import StoredEvent, event_id_problem, load_events, select
from vault.format.model import Problem
from vault.layout.layout import Layout
from vault.layout.names import UnsafeNameError

log = logging.getLogger(__name__)


def events_of(
    layout: Layout, bot: str | None, senders: Sequence[str]
) -> tuple[list[StoredEvent], list[Problem]]:
    """Every event of these senders of `bot`, most recently updated first. A sender whose
    folder is refused (a shortened name that is another id's) is left out, not fatal."""
    found: list[StoredEvent] = []
    problems: list[Problem] = []
    for sender in dict.fromkeys(senders):
        try:
            stored, bad = load_events(layout, bot, sender)
        except (UnsafeNameError, BadRequestError) as exc:
            log.warning(
                "memvault=person_events_skipped bot=%s sender=%r error=%r", bot, sender, exc
            )
            continue
        found.extend(stored)
        problems.extend(bad)
    found.sort(key=lambda s: (s.event.last_change, s.event.id), reverse=True)
    return found, problems


def open_events_of(
    layout: Layout, bot: str | None, senders: Sequence[str], limit: int
) -> list[StoredEvent]:
    """The `limit` most recently updated open events of these senders (what a prompt gets)."""
    if limit <= 0:
        return []
    return select(events_of(layout, bot, senders)[0], "open")[:limit]


def owner_of(layout: Layout, bot: str | None, senders: Sequence[str], event_id: object) -> str:
    """The sender (of `senders`) whose folder holds the event `event_id`; the first sender
    when none does, so the one-person lookup says "no event" in its own words."""
    if not senders:
        raise NotFoundError("no sender id given: a key event belongs to a person")
    wanted = event_id.strip() if isinstance(event_id, str) else ""
    if event_id_problem(wanted) is None:
        for sender in senders:
            if _holds(layout, bot, sender, wanted):
                return sender
    return senders[0]


def _holds(layout: Layout, bot: str | None, sender: str, event_id: str) -> bool:
    try:
        return any(s.event.id == event_id for s in load_events(layout, bot, sender)[0])
    except (UnsafeNameError, BadRequestError):
        return False
