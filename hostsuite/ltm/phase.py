"""Coming from LongTermMemory, on the real host (issue 24 item 1).

LangBot's official LongTermMemory plugin, from its public source (hostsuite/ltm/fixture.py),
stores L1 and L2 in two chats through its own code (hostsuite/ltm/ltm_side.py: its candidate
path; its tools refuse on 4.11.2, said as a NOTE), and its own listings show them. Then
MemVault's migration, as an operator runs it (hostsuite/ltm/migration.py): `!memory migrate
ltm --dry-run` (MemVault's plugin, through the host's vector API) and `memvault migrate ltm
--langbot-data --dry-run` count per chat and write nothing; `memvault migrate ltm` brings every
chat in one go. The next turn in each chat, asserted on the request body the FAKE LLM logged,
carries that chat's migrated profile and memory in MemVault's blocks and nothing of the other
chat, and LongTermMemory injected nothing. A second run of each way (the one go, the plugin
command, and the two-step `memvault import` of LongTermMemory's own export files) adds nothing.

LongTermMemory and MemVault both register `!memory` (4.11.2 runs every bound plugin's command
of that name), so the round trip has its own pipeline and Page Bot, bound to LongTermMemory
first and to MemVault after (one pipeline, so the same sender ids); LongTermMemory is
detached at the end, before the phases that chat in the suite's main pipeline.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from typing import TYPE_CHECKING, Any

from hostsuite.chat import Chat
from hostsuite.framework import phase
from hostsuite.host import Host, SuiteError
from hostsuite.llm_requests import PROFILE_HEAD
from hostsuite.local_agent import RUNNER_ID
from hostsuite.ltm import host_steps as steps
from hostsuite.ltm import ltm_side
from hostsuite.ltm.fixture import LTM_COMMIT, LTM_ID, LtmFixtureError
from hostsuite.ltm.migration import episodes_of, import_files, migrate_all

if TYPE_CHECKING:
    from hostsuite.framework import SuiteContext

KEYS = ("L1", "L2")
# What each chat tells the bot: a stable preference (LongTermMemory's extractor makes it an L1
# speaker-profile candidate: "prefer") and a dated plan (an L2 episode candidate: "meeting").
SAID = {
    "L1": ("I prefer honey from the Kestrel orchard", "The harvest meeting moved to 14 October"),
    "L2": ("I prefer glass beads from the Vireo workshop", "The crane meeting is on 2 November"),
}
# Texts only one chat's LongTermMemory data holds; the questions hold none of them.
OWN = {"L1": ("Kestrel orchard", "14 October"), "L2": ("Vireo workshop", "2 November")}
QUESTION = {"L1": "When is the harvest meeting?", "L2": "When is the crane meeting?"}


def other(key: str) -> tuple[str, ...]:
    return OWN["L2" if key == "L1" else "L1"]


@phase("LongTermMemory round trip", order=82)
async def run(suite: SuiteContext, host: Host, ids: dict[str, str]) -> None:
    started = time.monotonic()
    try:
        steps.attach_ltm(suite, host)
    except LtmFixtureError as exc:
        suite.check("LongTermMemory is loaded from its cached public source", False, str(exc))
        return
    try:
        await round_trip(suite, host, ids)
    finally:
        leave(suite, host)
        suite.facts.setdefault("ltm", {})["seconds"] = round(time.monotonic() - started, 1)


def leave(suite: SuiteContext, host: Host) -> None:
    """The host as the phases after this one expect it: LongTermMemory's KB deleted while its
    engine is still there to hear it (a KB whose engine is gone would meet a LangBot restart),
    then LongTermMemory detached (its `!memory` must not answer in their chats)."""
    kb = suite.facts.get("ltm", {}).get("kb")
    try:
        if kb:
            host.call("DELETE", f"/api/v1/knowledge/bases/{kb}")
    except SuiteError as exc:
        suite.check("LongTermMemory's KB is deleted after the round trip", False, str(exc))
    finally:
        suite.procs.stop("ltm")


async def round_trip(suite: SuiteContext, host: Host, ids: dict[str, str]) -> None:
    embedding = await asyncio.to_thread(steps.embedding_model, host, ids["provider"])
    kb = await asyncio.to_thread(steps.create_ltm_kb, host, steps.ltm_engine(host), embedding)
    suite.facts["ltm"] = {"kb": kb}  # for `leave`, whatever happens next
    pipeline = await asyncio.to_thread(steps.create_pipeline, host, ids["llm"], kb)
    await asyncio.to_thread(steps.bind_plugins, host, pipeline, LTM_ID)
    bot = suite.add_page_bot(host, pipeline, "ltm round trip bot")
    chats = {k: Chat(host, bot, str(uuid.uuid4()), k) for k in KEYS}
    sessions = {k: (await suite.ask(chats[k], f"hello from {k}")).session for k in KEYS}
    facts = suite.facts["ltm"]
    facts.update(commit=LTM_COMMIT, bot=bot, pipeline=pipeline, sessions=sessions)
    scope = {k: f"{bot}:{s}" for k, s in sessions.items()}  # LongTermMemory's session_key
    # A chat of its own: what the tool turns say must not become L1's or L2's candidates.
    await ltm_side.tool_attempts(suite, Chat(host, bot, str(uuid.uuid4()), "T"))
    for key in KEYS:
        for text in SAID[key]:
            await suite.ask(chats[key], text)
    for key in KEYS:
        await ltm_side.ltm_listing(
            suite, host, chats[key], key, (kb, scope[key]), OWN[key], other(key)
        )
    stored = ltm_side.record_facts(suite, host, facts)
    exports = {k: await ltm_side.export(suite, host, chats[k], k, kb, scope[k]) for k in KEYS}

    before = steps.storage_rows(suite)  # its injection snapshots, to see it stays silent
    await asyncio.to_thread(suite.set_runner_kbs, host, pipeline, RUNNER_ID, [ids["kb"]])
    await asyncio.to_thread(steps.bind_plugins, host, pipeline, suite.memvault_id)
    # `!memory migrate ltm` reads and names every chat: a bot admin's command. L2's chat is
    # not one and is refused; L1's is made one through LangBot's API (Bots -> admins).
    refused = await chats["L2"].send("!memory migrate ltm --dry-run")
    suite.check(
        "`!memory migrate ltm` from a chat that is not a bot admin is refused, naming no chat",
        "[Memory] Only a bot admin can migrate" in refused
        and sessions["L1"] not in refused,
        refused[:160],
    )  # fmt: skip
    launcher_type, launcher_id = sessions["L1"].split("_", 1)
    admin = {"launcher_type": launcher_type, "launcher_id": launcher_id}
    await asyncio.to_thread(host.call, "POST", f"/api/v1/platform/bots/{bot}/admins", json=admin)
    await dry_runs(suite, chats["L1"], scope)
    first = migrate_all(suite, "first run")
    check_first(suite, first, stored, bot, sessions)
    for key in KEYS:
        await settle(host, ids["kb"], bot, sessions[key], OWN[key][1])
        migrated = [e.id for e in episodes_of(suite, bot, sessions[key])]
        await injected_turn(suite, chats[key], key, migrated)
        snapshot = f"inj:{scope[key]}"  # LongTermMemory's own record of its last injection
        untouched = steps.storage_rows(suite).get(snapshot) == before[snapshot]
        suite.check(
            f"LongTermMemory, unbound, injected nothing in chat {key}'s turn after the switch",
            untouched,
            f"its {snapshot[:60]}... snapshot unchanged: {untouched}",
        )
    await second_runs(suite, chats["L1"], bot, sessions, exports)


async def dry_runs(suite: SuiteContext, chat: Chat, scope: dict[str, str]) -> None:
    """Both ways count per chat and write nothing: MemVault's `!memory migrate ltm --dry-run`
    (its L2 only: a plugin cannot read another's storage) and the CLI's, from the data folder."""
    reply = await chat.send("!memory migrate ltm --dry-run")
    cli = migrate_all(suite, "dry run", dry_run=True)
    counts = {k: (cli["chats"].get(s) or {}) for k, s in scope.items()}
    bot = scope["L1"].split(":", 1)[0]
    written = sum(len(episodes_of(suite, bot, s.split(":", 1)[1])) for s in scope.values())
    written += sum(1 for _ in (suite.vault_root / "bots" / bot).rglob("speakers/*.yaml"))
    suite.check(
        "the migration's dry runs count one memory per chat (the CLI: and one profile) and "
        "write nothing",
        all(f"chat {s}: 1 new, 0 already imported, 0 refused" in reply for s in scope.values())
        and "dry run" in reply
        and all(c.get("imported") == 1 and c.get("profiles") == 1 for c in counts.values())
        and written == 0,
        f"plugin: {reply[-400:]!r}; CLI per chat "
        f"{ {k: (c.get('imported'), c.get('profiles')) for k, c in counts.items()} }; "
        f"memories and speaker profiles written {written}",
    )  # fmt: skip


def check_first(
    suite: SuiteContext,
    first: dict[str, Any],
    stored: dict[str, Any],
    bot: str,
    sessions: dict[str, str],
) -> None:
    by_user = {
        str((v.get("metadata") or {}).get("user_key")): str(v.get("id")) for v in stored["vectors"]
    }
    for key in KEYS:
        chat = first["chats"].get(f"{bot}:{sessions[key]}") or {}
        episodes = episodes_of(suite, bot, sessions[key])
        origin = [dict(e.extra).get("imported_from") for e in episodes]
        want = by_user.get(f"{bot}:{sessions[key]}")
        suite.check(
            f"`memvault migrate ltm` brought chat {key}'s LongTermMemory profile and memory in "
            "one go, the memory keeping LongTermMemory's id (extra.imported_from)",
            (chat.get("imported"), chat.get("profiles")) == (1, 1) and len(episodes) == 1
            and OWN[key][1] in episodes[0].body and origin == [want],
            f"(imported, profiles) {(chat.get('imported'), chat.get('profiles'))}; episodes "
            f"{[e.body for e in episodes]}; imported_from {origin} (LongTermMemory's id {want})",
        )  # fmt: skip


async def settle(host: Host, kb: str, bot: str, session: str, want: str) -> None:
    """Until MemVault's retrieve (the host's KB API) answers with `want` in the chat's scope."""
    settings = {"top_k": 5, "session_name": session, "bot_uuid": bot, "sender_id": "suite-settle"}
    body = {"query": want, "retrieval_settings": settings}
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        found = await asyncio.to_thread(
            host.call, "POST", f"/api/v1/knowledge/bases/{kb}/retrieve", json=body
        )
        if want in json.dumps(found, ensure_ascii=False):
            return
        await asyncio.sleep(0.5)
    raise SuiteError(f"MemVault's index never had the migrated {want!r} ({session}) in 90s")


