"""Settings changed through LangBot's HTTP API reach the INSTALLED MemVault (issue 20, item 1).

Run by checks_package on the copy installed from the .lbpkg (the debug copy is stopped; its
settings path differs: `lbp run` gets no invocation scope). One setting of each kind, each
by its own `PUT /api/v1/plugins/memvault/MemVault/config` as the web UI's form sends it, and
no restart by the suite (LangBot restarts the plugin process itself). After each PUT the suite
waits until `!memory health` says LangBot's settings are in effect, then checks what a user
sees:

- a list, `event_types`: `list_events` (called by LocalAgent's tool loop) refused before,
  lists the type after;
- an enum, `isolation: bot`: `!memory` says `mode: bot`;
- a number, `relevance_floor: 1.0`: the remembered memory reached the model's request once
  before, and no longer does;
- a secret-like field, `openai_key` (with `embedding: openai` pointed at the fake server): the
  fake server's embedding requests carry that key, then, after a PUT of the key ALONE, the
  new one; neither key ever appears in a `!memory` reply.

Before the fix the restarted process read `{}` in initialize (live_settings.py): every wait
below timed out with the defaults still in effect.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from typing import TYPE_CHECKING, Any

from hostsuite.checks_events import tool_result
from hostsuite.checks_scope import set_plugin_config
from hostsuite.host import Host, SuiteError, log

if TYPE_CHECKING:
    from hostsuite.chat import Chat
    from hostsuite.framework import SuiteContext

TYPES = ["appointment: a booked visit"]
OFF = "key events are off for this bot"  # vault/events/event_types.py FEATURE_OFF
IN_EFFECT = "settings in effect match LangBot's: "  # live_settings.check
WAIT_SECONDS = 120.0


def put(suite: SuiteContext, host: Host, changes: dict[str, Any]) -> float:
    """One PUT of the plugin's config (what is not in `changes` stays); when it was sent."""
    at = time.time()
    set_plugin_config(suite, host, changes)
    return at


def in_effect(suite: SuiteContext, chat: Chat, *fragments: str) -> tuple[bool, str]:
    """Wait until `!memory health` of the installed copy says LangBot's settings are in
    effect and they read `fragments`; (done, the settings line or the last reply)."""
    deadline = time.monotonic() + WAIT_SECONDS
    last = ""
    while time.monotonic() < deadline:
        suite.procs.check_alive()
        try:  # the old process may still answer, or none while the new one starts
            reply = asyncio.run(chat.send("!memory health", timeout=30))
        except SuiteError as exc:
            last = str(exc)
        else:
            line = next((x for x in reply.splitlines() if "settings" in x.lower()), reply)
            last = line.strip()
            if IN_EFFECT in line and all(f in line for f in fragments):
                return True, last
        time.sleep(2)
    return False, f"after {WAIT_SECONDS:.0f}s: {last[:400]}"


def embedding_keys(suite: SuiteContext, after: float) -> list[str]:
    """The Authorization headers of the fake server's embedding requests since `after`."""
    keys = []
    for line in suite.llm_log.read_text("utf-8").splitlines():
        record = json.loads(line)
        if record.get("kind") == "embeddings" and record["at"] >= after:
            keys.append(str(record["body"].get("auth") or ""))
    return keys


def run(suite: SuiteContext, host: Host, key_id: str, question: str) -> None:
    started = time.monotonic()
    chat = suite.chats["A"]
    lists(suite, host, chat)
    number(suite, host, chat, key_id, question)
    enum(suite, host, chat)
    secret(suite, host, chat)
    log(f"settings checks on the installed copy took {time.monotonic() - started:.0f}s")


def lists(suite: SuiteContext, host: Host, chat: Chat) -> None:
    before = tool_result(asyncio.run(suite.ask(chat, "tool list_events {}")))
    put(suite, host, {"event_types": TYPES})
    done, line = in_effect(suite, chat, "event_types=appointment")
    after = tool_result(asyncio.run(suite.ask(chat, "tool list_events {}"))) if done else ""
    suite.check(
        "installed .lbpkg: a list setting (event_types) set through LangBot's API takes effect",
        OFF in before and "Event types: appointment" in after and OFF not in after,
        f"list_events before {before[:80]!r}; after {after[:80]!r}; health {line[:160]!r}",
    )


