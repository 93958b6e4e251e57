"""Key events (issue 14) on the real host, through LocalAgent's own tool loop, asserted on the
vault's files, its git history and the request bodies the model received.

`event_types: ["appointment: a booked visit"]` is set through the host's plugin config API
and MemVault restarted to read it (as checks_scope does for isolation). The people: LangBot
4.11.2 names an embed chat's sender `websocket_<pipeline>:<session_id>`, so two group chats
of a Page Bot are always two people, and chat A's session_id opened as a private chat
(session_type=person) is chat A's person in another chat of the same bot. Checked:

- `tool open_event {...}` in chat A: the fake LLM calls MemVault's tool, the follow-up
  request carries the result with the new id; one event file in
  bots/<bot>/people/<A's sender>/events/, made by one git commit;
- the next request of chat A and of A's private chat carry that id once, inside the
  `# Key Events` block; chat B (another person) and a chat of another bot with A's very
  sender id get the block without it;
- `tool close_event {...}`: one commit, the file says closed; the next requests of chat A and
  of the private chat say `No open key events.` and inject the id nowhere;
- event types off again (restart): no key-events block, and open_event refuses, saying why.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

from hostsuite.chat import Chat
from hostsuite.checks_candidates import _git, commits
from hostsuite.checks_chat import MARKERS
from hostsuite.checks_scope import set_plugin_config
from hostsuite.framework import phase
from hostsuite.host import Host
from hostsuite.llm_requests import Contents, Request, take_apart

if TYPE_CHECKING:
    from hostsuite.framework import SuiteContext, Turn
    from vault.events import StoredEvent

TYPES = ["appointment: a booked visit"]
SUMMARY = "Dentist visit booked for 12 June at 10:00 at the Harbour clinic"
RESOLUTION = "The 12 June dentist visit took place"
QUESTION = "Anything I should remember about my dentist visit?"
NONE_OPEN = "No open key events."  # templates/events_en.yaml none_open
OPENED = re.compile(r"Opened key event (evt_\d{8}_[0-9a-f]{6}) \(appointment\)")
CLOSED = re.compile(r"Closed key event (evt_\d{8}_[0-9a-f]{6}) \(appointment\)")
EVERYONE = (*MARKERS["A"], *MARKERS["B"])  # texts of the earlier chats' own memories


def sender_of(suite: SuiteContext, chat: Chat) -> str:
    """The sender id LangBot 4.11.2 gives an embed chat (websocket_adapter, handle_...)."""
    return f"websocket_{suite.facts['ids']['pipeline']}:{chat.session_id}"


def injected(request: Request, needle: str) -> int:
    """Occurrences in the system messages: what MemVault (or the pipeline) put in."""
    return sum(text.count(needle) for role, text in request.texts() if role == "system")


def tool_result(turn: Turn) -> str:
    """The tool message the follow-up request carried back to the model ("" when none)."""
    found = [t for r in turn.requests[1:] for role, t in r.texts() if role == "tool"]
    return found[-1] if found else ""


def row(suite: SuiteContext, turn: Turn, label: str, other: tuple[str, ...]) -> list[Contents]:
    """Every model request of the turn, taken apart, one row of the table each."""
    seen = [suite.seen(turn, label, other)]
    for i, request in enumerate(turn.requests[1:], 2):
        seen.append(take_apart(request, f"{label} [request {i}]", other))
        suite.rows.append(seen[-1])
    return seen


def stored(suite: SuiteContext, person: str, event_id: str) -> list[StoredEvent]:
    from vault.events import load_events
    from vault.layout.layout import Layout

    found, _ = load_events(Layout(suite.vault_root), suite.facts["ids"]["bot"], person)
    return [s for s in found if s.event.id == event_id]


def files_named(suite: SuiteContext, event_id: str) -> list[str]:
    """Every file of the vault's bots/ named after the event: where it went, and nowhere else."""
    root = suite.vault_root
    return sorted(p.relative_to(root).as_posix() for p in (root / "bots").rglob(f"{event_id}.md"))


def head_files(suite: SuiteContext) -> list[str]:
    return [f for f in _git(suite, "show", "--name-only", "--format=", "HEAD").split("\n") if f]


