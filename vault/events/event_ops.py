"""Changing key events: open, add a note, close. Each is one vault operation: under the vault
lock, the file written atomically (a new one never over an existing file; a change as a
compare-and-swap that keeps a person's concurrent edit), secrets redacted, one audit line
in the person's own log (`people/<sender>/audit.jsonl`) and one git commit.

The audit line goes to the person's log, not the chat's: `!memory audit` and the console
show a chat's log to whoever is in that chat, and an event is one person's business.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path

from vault.errors import BadRequestError
from vault.events.event_file import (
    MAX_NOTE,
    MAX_SUMMARY,
    Event,
    edit_event,
    history_entry,
    parse_event,
    render_event,
)
from vault.events.event_store import StoredEvent, find_event, person_events_dir
from vault.events.event_types import EventType, check_type
from vault.files.safewrite import content_hash, rewrite
from vault.format.model import Speaker
from vault.format.redact_forms import redacted_name
from vault.layout.keys import ScopeId
from vault.layout.names import encode_name, ensure_id_file, is_hashed
from vault.writes.fresh_ids import create_under_fresh_id, dated_id, rendered
from vault.writes.operations import Vault
from vault.writes.redact_write import scrub
from vault.writes.transaction import Txn


@dataclass(frozen=True)
class Actor:
    """Whose event (bot + sender id, from the host) and where the change is made: `chat` is
    the session name of the turn (None from the CLI or the console without a chat)."""

    bot: str | None
    person: str
    name: str | None = None
    chat: str | None = None
    source: str = "agent"
    query_id: int | str | None = None

    def __post_init__(self) -> None:
        # As the file's speaker field reads it back: stripped, and never blank.
        if not isinstance(self.person, str) or not self.person.strip():
            raise BadRequestError("a key event belongs to a person: give their sender id")
        object.__setattr__(self, "person", self.person.strip())
        # The display name the host sends goes into the event file's speaker line.
        object.__setattr__(self, "name", redacted_name(self.name))


def new_event_id(at: datetime) -> str:
    return dated_id("evt", at)


def _text(value: object, what: str, limit: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise BadRequestError(f"{what} is required: say what happened in a sentence")
    text = " ".join(value.split()) if what == "summary" else value.strip()
    if len(text) > limit:
        raise BadRequestError(f"{what} is {len(text)} characters: at most {limit}")
    return scrub(text, what)  # no secret reaches a file or the audit line


def _scope(actor: Actor, event: Event | None = None) -> ScopeId:
    """The chat the operation is labelled with (commit message); the audit is the person's."""
    chat = actor.chat or (event.opened_in if event is not None else None)
    if not chat:
        raise BadRequestError(
            "this event does not say which chat it was opened in: pass the chat (--session)"
        )
    return ScopeId(actor.bot, chat)


def _begin(vault: Vault, txn: Txn, actor: Actor) -> Path:
    folder = person_events_dir(vault.layout, actor.bot, actor.person)
    txn.audit_at = vault.layout.person_audit_path(actor.bot, actor.person)
    return folder


def _mark_person(vault: Vault, txn: Txn, actor: Actor) -> None:
    """A shortened person folder keeps the full sender id in `.id` (vault.layout.names)."""
    person_dir = vault.layout.person_dir(actor.bot, actor.person)
    if is_hashed(person_dir.name):
        txn.intend(vault.layout, person_dir / ".id", content_hash(actor.person.encode("utf-8")))
        if (marker := ensure_id_file(person_dir, actor.person)) is not None:
            txn.written.append(marker)


def open_event(
    vault: Vault, actor: Actor, event_type: object, summary: object, types: Sequence[EventType]
) -> StoredEvent:
    """A new open event of `actor.person`; the type must be exactly one of `types`."""
    name = check_type(event_type, types)
    text = _text(summary, "summary", MAX_SUMMARY)
    now = vault.clock()
    speaker = Speaker(actor.person, actor.name or None)
    with vault.operation(
        _scope(actor), "open_event", source=actor.source, query_id=actor.query_id
    ) as txn:
        folder = _begin(vault, txn, actor)

        def draft(eid: str) -> tuple[Event, Path, bytes]:
            event = Event(
                id=eid,
                type=name,
                summary=text,
                opened_at=now,
                updated_at=now,
                opened_in=actor.chat,
                speaker=speaker,
                body=history_entry(now, "opened", actor.chat, text),
            )
            path = folder / f"{encode_name(eid, 'event id')}.md"
            return event, path, rendered(render_event, event, "event")

        event, path, data = create_under_fresh_id(
            txn, "event", None, partial(new_event_id, now), draft
        )
        _mark_person(vault, txn, actor)
        txn.record("open_event", "event", event.id, f"{name}: {text}")
        return StoredEvent(event, path, vault.layout.rel(path), content_hash(data))


def update_event(
    vault: Vault,
    actor: Actor,
    event_id: object,
    note: object,
    *,
    expected_hash: str | None = None,
) -> StoredEvent:
    """Append a dated note to an open event of `actor.person`."""
    text = _text(note, "note", MAX_NOTE)
    return _change(vault, actor, event_id, "note", text, {}, expected_hash)


def close_event(
    vault: Vault,
    actor: Actor,
    event_id: object,
    resolution: object,
    *,
    expected_hash: str | None = None,
) -> StoredEvent:
    """Close an open event of `actor.person` with how it ended."""
    text = _text(resolution, "resolution", MAX_NOTE)
    changes = {"status": "closed", "resolution": text}
    return _change(vault, actor, event_id, "closed", text, changes, expected_hash)


def _change(
    vault: Vault,
    actor: Actor,
    event_id: object,
    kind: str,
    text: str,
    changes: dict[str, object],
    expected_hash: str | None,
) -> StoredEvent:
    verb = "close_event" if kind == "closed" else "update_event"
    with vault.lock.hold():  # re-entrant: the find and the write see the same files
        stored = find_event(vault.layout, actor.bot, actor.person, event_id)
        _still_open(stored.event)
        with vault.operation(
            _scope(actor, stored.event), verb, source=actor.source, query_id=actor.query_id
        ) as txn:
            _begin(vault, txn, actor)
            now = vault.clock()
            fields = {**changes, "updated_at": now}
            if kind == "closed":  # its own object: one value used twice is a YAML alias
                fields["closed_at"] = datetime.fromtimestamp(now.timestamp(), now.tzinfo)
            entry = history_entry(now, kind, actor.chat, text)

            def apply(raw: bytes) -> bytes:
                # Run again on a person's version if they saved meanwhile: judged on it.
                _still_open(parse_event(raw, rel_path=stored.rel))
                return edit_event(raw, fields, entry, rel=stored.rel)

            rewrite(stored.path, apply, expected_hash=expected_hash)
            txn.written.append(stored.path)
            txn.record(verb, "event", stored.event.id, f"{stored.event.type}: {text}")
    return find_event(vault.layout, actor.bot, actor.person, stored.event.id)


def _still_open(event: Event) -> None:
    if event.status == "closed":
        raise BadRequestError(
            f"event {event.id} is already closed ({event.resolution or 'no resolution'}): "
            "open a new event instead"
        )
