"""Key-event files: one tracked matter of one person of a bot (an appointment, an order
problem, a complaint), open until it is closed.

`bots/<bot>/people/<encoded sender>/events/<id>.md`: YAML front matter (id, type, status,
summary, dates, the chat it was opened in, the speaker) and a body that is the event's
history, one dated entry per change, appended:

    ---
    id: evt_20261130_7f3a9c
    type: appointment
    status: open
    summary: Dentist on Tuesday 3pm
    opened_at: 2026-11-30T04:20:00Z
    updated_at: 2026-11-30T04:20:00Z
    opened_in: group_123
    speaker: {id: u42, name: Alice}
    ---
    ### 2026-11-30T04:20:00Z opened in group_123
    Dentist on Tuesday 3pm

Unknown front-matter fields are kept. A note's own lines never start a history heading
(a leading `#` is written `\\#`), so what a chat said cannot fake an entry.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ruamel.yaml.comments import CommentedMap

from vault.format.episode_fields import EpisodeFields
from vault.format.episodes import normalise_body, required_front_matter, split_front_matter
from vault.format.ids import file_token_id_problem
from vault.format.model import FormatError, Speaker
from vault.format.yamledit import edit_value, rt_edit, split_lines
from vault.format.yamlio import (
    decode,
    dump,
    format_datetime,
    parse_datetime,
    plain_value,
)
from vault.layout.names import percent_encode

EVENT_STATUSES: tuple[str, ...] = ("open", "closed")
HISTORY_KINDS: tuple[str, ...] = ("opened", "note", "closed")
MAX_SUMMARY = 500
MAX_NOTE = 4000
EVENT_ID_RULE = "an event id is 1 to 64 letters, digits and _ . @ - (e.g. evt_20261130_7f3a9c)"
FIELD_ORDER: tuple[str, ...] = (
    "id",
    "type",
    "status",
    "summary",
    "opened_at",
    "updated_at",
    "closed_at",
    "resolution",
    "opened_in",
    "speaker",
)
_HEADING = re.compile(r"^### (\S+) (opened|note|closed)(?: in (\S+))?[ \t]*$")


@dataclass(frozen=True)
class HistoryEntry:
    at: datetime | None
    kind: str  # opened | note | closed
    chat: str | None  # the session it happened in, percent-encoded as written
    text: str


@dataclass(frozen=True)
class Event:
    id: str
    type: str
    summary: str
    opened_at: datetime
    status: str = "open"
    updated_at: datetime | None = None  # None in a hand-written file: opened_at stands
    closed_at: datetime | None = None
    resolution: str | None = None
    opened_in: str | None = None  # the session name it was opened in
    speaker: Speaker | None = None
    body: str = ""  # the history, as written
    extra: tuple[tuple[str, Any], ...] = ()

    @property
    def last_change(self) -> datetime:
        return self.updated_at or self.opened_at

    def history(self) -> list[HistoryEntry]:
        return parse_history(self.body)


def event_id_problem(value: str) -> str | None:
    return file_token_id_problem(value, EVENT_ID_RULE)


# --------------------------------------------------------------------------- parsing


def parse_event(data: bytes | str, *, rel_path: str) -> Event:
    """An event file, or FormatError naming the line a person should fix."""
    parts, block = required_front_matter(
        data,
        "an event file starts with front matter (--- lines) saying its id, type, status "
        "and summary: restore them, or move the file out of events/",
    )
    return _Fields(block.data, block.key_lines).event(normalise_body(parts.body), rel_path)


class _Fields(EpisodeFields):
    def event(self, body: str, rel_path: str) -> Event:
        eid = self.file_id(rel_path, event_id_problem)
        opened = self.required_moment("opened_at")
        return Event(
            id=eid,
            type=self.required_text("type", "appointment"),
            summary=self.required_text("summary", "what the event is about"),
            opened_at=opened,
            status=self.choice("status", EVENT_STATUSES) or "open",
            updated_at=self.moment("updated_at"),
            closed_at=self.moment("closed_at"),
            resolution=self.text("resolution"),
            opened_in=self.text("opened_in"),
            speaker=self.speaker(),
            body=body,
            extra=self.extra(FIELD_ORDER),
        )


def parse_history(body: str) -> list[HistoryEntry]:
    """The dated entries of a body (text before the first heading is not an entry)."""
    entries: list[HistoryEntry] = []
    current: tuple[datetime | None, str, str | None] | None = None
    lines: list[str] = []

    def flush() -> None:
        if current is not None:
            text = "\n".join(_unescape(line) for line in lines).strip()
            entries.append(HistoryEntry(*current, text))

    for line in body.split("\n"):
        match = _HEADING.match(line)
        if match is None:
            lines.append(line)
            continue
        flush()
        try:
            at: datetime | None = parse_datetime(match.group(1))
        except ValueError:
            at = None
        current, lines = (at, match.group(2), match.group(3)), []
    flush()
    return entries


# --------------------------------------------------------------------------- writing


def history_entry(at: datetime, kind: str, chat: str | None, text: str) -> str:
    """One entry as appended to the body; the chat is percent-encoded (one safe token)
    and a line of the text starting with `#` (or `\\`) gets a backslash in front, so it is
    never a heading and the history reads back exactly what was said."""
    where = f" in {percent_encode(chat)}" if chat else ""
    lines = normalise_body(text).split("\n")
    safe = "\n".join("\\" + line if line.lstrip().startswith(_ESCAPED) else line for line in lines)
    return f"### {format_datetime(at)} {kind}{where}\n{safe}".rstrip() + "\n"


_ESCAPED = ("#", "\\")


def _unescape(line: str) -> str:
    return line[1:] if line.startswith("\\") else line


def render_event(event: Event) -> str:
    """A new event file; ValueError unless it reads back as exactly `event`."""
    fields: dict[str, Any] = {
        "id": event.id,
        "type": event.type,
        "status": event.status,
        "summary": event.summary,
        "opened_at": event.opened_at,
        "updated_at": event.updated_at,
    }
    optional = {
        "closed_at": event.closed_at,
        "resolution": event.resolution,
        "opened_in": event.opened_in,
        "speaker": plain_value(event.speaker) if event.speaker else None,
    }
    fields |= {k: v for k, v in optional.items() if v is not None}
    fields = {k: v for k, v in fields.items() if v is not None}
    for name, value in event.extra:
        if name in FIELD_ORDER:
            raise ValueError(f"extra field {name!r} clashes with a known field")
        fields[name] = value
    text = "---\n" + dump(fields) + "---\n" + normalise_body(event.body) + "\n"
    back = parse_event(text, rel_path=f"{event.id}.md")
    wanted = dataclasses.replace(event, body=normalise_body(event.body))
    differ = [
        f.name
        for f in dataclasses.fields(Event)
        if getattr(back, f.name) != getattr(wanted, f.name)
    ]
    if differ:
        raise ValueError(
            f"cannot write event {event.id}: {', '.join(differ)} would read back differently "
            "(blank or padded text?)"
        )
    return text


def edit_event(data: bytes, changes: Mapping[str, object], entry: str, *, rel: str) -> bytes:
    """The file with these front-matter fields set and `entry` appended to its history;
    every other byte (a person's comments, fields, own notes) stays as it was."""
    text, bom = decode(data)
    first = split_lines(text)[:1]
    newline = "\r\n" if first and first[0].endswith("\r\n") else "\n"
    parts = split_front_matter(text)
    if parts.yaml is None:
        raise FormatError("the event file lost its front matter: restore it by hand", 1)

    def mutate(root: CommentedMap) -> None:
        for name, value in changes.items():
            root[name] = edit_value(value)

    front = rt_edit(parts.yaml, mutate, newline=newline)
    body = parts.body.rstrip("\r\n")
    joined = (body + "\n\n" if body.strip() else "") + entry
    close = parts.close if parts.close.endswith("\n") else parts.close + newline
    new_text = parts.head + front + close + joined.replace("\n", newline)
    parse_event(new_text, rel_path=rel)  # never hand back a file that would not parse
    return (b"\xef\xbb\xbf" if bom else b"") + new_text.encode("utf-8")
