"""`!memory events [open|closed|all]` and `!memory events show <id>`: the asking person's
key events with this bot, from every chat (vault.events).

Whose events is the sender of the command as LangBot reports it, so in a group chat each
person sees their own and never another's (with linked_people on: those of every sender id
linked to the same person of this bot, vault.persons). An id comes from chat and goes to the vault
API, which validates it; it never becomes a path here.
"""

from __future__ import annotations

from vault.events import FEATURE_OFF, STATUS_FILTERS, Event, find_event, load_events, select
from vault.persons import events_of, identity_of, owner_of

from .memory_call import Call, Reply
from .memory_views import PAGE_SIZE, day, preview

USAGE = "Usage: !memory events [open|closed|all] | !memory events show <id>"


def event_line(e: Event) -> str:
    """`  [evt_x] appointment, opened 2026-11-30 in group_1, updated 2026-12-01: summary`."""
    where = f" in {e.opened_in}" if e.opened_in else ""
    ended = f" -> {preview(e.resolution, 80)}" if e.status == "closed" and e.resolution else ""
    return (
        f"  [{e.id}] {e.type} ({e.status}), opened {day(e.opened_at)}{where}, "
        f"updated {day(e.last_change)}: {preview(e.summary, 100)}{ended}"
    )


def events(call: Call) -> str:
    if not call.sender_id.strip():
        raise Reply("[Memory] Key events belong to a person: LangBot did not say who is asking.")
    if call.params and call.params[0].lower() == "show":
        if len(call.params) != 2:
            raise Reply(USAGE)
        return show(call, call.params[1])
    if len(call.params) > 1 or (call.params and call.params[0].lower() not in STATUS_FILTERS):
        raise Reply(USAGE)
    status = call.params[0].lower() if call.params else "open"
    senders = _senders(call)
    if len(senders) > 1:
        stored, problems = events_of(call.v.layout, call.scope.bot, senders)
    else:
        stored, problems = load_events(call.v.layout, call.scope.bot, call.sender_id.strip())
    chosen = select(stored, status)
    lines = []
    if not call.memory.settings.event_types:
        lines.append(f"[Memory] Note: {FEATURE_OFF}.")
    if not chosen:
        lines.append(f"[Memory] You have no {status} key events with this bot.")
    else:
        lines.append(f"[Memory] Your {status} key events with this bot ({len(chosen)}):")
        lines.extend(event_line(s.event) for s in chosen[:PAGE_SIZE])
        if len(chosen) > PAGE_SIZE:
            lines.append(f"  ... and {len(chosen) - PAGE_SIZE} more (memvault events list).")
        lines.append("Details: !memory events show <id>")
    if problems:
        first = problems[0]
        lines.append(
            f"Unreadable event files: {len(problems)} (first: {first.path}:{first.line}: "
            f"{preview(first.message, 120)})"
        )
    return "\n".join(lines)


def _senders(call: Call) -> tuple[str, ...]:
    on = call.memory.settings.linked_people
    return identity_of(call.v.layout, call.scope.bot, call.sender_id.strip(), on).senders


def show(call: Call, raw_id: str) -> str:
    holder = owner_of(call.v.layout, call.scope.bot, _senders(call), raw_id)
    stored = find_event(call.v.layout, call.scope.bot, holder, raw_id)
    e = stored.event
    lines = [
        f"[Memory] Key event {e.id} ({e.type}, {e.status}): {preview(e.summary, 300)}",
        f"Opened {day(e.opened_at)}" + (f" in {e.opened_in}" if e.opened_in else ""),
    ]
    if e.status == "closed":
        lines.append(f"Closed {day(e.closed_at)}: {preview(e.resolution or '-', 300)}")
    for entry in e.history()[-PAGE_SIZE:]:
        where = f" in {entry.chat}" if entry.chat else ""
        lines.append(f"  {day(entry.at)} {entry.kind}{where}: {preview(entry.text, 200)}")
    lines.append(f"File: {stored.rel}")
    return "\n".join(lines)
