"""Two group chats of one bot through LocalAgent, asserted on what the model received.

Chat A and chat B each get a session profile and one memory (written as files, as a person
or another tool would). Then, from the fake LLM's request log: A's request carries A's
profile block and A's memory exactly once (MemVault's block and LocalAgent's retrieval of the
MemVault KB counted together) and nothing of B, and the reverse; an unrelated question gets
no memory; a hand edit of A's file is in the next request once the index has it; the
Injection view (`!memory`, the console's /injection) names the ids the model received; the
`remember` tool runs inside LocalAgent's own tool loop (the fake LLM scripts the tool call).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hostsuite import checks_recall
from hostsuite.chat import Chat
from hostsuite.console_page import TOOL_MEMORY, page_data
from hostsuite.framework import phase
from hostsuite.host import Host, SuiteError, log

if TYPE_CHECKING:
    from hostsuite.framework import SuiteContext
    from hostsuite.llm_requests import Contents

FACT_A = "Project Falcon launches on 3 March according to chat A"
FACT_B = "Project Falcon launches on 9 May according to chat B"
EDITED_A = "Project Falcon launches on 17 April according to chat A (edited by hand)"
QUESTION = "When does Project Falcon launch?"
UNRELATED = "what's 17 times 23?"
PROFILE = {"A": "codename: Heron", "B": "codename: Osprey"}
# Texts only chat A's (B's) memory or profile holds: any of them in the other chat's request
# is a leak.
MARKERS = {"A": ("3 March", "17 April", "Heron"), "B": ("9 May", "Osprey")}
EPISODE_ID = re.compile(r"\bep_\d{8}_[0-9a-f]+\b")


def other(key: str) -> tuple[str, ...]:
    return MARKERS["B" if key == "A" else "A"]


def scope_body(suite: SuiteContext, key: str) -> dict[str, str]:
    return {"bot": suite.facts["ids"]["bot"], "session": suite.facts["sessions"][key]}


def seed(suite: SuiteContext, bot: str, session: str, text: str, isolation: str = "session") -> Any:
    """A memory written as a file through the vault (not through the plugin): (id, path)."""
    from vault.format.model import Speaker
    from vault.layout.keys import ScopeId
    from vault.writes.new_episode import NewEpisode
    from vault.writes.operations import Vault

    vault = Vault(suite.vault_root, git=True)
    scope = ScopeId(bot, session, isolation)  # type: ignore[arg-type]
    episode = vault.remember(
        NewEpisode(scope, text, speaker=Speaker("seed", "Seeder"), tags=["suite"], importance=3)
    )
    return episode.id, vault.find_episode(scope, episode.id).path


def seed_profile(suite: SuiteContext, bot: str, session: str, trait: str) -> None:
    from vault.layout.keys import ScopeId
    from vault.writes.operations import Vault
    from vault.writes.profile_edit import ProfileEdit

    edit = ProfileEdit(ScopeId(bot, session), "traits", "add", trait)
    Vault(suite.vault_root, git=True).update_profile(edit, source="suite")


async def settle(suite: SuiteContext, host: Host, session: str, query: str, want: str) -> float:
    """Wait until MemVault's engine recalls `want` for `query` in `session`, so the next
    message is a fair test. Asked through the host's KB retrieve API: MemVault's `retrieve`
    shows each record's text as the index holds it, the text the injector puts into the
    prompt (the console's /search would show the file as it is now, even while the index
    still holds the old text). Another sender, so no turn of the chats is involved.
    Seconds waited."""
    started = time.monotonic()
    settings = {
        "top_k": 5,
        "session_name": session,
        "bot_uuid": suite.facts["ids"]["bot"],
        "sender_id": "suite-settle",
    }
    path = f"/api/v1/knowledge/bases/{suite.facts['ids']['kb']}/retrieve"
    while time.monotonic() - started < 90:
        found = await asyncio.to_thread(
            host.call, "POST", path, json={"query": query, "retrieval_settings": settings}
        )
        if want in json.dumps(found, ensure_ascii=False):
            return time.monotonic() - started
        await asyncio.sleep(0.5)
    raise SuiteError(f"MemVault's retrieve never answered {query!r} with {want!r} in 90s")


def check_turn(suite: SuiteContext, seen: Contents, key: str, own_id: str, own_text: str) -> None:
    """The three request-body checks of one chat's question."""
    profile_ok = PROFILE[key] in seen.profile and not any(m in seen.profile for m in other(key))
    suite.check(
        f"chat {key}'s request has {key}'s profile block",
        profile_ok,
        f"profile block present: {bool(seen.profile)}; {PROFILE[key]!r} in it: "
        f"{PROFILE[key] in seen.profile}",
    )
    suite.check(
        f"chat {key}'s request has {key}'s memory exactly once (all messages counted)",
        seen.times(own_id) == 1 and seen.count(own_text) == 1 and seen.duplicates == 0,
        f"id {own_id} x{seen.times(own_id)} (block {list(seen.block_ids)}, retrieve "
        f"{list(seen.retrieved_ids)}, elsewhere {list(seen.elsewhere_ids)}); "
        f"{own_text!r} x{seen.count(own_text)}; duplicates {seen.duplicates}",
    )
    suite.check(
        f"chat {key}'s memory is in MemVault's block in default_prompt (the injector's recall)",
        own_id in seen.block_ids,
        f"block {list(seen.block_ids)}; LocalAgent's retrieval block {list(seen.retrieved_ids)}",
    )
    suite.check(
        f"chat {key}'s request has nothing of the other chat",
        seen.other_chat == 0,
        f"other chat's texts {other(key)}: {seen.other_chat} occurrence(s)",
    )


