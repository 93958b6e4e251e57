"""Reading key events: one person's (of one bot) and the people of a bot who have some.

The folder is `bots/<bot>/people/<encoded sender>/events/`: the sender id alone (from the
host, never from the model) picks it, with the same injective encoding as every other
untrusted id (vault.layout.names), so no id can reach another person's or another bot's folder.
A malformed file is reported as a Problem and skipped, never rewritten.
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from vault.errors import BadRequestError
from vault.events.event_file import EVENT_STATUSES, Event, event_id_problem, parse_event
from vault.files.safewrite import content_hash
from vault.format.model import FormatError, Problem
from vault.layout.chats import bots_with
from vault.layout.layout import (
    EVENTS_DIR,
    PEOPLE_DIR,
    Layout,
    is_ignored,
    iter_markdown,
)
from vault.layout.links import read_vault_file
from vault.layout.names import UnsafeNameError, folder_id, refuse_foreign_owner
from vault.layout.store import only_match
from vault.layout.views import iso

STATUS_FILTERS: tuple[str, ...] = (*EVENT_STATUSES, "all")


@dataclass(frozen=True)
class StoredEvent:
    event: Event
    path: Path
    rel: str
    sha: str


@dataclass(frozen=True)
class PersonEvents:
    """One person of a bot and how many events they have (the console's people list)."""

    person: str
    open: int
    closed: int
    problems: int


def event_json(stored: StoredEvent, *, history: bool = False) -> dict[str, Any]:
    """The JSON of `memvault events ... --json` and the console's events panel."""
    e = stored.event
    data: dict[str, Any] = {
        "id": e.id,
        "type": e.type,
        "status": e.status,
        "summary": e.summary,
        "opened_at": iso(e.opened_at),
        "updated_at": iso(e.last_change),
        "closed_at": iso(e.closed_at),
        "resolution": e.resolution,
        "opened_in": e.opened_in,
        "speaker": asdict(e.speaker) if e.speaker else None,
        "path": stored.rel,
        "sha256": stored.sha,
    }
    if history:
        data["history"] = [
            {"at": iso(h.at), "kind": h.kind, "chat": h.chat, "text": h.text} for h in e.history()
        ]
        data["body"] = e.body
    return data


def person_events_dir(layout: Layout, bot: str | None, person: str) -> Path:
    """The person's events folder; refused when a shortened folder name belongs to another
    id (its `.id` says so), so a hash collision can never mix two people's events."""
    if not isinstance(person, str) or not person.strip():
        raise BadRequestError("a key event belongs to a person: give their sender id")
    # Stripped as the speaker field reads back (and as the plugin reads the host's id).
    person = person.strip()
    folder = layout.person_dir(bot, person)
    refuse_foreign_owner(folder, person, layout.rel(folder), "sender id")
    return layout.events_dir(bot, person)


def load_events(
    layout: Layout, bot: str | None, person: str
) -> tuple[list[StoredEvent], list[Problem]]:
    """Every event of the person, most recently updated first; malformed files as Problems."""
    folder = person_events_dir(layout, bot, person)
    found: list[StoredEvent] = []
    problems: list[Problem] = []
    for path in iter_markdown(folder):
        rel = layout.rel(path)
        if path.parent != folder:
            continue  # events/ is flat: a subfolder is nobody's event
        try:
            event, sha = _read(layout.root, path, rel)
        except FormatError as exc:
            problems.append(Problem(rel, exc.line, exc.message))
            continue
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(Problem(rel, 1, f"cannot read file: {exc}"))
            continue
        found.append(StoredEvent(event, path, rel, sha))
    found.sort(key=lambda s: (s.event.last_change, s.event.id), reverse=True)
    return found, problems


# Every turn reads the speaker's events: a person's closed events pile up over the years, and
# parsing 200 files takes ~30 ms, a stat ~0.01 ms. So a parse is kept per file while its
# stat (inode, size, mtime, ctime) is unchanged; a file modified within RACY_NS of being read
# could change again within the same timestamp tick unseen, so it is not kept ("racy git").
_PARSED: dict[str, tuple[tuple[int, int, int, int], Event, str]] = {}
_MAX_PARSED = 20_000
RACY_NS = 2_000_000_000


def _stamp(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _read(root: Path, path: Path, rel: str) -> tuple[Event, str]:
    key = str(path)
    hit = _PARSED.get(key)
    if hit is not None and hit[0] == _stamp(os.lstat(path)):
        return hit[1], hit[2]
    data, st = read_vault_file(root, rel)  # never through a link (vault.layout.links)
    event, sha = parse_event(data, rel_path=rel), content_hash(data)
    if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) >= RACY_NS:
        if len(_PARSED) >= _MAX_PARSED:
            _PARSED.clear()
        _PARSED[key] = (_stamp(st), event, sha)
    return event, sha


def select(stored: list[StoredEvent], status: str) -> list[StoredEvent]:
    if status not in STATUS_FILTERS:
        raise BadRequestError(f"status must be one of {', '.join(STATUS_FILTERS)}")
    return [s for s in stored if status == "all" or s.event.status == status]


def open_events(layout: Layout, bot: str | None, person: str, limit: int) -> list[StoredEvent]:
    """The person's `limit` most recently updated open events (what the prompt gets)."""
    if limit <= 0:
        return []
    return select(load_events(layout, bot, person)[0], "open")[:limit]


def find_event(layout: Layout, bot: str | None, person: str, event_id: object) -> StoredEvent:
    wanted = event_id.strip() if isinstance(event_id, str) else ""
    if event_id_problem(wanted) is not None:
        raise BadRequestError(
            f"event id {str(event_id)[:40]!r} is not valid: use an id from list_events "
            "(or `memvault events list`), e.g. evt_20261130_7f3a9c"
        )
    matches = [s for s in load_events(layout, bot, person)[0] if s.event.id == wanted]
    missing = (
        f"no event {wanted} for this person: list_events (or `memvault events list`) "
        "shows their event ids"
    )
    return only_match("event", wanted, matches, [s.rel for s in matches], missing)


def people_with_events(layout: Layout, bot: str | None) -> list[PersonEvents]:
    """The people of a bot that have an events folder, sorted by id; a folder whose name is no
    encoded id is left out (`memvault check` names it)."""
    people = layout.bot_dir(bot) / PEOPLE_DIR
    if not people.is_dir() or people.is_symlink():
        return []
    out: list[PersonEvents] = []
    with os.scandir(people) as entries:
        names = sorted(e.name for e in entries if e.is_dir(follow_symlinks=False))
    for name in names:
        if is_ignored(name) or not (people / name / EVENTS_DIR).is_dir():
            continue
        person = folder_id(people / name)
        if person is None:
            continue
        try:
            stored, problems = load_events(layout, bot, person)
        except UnsafeNameError:
            continue
        opened = sum(1 for s in stored if s.event.status == "open")
        out.append(PersonEvents(person, opened, len(stored) - opened, len(problems)))
    return sorted(out, key=lambda p: p.person)


def bots_with_people(layout: Layout) -> list[str | None]:
    """Bots (None = no bot) that have a people/ folder."""
    return bots_with(layout, PEOPLE_DIR)
