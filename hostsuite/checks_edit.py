"""`!memory edit` from a real chat, and `remember` refusing a tool's output, on the real host
(issue 24 items 3 and 5).

After the chats A and B: chat A edits its own memory with `!memory edit <id> <text>` (the
text holds a double space: LangBot 4.11.2 splits a command on single spaces, and the text
must come back as typed), and the next request of A carries the edited memory once; chat A
asking to edit B's memory is answered "not found in this chat" and B's file is untouched; a
scripted `remember` of a tool's result through LocalAgent's tool loop gets MemVault's
one-line refusal, and no file holds it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from hostsuite.checks_chat import FACT_B, QUESTION, other, settle
from hostsuite.framework import phase
from hostsuite.host import Host

if TYPE_CHECKING:
    from hostsuite.framework import SuiteContext

# Keeps "17 April": the later phases look for A's memory by it.
EDITED_IN_CHAT = "Project Falcon launches on 17 April according to chat A  (edited from chat)"
TOOL_OUTPUT = 'Tool result: {"project": "Falcon", "launch": "never", "source": "weather_api"}'


def _files_with(root: Path, needle: str) -> list[Path]:
    return [p for p in (root / "bots").rglob("*.md") if needle in p.read_text("utf-8")]


@phase("edit from chat, chatter refused", order=12)
async def run(suite: SuiteContext, host: Host, ids: dict[str, str]) -> None:
    chat_a = suite.chats["A"]
    episodes = suite.facts["episodes"]
    id_a, id_b, path_a = episodes["A"], episodes["B"], Path(episodes["file_A"])

    files_b = _files_with(suite.vault_root, f"id: {id_b}")
    before_b = [p.read_bytes() for p in files_b]
    turn = await suite.ask(chat_a, f"!memory edit {id_b} Project Falcon is cancelled")
    suite.check(
        "`!memory edit` of another chat's id: not found in this chat, its file untouched",
        "not found in this chat" in turn.reply
        and len(files_b) == 1
        and [p.read_bytes() for p in files_b] == before_b
        and FACT_B in files_b[0].read_text("utf-8"),
        turn.reply.strip()[:160],
    )

    turn = await suite.ask(chat_a, f"!memory edit {id_a} {EDITED_IN_CHAT}")
    body = path_a.read_text("utf-8").rstrip("\n")
    suite.check(
        "`!memory edit` on the real host: the file holds the text as typed (a double space kept)",
        f"[Memory] Episode {id_a} edited." in turn.reply  # LangBot prefixes an @mention
        and body.endswith("\n" + EDITED_IN_CHAT),
        f"reply {turn.reply.strip()[:120]!r}; file ends {body[-90:]!r}",
    )
    await settle(suite, host, suite.facts["sessions"]["A"], QUESTION, "edited from chat")
    seen = suite.seen(await suite.ask(chat_a, QUESTION), f"A: {QUESTION} (chat edit)", other("A"))
    suite.check(
        "the memory edited from chat is in A's next request, once",
        seen.count("edited from chat") == 1 and seen.times(id_a) == 1,
        f"'edited from chat' x{seen.count('edited from chat')}, id {id_a} x{seen.times(id_a)}",
    )

    turn = await suite.ask(chat_a, "tool remember " + json.dumps({"content": TOOL_OUTPUT}))
    results = [
        text for request in turn.requests[1:] for role, text in request.texts() if role == "tool"
    ]
    stored = _files_with(suite.vault_root, "weather_api")
    suite.check(
        "`remember` of a tool's result through LocalAgent: a one-line refusal, nothing stored",
        any(
            r.startswith("Error: not remembered:") and "tool_output.label" in r and "\n" not in r
            for r in results
        )
        and stored == [],
        f"tool result {results[-1:]!r}; files with it: {[str(p) for p in stored]}",
    )