@phase("key events through the tool loop", order=80)
async def run(suite: SuiteContext, host: Host, ids: dict[str, str]) -> None:
    set_plugin_config(suite, host, {"event_types": TYPES})
    try:
        suite.restart_memvault(host)  # it reads its settings at start only
        chat_a = suite.chats["A"]
        private = Chat(host, ids["bot"], chat_a.session_id, "A private", "person")
        event_id = await open_in_a(suite, chat_a)
        if event_id is not None:
            await seen_by_people(suite, host, ids, private, event_id)
            await close_in_a(suite, chat_a, private, event_id)
    finally:
        # Off again for what follows (the installed package reads its config at start).
        set_plugin_config(suite, host, {"event_types": []})
    suite.restart_memvault(host)
    await turned_off(suite)


async def open_in_a(suite: SuiteContext, chat: Chat) -> str | None:
    args = {"type": "appointment", "summary": SUMMARY}
    before = await asyncio.to_thread(commits, suite)
    turn = await suite.ask(chat, "tool open_event " + json.dumps(args))
    after = await asyncio.to_thread(commits, suite)
    row(suite, turn, "A: tool open_event", MARKERS["B"])
    result = tool_result(turn)
    match = OPENED.search(result)
    if match is None:
        suite.check(
            "`open_event` runs inside LocalAgent's tool loop and answers the new event's id",
            False,
            f"{len(turn.requests)} model request(s); tool result {result[:300]!r}; reply "
            f"{turn.reply[:200]!r}",
        )
        return None
    event_id = match.group(1)
    suite.facts["key_event"] = event_id
    suite.check(
        "`open_event` runs inside LocalAgent's tool loop: the follow-up request carries the id",
        len(turn.requests) == 2 and event_id in turn.reply and SUMMARY in result,
        f"tool result {result[:200]!r}; reply {turn.reply[:120]!r}",
    )
    person = sender_of(suite, chat)
    found = stored(suite, person, event_id)
    files = files_named(suite, event_id)
    want = found[0].rel if found else f"bots/.../people/<{person}>/events/{event_id}.md"
    head = await asyncio.to_thread(head_files, suite)
    event = found[0].event if found else None
    suite.check(
        "the opened event is one file in bots/<bot>/people/<A's sender>/events/, one commit",
        len(found) == 1
        and files == [want]
        and "/people/" in want
        and "/events/" in want
        and event is not None
        and (event.status, event.type, event.summary) == ("open", "appointment", SUMMARY)
        and event.speaker is not None
        and event.speaker.id == person
        and after - before == 1
        and want in head,
        f"files {files}; status {event and event.status}, speaker "
        f"{event and event.speaker and event.speaker.id}; commits +{after - before}; HEAD "
        f"{head}",
    )
    return event_id


async def seen_by_people(
    suite: SuiteContext, host: Host, ids: dict[str, str], private: Chat, event_id: str
) -> None:
    chat_a, chat_b = suite.chats["A"], suite.chats["B"]
    leak = (SUMMARY, event_id)
    turn_a = await suite.ask(chat_a, QUESTION)
    seen_a = row(suite, turn_a, f"A: {QUESTION} (event open)", MARKERS["B"])[0]
    in_history = seen_a.count(event_id) - seen_a.event_ids.count(event_id)
    suite.check(
        "the next request of chat A has the event in its `# Key Events` block exactly once",
        seen_a.event_ids == (event_id,)
        and seen_a.events.count(SUMMARY) == 1
        and injected(turn_a.requests[0], event_id) == 1,
        f"block ids {list(seen_a.event_ids)}; summary in the block x"
        f"{seen_a.events.count(SUMMARY)}; id in system messages x"
        f"{injected(turn_a.requests[0], event_id)} (and x{in_history} in A's own history)",
    )
    turn_p = await suite.ask(private, QUESTION)
    seen_p = row(suite, turn_p, f"A private: {QUESTION} (event open)", EVERYONE)[0]
    suite.check(
        "A's person in another chat of the bot (private chat, same sender) gets it exactly once",
        turn_p.session.startswith("person_")
        and turn_p.session != turn_a.session
        and seen_p.event_ids == (event_id,)
        and seen_p.count(event_id) == 1
        and seen_p.other_chat == 0,
        f"session {turn_p.session} (A: {turn_a.session}); block ids {list(seen_p.event_ids)}; "
        f"id in the request x{seen_p.count(event_id)}; other chats' texts x{seen_p.other_chat}",
    )
    turn_b = await suite.ask(chat_b, QUESTION)
    seen_b = row(suite, turn_b, f"B: {QUESTION} (A's event open)", (*MARKERS["A"], *leak))[0]
    suite.check(
        "chat B (another person of the same bot) gets the key-events block without A's event",
        NONE_OPEN in seen_b.events and not seen_b.event_ids and seen_b.other_chat == 0,
        f"block {'present' if seen_b.events else 'absent'}, ids {list(seen_b.event_ids)}; A's "
        f"texts and the event's x{seen_b.other_chat}",
    )
    # Same pipeline, same session_id: LangBot gives this chat A's very sender id.
    bot_3 = suite.add_page_bot(host, ids["pipeline"], "suite page bot 3 (key events)")
    elsewhere = Chat(host, bot_3, chat_a.session_id, "A's sender on bot 3", "person")
    turn_o = await suite.ask(elsewhere, QUESTION)
    seen_o = row(suite, turn_o, f"bot 3, A's sender: {QUESTION}", (*EVERYONE, *leak))[0]
    suite.check(
        "the same sender id in a chat of another bot does not get the event",
        NONE_OPEN in seen_o.events
        and not seen_o.event_ids
        and injected(turn_o.requests[0], event_id) == 0
        and seen_o.other_chat == 0,
        f"block {'present' if seen_o.events else 'absent'}, ids {list(seen_o.event_ids)}; id "
        f"in system messages x{injected(turn_o.requests[0], event_id)}; bot 1's texts and the "
        f"event's x{seen_o.other_chat}; session {turn_o.session}",
    )