async def injected_turn(suite: SuiteContext, chat: Chat, key: str, migrated: list[str]) -> None:
    """The chat's history holds what its person said (the two statements), so the memory is
    asserted by the migrated episode's id in MemVault's block, the profile by its block.
    MemVault's headings are LongTermMemory's (templates/prompts_en.yaml), so one profile
    message is the proof that only one of them injected."""
    turn = await suite.ask(chat, QUESTION[key])
    seen = suite.seen(turn, f"{key}: {QUESTION[key]} (after the LTM migration)", other(key))
    texts = turn.requests[0].texts()
    heads = [t for r, t in texts if r == "system" and t.startswith(PROFILE_HEAD)]
    suite.check(
        f"after the migration, chat {key}'s next request carries its LongTermMemory profile in "
        "MemVault's profile block and its memory in MemVault's memory block, nothing of the "
        "other chat",
        OWN[key][0] in seen.profile and len(heads) == 1 and len(migrated) == 1
        and list(seen.block_ids) == migrated and seen.times(migrated[0]) == 1
        and seen.other_chat == 0,
        f"profile block {seen.profile[-200:]!r}; profile messages {len(heads)}; block ids "
        f"{list(seen.block_ids)} (migrated {migrated}); all ids {list(seen.ids)}; other "
        f"chat's texts x{seen.other_chat}",
    )  # fmt: skip


