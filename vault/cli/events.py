"""`memvault events list|show|close`: people's key events (vault.events) from a shell.

    memvault events list --bot B [--speaker ID [--linked-people]] [--status open|closed|all]
    memvault events show ID --bot B --speaker ID [--json]
    memvault events close ID --resolution TEXT --bot B --speaker ID [--session S]

`list` without --speaker lists every person of the bot who has events; with --linked-people,
the speaker's are those of every sender id linked to the same person (vault.persons), as the
plugin's setting linked_people shows them. `close` is audited
in the person's log and committed like the plugin's close_event; it is labelled with the
chat the event was opened in unless --session names another.
"""

from __future__ import annotations

import argparse
from typing import Any

from vault.cli import common as vault_cli
from vault.cli.output import emit, one_line
from vault.cli.parser import Parents
from vault.events import (
    STATUS_FILTERS,
    Actor,
    close_event,
    event_json,
    find_event,
    load_events,
    people_with_events,
    select,
)
from vault.persons import events_of, identity_of


def events_args(top: argparse.ArgumentParser, parents: Parents) -> None:
    who = argparse.ArgumentParser(add_help=False)
    who.add_argument("--bot", default=None, help="bot uuid (omit when there is none)")
    actions = top.add_subparsers(dest="events_action", required=True, metavar="ACTION")
    lst = actions.add_parser("list", parents=[parents.common, who], help="a bot's key events")
    lst.add_argument("--speaker", default=None, help="sender id (default: every person)")
    lst.add_argument("--status", choices=STATUS_FILTERS, default="open")
    lst.add_argument(
        "--linked-people",
        action="store_true",
        help="with --speaker: the events of every sender id linked to the same person",
    )
    show = actions.add_parser("show", parents=[parents.common, who], help="one event in full")
    show.add_argument("id", help="event id, e.g. evt_20261130_7f3a9c")
    show.add_argument("--speaker", required=True, help="sender id: whose event")
    close = actions.add_parser(
        "close", parents=[parents.common, parents.git, who], help="close an open event"
    )
    close.add_argument("id", help="event id, e.g. evt_20261130_7f3a9c")
    close.add_argument("--speaker", required=True, help="sender id: whose event")
    close.add_argument("--resolution", required=True, help="how it ended, in a sentence")
    close.add_argument("--session", default=None, help="the chat to label it with")


def cmd_events(args: argparse.Namespace) -> int:
    vault = vault_cli.open_vault(args)
    layout = vault.layout
    if args.events_action == "list":
        people = (
            [args.speaker]
            if args.speaker
            else [p.person for p in people_with_events(layout, args.bot)]
        )
        data: dict[str, Any] = {"bot": args.bot, "status": args.status, "people": []}
        for person in people:
            senders = identity_of(layout, args.bot, person, args.linked_people).senders
            if len(senders) > 1:
                stored, problems = events_of(layout, args.bot, senders)
            else:
                stored, problems = load_events(layout, args.bot, person)
            data["people"].append(
                {
                    "speaker": person,
                    "events": [event_json(s) for s in select(stored, args.status)],
                    "problems": [p.as_json() for p in problems],
                    **({"senders": list(senders)} if args.linked_people else {}),
                }
            )
        return emit(args, data, _list_text)
    if args.events_action == "show":
        stored = find_event(layout, args.bot, args.speaker, args.id)
        return emit(args, event_json(stored, history=True), _show_text)
    actor = Actor(args.bot, args.speaker, chat=args.session, source="user")
    done = close_event(vault, actor, args.id, args.resolution)
    return emit(args, event_json(done), lambda d: f"{d['id']} closed: {d['resolution']}")


def _list_text(data: dict[str, Any]) -> str:
    lines: list[str] = []
    for person in data["people"]:
        events = person["events"]
        lines.append(f"{person['speaker']}: {len(events)} {data['status']} event(s)")
        lines.extend(
            f"  {e['id']}  {e['type']}  {e['status']}  updated {e['updated_at']}  "
            f"{one_line(e['summary'])}"
            for e in events
        )
        lines.extend(f"  {p['path']}:{p['line']}: {p['message']}" for p in person["problems"])
    return "\n".join(lines) or f"no {data['status']} key events for this bot"


def _show_text(d: dict[str, Any]) -> str:
    lines = [
        f"{d['id']}  {d['type']}  {d['status']}",
        f"summary:   {d['summary']}",
        f"opened:    {d['opened_at']}" + (f" in {d['opened_in']}" if d["opened_in"] else ""),
        f"updated:   {d['updated_at']}",
    ]
    if d["status"] == "closed":
        lines.append(f"closed:    {d['closed_at'] or '-'}: {d['resolution'] or '-'}")
    lines.append(f"file:      {d['path']}")
    lines.extend(
        f"  {h['at'] or '?'} {h['kind']}"
        + (f" in {h['chat']}" if h["chat"] else "")
        + f": {h['text']}"
        for h in d["history"]
    )
    return "\n".join(lines)
