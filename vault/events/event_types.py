"""The event-type dictionary: which kinds of key event a bot keeps (LoopAgent's key events).

A setting of the plugin (`event_types`), one `name: description` per item, e.g.
`appointment: a visit booked for a date`. An empty dictionary turns the feature off. A type
is matched exactly (no case folding, no trimming beyond the setting's own): the model must
use a name from the list it is given, and a near miss is refused with that list.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from vault.errors import BadInput, BadRequestError

MAX_TYPES = 30
MAX_DESCRIPTION = 200
# A name is a file field, a tool argument and a word in the prompt: one token of letters
# (any script), digits, `_` and `-`, so it never needs quoting or escaping to read as one.
_NAME = re.compile(r"[^\W_][\w-]{0,39}")
NAME_RULE = "1 to 40 letters, digits, _ or -, starting with a letter or digit (e.g. order_issue)"


class EventTypeError(BadInput, ValueError):
    """The event-type setting cannot be used; the message names the item and the fix."""


@dataclass(frozen=True)
class EventType:
    name: str
    description: str = ""


def parse_event_types(raw: object) -> tuple[EventType, ...]:
    """The setting as LangBot sends it (a list of strings) or as text (one item a line).
    Blank items are skipped; a bad or repeated name is refused (nothing is guessed)."""
    if raw is None or raw == "":
        return ()
    items: Iterable[object]
    if isinstance(raw, str):
        items = raw.splitlines()
    elif isinstance(raw, list | tuple):
        items = raw
    else:
        raise EventTypeError(
            f"event_types must be a list of 'name: description' items (got {type(raw).__name__})"
        )
    found: dict[str, EventType] = {}
    for item in items:
        if not isinstance(item, str):
            raise EventTypeError(
                f"event_types items must be text like 'appointment: ...' ({item!r})"
            )
        if not item.strip():
            continue
        name, _, description = item.strip().partition(":")
        name, description = name.strip(), " ".join(description.split())
        if not _NAME.fullmatch(name):
            raise EventTypeError(
                f"event type {name[:40]!r} (item {item.strip()[:60]!r}) is not a valid name: "
                f"{NAME_RULE}; write items as 'name: description'"
            )
        if name in found:
            raise EventTypeError(f"event type {name!r} is listed twice: keep one")
        if len(description) > MAX_DESCRIPTION:
            raise EventTypeError(
                f"the description of event type {name!r} is {len(description)} characters: "
                f"at most {MAX_DESCRIPTION}"
            )
        found[name] = EventType(name, description)
    if len(found) > MAX_TYPES:
        raise EventTypeError(f"event_types has {len(found)} types: at most {MAX_TYPES}")
    return tuple(found.values())


def type_names(types: Sequence[EventType]) -> str:
    return ", ".join(t.name for t in types)


def check_type(value: object, types: Sequence[EventType]) -> str:
    """`value` if it is exactly one of the dictionary's names, else BadRequestError that
    lists them all (what the tool answers the model)."""
    if not types:
        raise BadRequestError(FEATURE_OFF)
    if isinstance(value, str) and any(t.name == value for t in types):
        return value
    if value is None or value == "":
        raise BadRequestError(f"the event type is missing: use exactly one of: {type_names(types)}")
    shown = value[:40] if isinstance(value, str) else type(value).__name__
    raise BadRequestError(
        f"event type {shown!r} is not in this bot's event types; use exactly one of: "
        f"{type_names(types)}"
    )


FEATURE_OFF = (
    "key events are off for this bot: no event types are configured (a LangBot admin adds "
    "them in the MemVault plugin setting event_types, e.g. 'appointment: a booked visit')"
)