async def second_runs(
    suite: SuiteContext,
    chat: Chat,
    bot: str,
    sessions: dict[str, str],
    exports: dict[str, list[Any]],
) -> None:
    """Every way again, after the migration and the turns: nothing is added."""
    again = migrate_all(suite, "second run")
    reply = await chat.send("!memory migrate ltm")
    files = {k: import_files(suite, bot, sessions[k], exports[k], "after") for k in KEYS}
    episodes = {k: len(episodes_of(suite, bot, sessions[k])) for k in KEYS}
    two_step = {k: [(r["imported"], r["profiles"]) for r in v] for k, v in files.items()}
    suite.check(
        "a second migration run adds nothing (`memvault migrate ltm`, `!memory migrate ltm`, "
        "and `memvault import` of LongTermMemory's own export files)",
        (again.get("imported"), again.get("profiles")) == (0, 0)
        and "imported 0 memories and 0 profiles" in reply
        and all(v == [(0, 0), (0, 0)] for v in two_step.values())
        and episodes == {"L1": 1, "L2": 1},
        f"CLI imported {again.get('imported')}, profiles {again.get('profiles')}, already "
        f"{again.get('already_present')}; plugin {reply[-200:]!r}; import of the export files "
        f"(imported, profiles) {two_step}; episodes per chat {episodes}",
    )  # fmt: skip
