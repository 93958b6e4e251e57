"""Where memory is on and how far it is shared, asserted on what the model received.

- KB not attached: the pipeline's runner config without MemVault's KB (how a user turns
  memory off in a pipeline on 4.11): the model gets no MemVault message and no memory, and
  `!memory health` in that chat says why.
- isolation=bot (set through the host's plugin config API, MemVault restarted to read it):
  a memory of bot 1 reaches every chat of bot 1 and no chat of bot 2 (a second Page Bot on
  the same pipeline); profiles stay per chat.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from hostsuite.chat import Chat
from hostsuite.checks_chat import MARKERS, QUESTION, other, seed, settle
from hostsuite.console_page import page_data
from hostsuite.framework import phase
from hostsuite.host import Host, wait_for
from hostsuite.local_agent import RUNNER_ID

if TYPE_CHECKING:
    from hostsuite.framework import SuiteContext

GALA = "The Harbor Gala of the suite's first bot is on 5 June"
GALA_QUESTION = "When is the Harbor Gala?"


@phase("KB not attached", order=50)
async def not_attached(suite: SuiteContext, host: Host, ids: dict[str, str]) -> None:
    chat = suite.chats["A"]
    suite.set_runner_kbs(host, ids["pipeline"], RUNNER_ID, [])
    try:
        turn = await suite.ask(chat, QUESTION)
        seen = suite.seen(turn, f"A: {QUESTION} (KB not on the runner)", other("A"))
        own = sum(seen.count(m) for m in MARKERS["A"])
        suite.check(
            "KB not attached to the runner: nothing of MemVault reaches the model",
            not seen.profile and not seen.memory_block and not seen.ids and own == 0,
            f"profile block {bool(seen.profile)}, memory block {seen.memory_block}, ids "
            f"{list(seen.ids)}, A's texts x{own}",
        )
        health = await suite.ask(chat, "!memory health")
        line = next((x for x in health.reply.splitlines() if "knowledge base" in x), "")
        suite.check(
            "KB not attached: `!memory health` in that chat says why",
            "not attached" in line and ids["kb"] in line,
            line.strip()[:200] or health.reply[:200],
        )
    finally:
        suite.set_runner_kbs(host, ids["pipeline"], RUNNER_ID, [ids["kb"]])


def set_plugin_config(suite: SuiteContext, host: Host, changes: dict[str, Any]) -> dict[str, Any]:
    """Through the host's plugin config API, as the web UI's settings form does."""
    path = f"/api/v1/plugins/{suite.memvault_id}/config"
    # A config PUT makes the host restart the plugin (the debug copy reconnects): until it is
    # back, the config API answers 404 "plugin not found".
    found = wait_for(f"{path} to answer", lambda: host.call("GET", path), 60, every=1)
    config = dict(found.get("config") or {})
    config.update(changes)
    host.call("PUT", path, json=config)
    return config


def set_isolation(suite: SuiteContext, host: Host, isolation: str) -> dict[str, Any]:
    return set_plugin_config(suite, host, {"isolation": isolation})


@phase("isolation=bot", order=60)
async def bot_isolation(suite: SuiteContext, host: Host, ids: dict[str, str]) -> None:
    set_isolation(suite, host, "bot")
    try:
        suite.restart_memvault(host)  # waits for its page: /meta answers
        meta = page_data(suite, host, "/meta", {})
        if meta.get("isolation") != "bot":
            suite.check(
                "isolation=bot through the host's plugin config API reaches MemVault",
                False,
                f"/meta isolation {meta.get('isolation')!r} after the config PUT and a restart",
            )
            return
        bot_2 = suite.add_page_bot(host, ids["pipeline"], "suite page bot 2")
        chat_d = Chat(host, bot_2, str(uuid.uuid4()), "D (bot 2)")
        sessions = suite.facts["sessions"]
        hello_d = await suite.ask(chat_d, "hello from D")
        gala_id, _ = seed(suite, ids["bot"], sessions["A"], GALA, isolation="bot")
        await settle(suite, host, sessions["B"], GALA_QUESTION, "5 June")
        seen_b = suite.seen(
            await suite.ask(suite.chats["B"], GALA_QUESTION),
            f"B: {GALA_QUESTION} (isolation=bot)",
            ("Heron",),  # A's profile: per chat even when memories are shared
        )
        everything = (*MARKERS["A"], *MARKERS["B"], "5 June")
        seen_d = suite.seen(
            await suite.ask(chat_d, GALA_QUESTION),
            f"D (bot 2): {GALA_QUESTION} (isolation=bot)",
            everything,
        )
        suite.check(
            "isolation=bot: a memory written in chat A reaches chat B of the same bot",
            seen_b.times(gala_id) == 1 and seen_b.other_chat == 0,
            f"id {gala_id} x{seen_b.times(gala_id)} in B's request; A's profile texts in it: "
            f"{seen_b.other_chat}",
        )
        suite.check(
            "isolation=bot: nothing of bot 1 reaches a chat of bot 2",
            bool(seen_d.profile) and gala_id not in seen_d.ids and seen_d.other_chat == 0,
            f"MemVault's profile block in D's request (it ran there): {bool(seen_d.profile)}; "
            f"ids {list(seen_d.ids)}; bot 1's texts x{seen_d.other_chat}; D's session "
            f"{hello_d.session}",
        )
    finally:
        # Back to per-chat memory for what follows (the installed package reads it at start).
        set_isolation(suite, host, "session")