def number(suite: SuiteContext, host: Host, chat: Chat, key_id: str, question: str) -> None:
    seen = suite.seen(asyncio.run(suite.ask(chat, question)), "A: floor 0.44 (installed)", ())
    before = seen.times(key_id)
    put(suite, host, {"relevance_floor": 1.0})
    done, line = in_effect(suite, chat, "relevance_floor=1.0")
    after = -1
    if done:
        seen = suite.seen(asyncio.run(suite.ask(chat, question)), "A: floor 1.0 (installed)", ())
        after = seen.times(key_id)
    suite.check(
        "installed .lbpkg: a number setting (relevance_floor 1.0) takes effect: the memory "
        "no longer reaches the model",
        before == 1 and after == 0,
        f"id {key_id} in the model's request x{before} before, x{after} after; {line[:160]!r}",
    )
    put(suite, host, {"relevance_floor": 0.44})  # back to the default for what follows


def mode_line(reply: str) -> str:
    return next((x.strip() for x in reply.splitlines() if "mode:" in x), reply[:80])


def enum(suite: SuiteContext, host: Host, chat: Chat) -> None:
    in_effect(suite, chat, "isolation=session", "relevance_floor=0.44")  # number()'s undo
    before = mode_line(asyncio.run(suite.ask(chat, "!memory")).reply)
    put(suite, host, {"isolation": "bot"})
    done, line = in_effect(suite, chat, "isolation=bot", "relevance_floor=0.44")
    after = mode_line(asyncio.run(suite.ask(chat, "!memory")).reply) if done else ""
    suite.check(
        "installed .lbpkg: an enum setting (isolation: bot) takes effect in `!memory`",
        before.endswith("[Memory] mode: session") and after.endswith("[Memory] mode: bot"),
        f"before {before[-40:]!r}; after {after[-40:]!r}; {line[:160]!r}",
    )


def secret(suite: SuiteContext, host: Host, chat: Chat) -> None:
    port = (suite.work / "fake_llm.port").read_text().strip()
    first, second = (f"sk-suite-{uuid.uuid4().hex}" for _ in range(2))
    url = f"http://127.0.0.1:{port}/v1"
    changes = {
        "embedding": "openai",
        "openai_url": url,
        "openai_model": "fake-embed",
        "openai_dim": 64,  # hostsuite/fake_llm.py DIM
        "openai_key": first,
    }
    at = put(suite, host, changes)
    done, line = in_effect(suite, chat, "embedding=openai", "openai_key=set")
    used_first = f"Bearer {first}" in embedding_keys(suite, at)
    at = put(suite, host, {"openai_key": second})  # the secret alone
    replies: list[str] = [line]
    deadline = time.monotonic() + WAIT_SECONDS
    while done and f"Bearer {second}" not in embedding_keys(suite, at):
        if time.monotonic() > deadline:
            break
        try:  # health embeds a probe text with the key in effect
            replies.append(asyncio.run(chat.send("!memory health", timeout=30)))
        except SuiteError as exc:
            replies.append(str(exc))
        time.sleep(2)
    keys = embedding_keys(suite, at)
    used_second = f"Bearer {second}" in keys
    replies.append(asyncio.run(suite.ask(chat, "!memory")).reply)
    leaked = any(first in r or second in r for r in replies)
    suite.check(
        "installed .lbpkg: a secret setting (openai_key) takes effect, also changed alone, "
        "and is never shown",
        done and used_first and used_second and not leaked,
        f"first key used {used_first}; second key used {used_second} "
        f"({len(keys)} embedding request(s) after its PUT); shown in a reply {leaked}; "
        f"{line[:160]!r}",
    )