async def close_in_a(suite: SuiteContext, chat: Chat, private: Chat, event_id: str) -> None:
    args = {"id": event_id, "resolution": RESOLUTION}
    before = await asyncio.to_thread(commits, suite)
    turn = await suite.ask(chat, "tool close_event " + json.dumps(args))
    after = await asyncio.to_thread(commits, suite)
    row(suite, turn, "A: tool close_event", MARKERS["B"])
    result = tool_result(turn)
    match = CLOSED.search(result)
    found = stored(suite, sender_of(suite, chat), event_id)
    event = found[0].event if found else None
    head = await asyncio.to_thread(head_files, suite)
    suite.check(
        "`close_event` through the tool loop closes the file in one commit",
        match is not None
        and match.group(1) == event_id
        and event is not None
        and (event.status, event.resolution) == ("closed", RESOLUTION)
        and after - before == 1
        and bool(found)
        and found[0].rel in head,
        f"tool result {result[:200]!r}; status {event and event.status}, resolution "
        f"{event and event.resolution!r}; commits +{after - before}; HEAD {head}",
    )
    turn_a = await suite.ask(chat, QUESTION)
    seen_a = row(suite, turn_a, f"A: {QUESTION} (event closed)", MARKERS["B"])[0]
    suite.check(
        "after the close, chat A's next request says `No open key events.` and injects no id",
        NONE_OPEN in seen_a.events
        and not seen_a.event_ids
        and injected(turn_a.requests[0], event_id) == 0,
        f"block {seen_a.events[-120:]!r}; ids {list(seen_a.event_ids)}; id in system "
        f"messages x{injected(turn_a.requests[0], event_id)} (history x"
        f"{seen_a.count(event_id)}: the tool calls of this chat)",
    )
    turn_p = await suite.ask(private, QUESTION)
    seen_p = row(suite, turn_p, f"A private: {QUESTION} (event closed)", EVERYONE)[0]
    suite.check(
        "after the close, A's private chat gets `No open key events.` and the id nowhere",
        NONE_OPEN in seen_p.events and seen_p.count(event_id) == 0,
        f"block {'present' if seen_p.events else 'absent'}, ids {list(seen_p.event_ids)}; id "
        f"in the request x{seen_p.count(event_id)}",
    )


async def turned_off(suite: SuiteContext) -> None:
    from vault.events import FEATURE_OFF

    chat = suite.chats["A"]
    turn = await suite.ask(chat, QUESTION)
    seen = row(suite, turn, f"A: {QUESTION} (event types off)", MARKERS["B"])[0]
    args = {"type": "appointment", "summary": "A visit that must not be stored"}
    refused = await suite.ask(chat, "tool open_event " + json.dumps(args))
    row(suite, refused, "A: tool open_event (event types off)", MARKERS["B"])
    result = tool_result(refused)
    people = Path(suite.vault_root, "bots")
    stored_off = [p for p in people.rglob("*.md") if "must not be stored" in p.read_text("utf-8")]
    suite.check(
        "event types off again: no key-events block, and open_event refuses saying why",
        not seen.events and FEATURE_OFF in result and not stored_off,
        f"block {'present' if seen.events else 'absent'}; tool result {result[:200]!r}; "
        f"files with the refused summary {stored_off}",
    )
