"""Issue 24, items 6 and 7 on the real host: the Memory Console's recall test (page-api
/recall/test) for the message a chat just sent shows exactly the blocks MemVault put into
the model's request (as the FAKE LLM logged it), and a turn that got no memory says why in
the snapshot (page-api /injection) and in `!memory`.

Called from the chats phase (hostsuite/checks_chat.py), right after the turns they check.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from hostsuite.console_page import page_data
from hostsuite.host import SuiteError
from hostsuite.llm_requests import EVENTS_HEAD, MEMORY_HEAD, PROFILE_HEAD

if TYPE_CHECKING:
    from hostsuite.chat import Chat
    from hostsuite.framework import SuiteContext, Turn
    from hostsuite.host import Host

HEADS = (PROFILE_HEAD, MEMORY_HEAD, EVENTS_HEAD)  # MemVault's system messages, in order


def _scope(suite: SuiteContext, key: str) -> dict[str, str]:
    return {"bot": suite.facts["ids"]["bot"], "session": suite.facts["sessions"][key]}


def sent_blocks(turn: Turn) -> list[str]:
    """MemVault's messages in the turn's first model request, in their order."""
    if not turn.requests:
        return []
    return [t for role, t in turn.requests[0].texts() if role == "system" and t.startswith(HEADS)]


async def recall_test_view(
    suite: SuiteContext, host: Host, key: str, turn: Turn, text: str
) -> None:
    """The recall test for the same message, as the same speaker (the snapshot's), shows the
    very texts the model received."""
    name = (
        f"the console's recall test (page-api /recall/test) shows the blocks the model "
        f"received (chat {key}, same message and speaker)"
    )
    try:
        await _compare(suite, host, key, turn, text, name)
    except SuiteError as exc:  # a refused call is this check's failure, not the phase's
        suite.check(name, False, str(exc)[:1500])


async def _compare(
    suite: SuiteContext, host: Host, key: str, turn: Turn, text: str, name: str
) -> None:
    scope = _scope(suite, key)
    snap: dict[str, Any] = (
        await asyncio.to_thread(page_data, suite, host, "/injection", {"scope": scope}) or {}
    )
    speaker = snap.get("speaker") if isinstance(snap.get("speaker"), dict) else {}
    body = {"scope": scope, "text": text, "speaker": speaker.get("id") or None}
    if speaker.get("name"):
        body["speaker_name"] = speaker["name"]
    shown = await asyncio.to_thread(page_data, suite, host, "/recall/test", body) or {}
    blocks = [str(b.get("text")) for b in shown.get("blocks") or []]
    sent = sent_blocks(turn)
    suite.check(
        name,
        bool(sent) and blocks == sent and shown.get("recorded") is False,
        f"model got {[b.splitlines()[0] for b in sent]} ({sum(map(len, sent))} chars); the "
        f"test shows {[b.splitlines()[0] for b in blocks]} ({sum(map(len, blocks))} chars), "
        f"same texts: {blocks == sent}; settings from {shown.get('settings_from')}",
    )


async def empty_reason_view(suite: SuiteContext, host: Host, chat: Chat, key: str) -> None:
    """After a turn that got no memory: the snapshot and `!memory` say why, in one wording."""
    name = f"a turn that got no memory says why in the snapshot and in `!memory` (chat {key})"
    body = {"scope": _scope(suite, key)}
    try:
        snap: dict[str, Any] = (
            await asyncio.to_thread(page_data, suite, host, "/injection", body) or {}
        )
    except SuiteError as exc:  # a refused call is this check's failure, not the phase's
        suite.check(name, False, str(exc)[:1500])
        return
    why = snap.get("nothing_injected") if isinstance(snap.get("nothing_injected"), dict) else {}
    words = str(why.get("words") or "")
    reply = (await suite.ask(chat, "!memory")).reply
    suite.check(
        name,
        bool(words) and f"Nothing injected: {words}" in reply,
        f"snapshot nothing_injected: {why or None}; !memory lines: "
        f"{[line.strip() for line in reply.splitlines() if 'Nothing' in line]}",
    )