def _memory_view_ids(reply: str) -> tuple[list[str], list[str]]:
    """(ids in the prompt, ids `retrieve` served) as `!memory` shows the last turn."""
    block: list[str] = []
    served: list[str] = []
    for line in reply.splitlines():
        if "Memories in the prompt" in line:
            block = EPISODE_ID.findall(line)
        found = re.search(r"served \d+ \[([^\]]*)\]", line)
        if found:
            served = EPISODE_ID.findall(found.group(1))
    return block, served


async def injection_view(
    suite: SuiteContext, host: Host, chat: Chat, key: str, seen: Contents
) -> None:
    """`!memory` and the console's /injection name the ids the model got, where it got them."""
    received = (sorted(seen.block_ids), sorted(seen.retrieved_ids))
    turn = await suite.ask(chat, "!memory")
    block, served = _memory_view_ids(turn.reply)
    suite.check(
        f"`!memory` shows the memory ids the model received (chat {key})",
        bool(seen.ids) and (sorted(block), sorted(served)) == received,
        f"!memory: in the prompt {block}, retrieve served {served}; the model got: block "
        f"{list(seen.block_ids)}, retrieve {list(seen.retrieved_ids)}",
    )
    snap = await asyncio.to_thread(
        page_data, suite, host, "/injection", {"scope": scope_body(suite, key)}
    )
    snap = snap or {}
    retrieve = snap.get("retrieve") if isinstance(snap.get("retrieve"), dict) else {}
    shown = (sorted(snap.get("episode_ids") or []), sorted(retrieve.get("served_ids") or []))
    suite.check(
        f"the console's Injection panel (page-api /injection) shows the ids the model "
        f"received (chat {key})",
        bool(seen.ids) and shown == received and "naive_rag_suppressed" not in snap,
        f"snapshot episode_ids {snap.get('episode_ids')}, retrieve {retrieve or None}, "
        f"placed {snap.get('placed')}; the model got: block {list(seen.block_ids)}, retrieve "
        f"{list(seen.retrieved_ids)}",
    )


@phase("chats A and B", order=10)
async def run(suite: SuiteContext, host: Host, ids: dict[str, str]) -> None:
    chat_a = Chat(host, ids["bot"], str(uuid.uuid4()), "A")
    chat_b = Chat(host, ids["bot"], str(uuid.uuid4()), "B")
    suite.chats.update(A=chat_a, B=chat_b)

    turn = await suite.ask(chat_a, "!memory")
    suite.check(
        "`!memory` replies on the real host",
        "[Memory]" in turn.reply,
        turn.reply.strip().splitlines()[0][:120] if turn.reply.strip() else "empty",
    )
    hello_a = await suite.ask(chat_a, "hello from A")
    hello_b = await suite.ask(chat_b, "hello from B")
    sessions = {"A": hello_a.session, "B": hello_b.session}
    suite.facts["sessions"] = sessions
    suite.check(
        "chats A and B are different group sessions",
        sessions["A"] != sessions["B"] and sessions["A"].startswith("group_"),
        f"{sessions['A']} / {sessions['B']}",
    )
    ltm = hello_a.probe.get("ltm_context")
    suite.check(
        "the probe plugin (after MemVault) reads `_ltm_context`",
        isinstance(ltm, dict)
        and set(ltm) == {"speaker", "session_profile", "speaker_profile", "episodes"},
        json.dumps(ltm)[:200],
    )
    suite.check(
        "a full model turn through LocalAgent (request logged, fake reply in the chat)",
        bool(hello_a.requests) and "FAKE-LLM-REPLY" in hello_a.reply,
        f"{len(hello_a.requests)} request(s); reply {hello_a.reply[-80:]!r}",
    )

    for key in ("A", "B"):
        seed_profile(suite, ids["bot"], sessions[key], PROFILE[key])
    id_a, path_a = seed(suite, ids["bot"], sessions["A"], FACT_A)
    id_b, _ = seed(suite, ids["bot"], sessions["B"], FACT_B)
    suite.facts["episodes"] = {"A": id_a, "B": id_b, "file_A": str(path_a)}
    await settle(suite, host, sessions["A"], QUESTION, "3 March")
    await settle(suite, host, sessions["B"], QUESTION, "9 May")

    turn_a = await suite.ask(chat_a, QUESTION)
    seen_a = suite.seen(turn_a, f"A: {QUESTION}", other("A"))
    check_turn(suite, seen_a, "A", id_a, "3 March")
    await injection_view(suite, host, chat_a, "A", seen_a)
    await checks_recall.recall_test_view(suite, host, "A", turn_a, QUESTION)
    seen_b = suite.seen(await suite.ask(chat_b, QUESTION), f"B: {QUESTION}", other("B"))
    check_turn(suite, seen_b, "B", id_b, "9 May")
    suite.check(
        "chat B's request never carries A's memory id",
        id_a not in seen_b.ids and id_b not in seen_a.ids,
        f"A's ids {list(seen_a.ids)}; B's ids {list(seen_b.ids)}",
    )

    unrelated = suite.seen(await suite.ask(chat_a, UNRELATED), f"A: {UNRELATED}", other("A"))
    suite.check(
        f"an unrelated question ({UNRELATED!r}) gets no memory (the profile still goes in)",
        not unrelated.ids and not unrelated.memory_block and bool(unrelated.profile),
        f"ids {list(unrelated.ids)}; memory block: {unrelated.memory_block}; profile: "
        f"{bool(unrelated.profile)}",
    )
    await checks_recall.empty_reason_view(suite, host, chat_a, "A")

    await hand_edit(suite, host, chat_a, id_a, Path(path_a))
    await tool_call(suite, chat_a)


async def hand_edit(suite: SuiteContext, host: Host, chat: Chat, id_a: str, path: Path) -> None:
    original = path.read_text("utf-8")
    path.write_text(original.replace(FACT_A, EDITED_A), "utf-8")  # a person's edit
    waited = await settle(suite, host, suite.facts["sessions"]["A"], QUESTION, "17 April")
    log(f"the index had the hand edit after {waited:.1f}s")
    seen = suite.seen(await suite.ask(chat, QUESTION), f"A: {QUESTION} (after edit)", other("A"))
    suite.check(
        "a hand edit of A's memory file is in the next request (old text gone)",
        seen.count("17 April") == 1 and seen.count("3 March") == 0 and seen.times(id_a) == 1,
        f"'17 April' x{seen.count('17 April')}, '3 March' x{seen.count('3 March')}, id "
        f"{id_a} x{seen.times(id_a)}; index caught up in {waited:.1f}s",
    )


async def tool_call(suite: SuiteContext, chat: Chat) -> None:
    """`tool remember {...}`: the fake LLM answers with a tool call, LocalAgent calls
    MemVault's tool through the host, the result goes back to the model."""
    args = {"content": f"Suite tool memory: the {TOOL_MEMORY}", "tags": ["suite"]}
    turn = await suite.ask(chat, "tool remember " + json.dumps(args))
    results = [
        text for request in turn.requests[1:] for role, text in request.texts() if role == "tool"
    ]
    folder = suite.vault_root / "bots"
    files = [p for p in folder.rglob("*.md") if TOOL_MEMORY in p.read_text("utf-8")]
    suite.check(
        "MemVault's `remember` runs inside LocalAgent's tool loop (scripted tool call)",
        len(turn.requests) >= 2
        and any(r.startswith("Remembered") for r in results)
        and "TOOL-RESULT Remembered" in turn.reply
        and len(files) == 1,
        f"{len(turn.requests)} model request(s); tool result {results[-1:]!r}; memory "
        f"files with the text: {[str(p.relative_to(suite.vault_root)) for p in files]}",
    )
