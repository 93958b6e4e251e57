"""Coming from LongTermMemory, on the real host (issue 24 item 1): LangBot's official
LongTermMemory plugin, from its public source (hostsuite/ltm/fixture.py), stores L1 and L2
through its OWN tools in two chats; its own `!memory profile` / `!memory list` show them;
MemVault's migration brings them over (the documented two-step: LongTermMemory's `!memory
export` and `!memory export l2` in each chat, then `memvault import` of those files exactly as
they came); the next turn in each chat, asserted on the request body the FAKE LLM logged,
carries that chat's migrated profile and memory in MemVault's blocks and nothing of the other
chat; a second migration run adds nothing.

LongTermMemory and MemVault both register `!memory`, so the round trip has its own pipeline
and Page Bot, bound to LongTermMemory first and to MemVault after the migration (same
pipeline, so the same sender ids); LongTermMemory is detached at the end, before the phases
after this one chat in the suite's main pipeline, which binds every plugin.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hostsuite.chat import Chat
from hostsuite.framework import phase
from hostsuite.host import Host, SuiteError, log
from hostsuite.llm_requests import PROFILE_HEAD
from hostsuite.local_agent import RUNNER_ID
from hostsuite.ltm import host_steps as steps
from hostsuite.ltm.fixture import LTM_COMMIT, LTM_ID, LtmFixtureError

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
ALL_STATUSES = ["active", "superseded", "archived", "deleted"]


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
        suite.procs.stop("ltm")  # its `!memory` must not answer in the later phases' chats
        suite.facts.setdefault("ltm", {})["seconds"] = round(time.monotonic() - started, 1)


async def round_trip(suite: SuiteContext, host: Host, ids: dict[str, str]) -> None:
    embedding = await asyncio.to_thread(steps.embedding_model, host, ids["provider"])
    kb = await asyncio.to_thread(steps.create_ltm_kb, host, steps.ltm_engine(host), embedding)
    pipeline = await asyncio.to_thread(steps.create_pipeline, host, ids["llm"], kb)
    await asyncio.to_thread(steps.bind_plugins, host, pipeline, LTM_ID)
    bot = suite.add_page_bot(host, pipeline, "ltm round trip bot")
    chats = {k: Chat(host, bot, str(uuid.uuid4()), k) for k in KEYS}
    sessions = {}
    for key in KEYS:
        sessions[key] = (await suite.ask(chats[key], f"hello from {key}")).session
    facts = {"commit": LTM_COMMIT, "bot": bot, "kb": kb, "pipeline": pipeline, "sessions": sessions}
    suite.facts["ltm"] = facts
    scope = {k: f"{bot}:{s}" for k, s in sessions.items()}  # LongTermMemory's session_key
    # A chat of its own: what the tool turns say must not become L1's or L2's candidates.
    await tool_attempts(suite, Chat(host, bot, str(uuid.uuid4()), "T"))
    for key in KEYS:
        for text in SAID[key]:
            await suite.ask(chats[key], text)
    for key in KEYS:
        await ltm_listing(suite, host, chats[key], key, kb, scope[key])
    stored = record_facts(suite, host, facts)
    exports = {k: await export(suite, host, chats[k], k, kb, scope[k]) for k in KEYS}
    first = {k: migrate(suite, bot, sessions[k], exports[k], "first") for k in KEYS}
    check_first(suite, first, stored, bot, sessions)

    before = steps.storage_rows(suite)  # the `!memory export` turns updated its snapshots
    await asyncio.to_thread(suite.set_runner_kbs, host, pipeline, RUNNER_ID, [ids["kb"]])
    await asyncio.to_thread(steps.bind_plugins, host, pipeline, suite.memvault_id)
    for key in KEYS:
        await settle(host, ids["kb"], bot, sessions[key], OWN[key][1])
        migrated = [e.id for e in episodes_of(suite, bot, sessions[key])]
        snapshot = f"inj:{scope[key]}"  # LongTermMemory's own record of its last injection
        await injected_turn(suite, chats[key], key, migrated)
        untouched = steps.storage_rows(suite).get(snapshot) == before[snapshot]
        suite.check(
            f"LongTermMemory, unbound, injected nothing in chat {key}'s turn after the switch",
            untouched,
            f"its {snapshot[:60]}... snapshot unchanged: {untouched}",
        )

    again = {k: migrate(suite, bot, sessions[k], exports[k], "second") for k in KEYS}
    counts = {k: [(r["imported"], r["profiles"]) for r in again[k]] for k in KEYS}
    episodes = {k: len(episodes_of(suite, bot, sessions[k])) for k in KEYS}
    suite.check(
        "a second migration run adds nothing (no episode, no profile, in either chat)",
        all(c == [(0, 0), (0, 0)] for c in counts.values()) and episodes == {"L1": 1, "L2": 1},
        f"(imported, profiles) per file {counts}; skipped "
        f"{ {k: [r['skipped'] + r['profiles_skipped'] for r in again[k]] for k in KEYS} }; "
        f"episodes in MemVault per chat {episodes}",
    )


async def tool_attempts(suite: SuiteContext, chat: Chat) -> None:
    """LongTermMemory's own `update_profile` and `remember` tools through LocalAgent's tool
    loop (the FAKE LLM scripts the calls). On 4.11.2 they refuse (its injector empties the
    query's `_knowledge_base_uuids`, which the host's pipeline-KB check reads): said as a NOTE
    with what they answered; the data comes from its candidate path below."""
    calls = (
        ("update_profile", {"field": "traits", "action": "add", "value": "Mira keeps bees"}),
        ("remember", {"content": "Mira sold forty jars of honey"}),
    )
    answers = []
    for name, args in calls:
        turn = await suite.ask(chat, f"tool {name} {json.dumps(args)}")
        answers.append(f"{name}: {turn.reply.split('TOOL-RESULT', 1)[-1].strip()[:120]!r}")
    suite.note("LongTermMemory's own tools on LangBot 4.11.2", "; ".join(answers))


async def ltm_listing(
    suite: SuiteContext, host: Host, chat: Chat, key: str, kb: str, scope: str
) -> None:
    """What LongTermMemory itself shows: `!memory profile` (L1) and `!memory candidates`
    (what its extractor took and applied); L2 through its Memory Console's episode list, its
    own listing that works on 4.11.2 (`!memory list` refuses there, as its tools do)."""
    profile = await chat.send("!memory profile")
    candidates = await chat.send("!memory candidates --all-statuses")
    body = {"collection_id": kb, "user_key": scope, "page_size": 50, "statuses": ALL_STATUSES}
    listed = await asyncio.to_thread(steps.console, host, "/episodes/list", body)
    texts = [str(e.get("content")) for e in listed.get("episodes") or []]
    shown = profile + candidates + json.dumps(texts)
    pref, plan = OWN[key]
    suite.check(
        f"LongTermMemory's own listings show chat {key}'s L1 (`!memory profile`) and L2 "
        "(its console's episode list), and nothing of the other chat",
        pref in profile and len(texts) == 1 and plan in texts[0]
        and candidates.count("accepted") == 2 and not any(m in shown for m in other(key)),
        f"profile {profile[-200:]!r}; candidates {candidates[-240:]!r}; episodes {texts}",
    )  # fmt: skip


def record_facts(suite: SuiteContext, host: Host, facts: dict[str, Any]) -> dict[str, Any]:
    """What LongTermMemory stored, where it lies (the ltm-import helper builds against it)."""
    rows = steps.storage_rows(suite)
    vectors = steps.ltm_vectors(host, facts["kb"])
    stored = {**facts, "storage_rows": rows, "vectors": vectors}
    (suite.work / "ltm_facts.json").write_text(json.dumps(stored, indent=2, ensure_ascii=False))
    keys = [f"{facts['bot']}:{s}" for s in facts["sessions"].values()]
    users = sorted(str((v.get("metadata") or {}).get("user_key")) for v in vectors)
    users = [u for u in users if u in keys]  # the tool chat's own candidates are not L1/L2's
    prefs = {
        k: any(
            r.startswith(f"pp:{k}:") and (rows[r]["value"] or {}).get("preferences") for r in rows
        )
        for k in keys
    }
    suite.check(
        "LongTermMemory stored each chat's L1 in plugin storage (pp:<session_key>:<sender>) and "
        "its L2 as one vector with the chat's user_key",
        all(prefs.values()) and users == sorted(keys),
        f"storage keys {sorted(rows)}; speaker profile with preferences {prefs}; "
        f"vector user_keys {users}",
    )
    facts["storage_keys"] = sorted(rows)
    return stored


async def export(
    suite: SuiteContext, host: Host, chat: Chat, key: str, kb: str, scope: str
) -> list[Path]:
    """LongTermMemory's own exports of this chat, saved as the files an operator would keep:
    `!memory export` (L1) and its console's episode export (L2; the same JSON `!memory export
    l2` gives where that command works)."""
    folder = suite.work / "ltm_export"
    folder.mkdir(exist_ok=True)
    profiles = steps.export_json(await chat.send("!memory export"), f"chat {key} `!memory export`")
    body = {"collection_id": kb, "scope_key": scope, "user_key": scope, "statuses": ALL_STATUSES}
    episodes = await asyncio.to_thread(steps.console, host, "/episodes/export", body)
    files = []
    for name, data in (("profiles", profiles), ("episodes", episodes)):
        path = folder / f"{key}_{name}.json"
        path.write_text(json.dumps(data, indent=2, ensure_ascii=False), "utf-8")
        files.append(path)
    return files


def migrate(
    suite: SuiteContext, bot: str, session: str, files: list[Path], run: str
) -> list[dict[str, Any]]:
    """`memvault import` of each export file into the chat's scope, as documented (the repo
    venv's; MEMVAULT_CLI names another, e.g. a branch's, to try its import on the host)."""
    results = []
    memvault = os.environ.get("MEMVAULT_CLI") or Path(sys.executable).with_name("memvault")
    for path in files:
        argv = [str(memvault), "import", "--vault", str(suite.vault_root), "--json",
                "--bot", bot, "--session", session, str(path)]  # fmt: skip
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        log(f"memvault import {path.name} ({run} run): exit {proc.returncode}")
        try:
            result = json.loads(proc.stdout)
        except ValueError as exc:
            raise SuiteError(
                f"`memvault import {path.name}` ({run} run) exit {proc.returncode}: "
                f"{(proc.stderr or proc.stdout)[-600:]}"
            ) from exc
        if proc.returncode != 0:
            raise SuiteError(f"`memvault import {path.name}` ({run} run): {proc.stderr[-600:]}")
        results.append({"imported": 0, "skipped": 0, "profiles": 0, "profiles_skipped": 0,
                        **result})  # fmt: skip
    return results


def episodes_of(suite: SuiteContext, bot: str, session: str) -> list[Any]:
    from vault.layout.keys import ScopeId
    from vault.writes.operations import Vault

    return [s.episode for s in Vault(suite.vault_root).load_episodes(ScopeId(bot, session))[0]]


def check_first(
    suite: SuiteContext,
    first: dict[str, list[dict[str, Any]]],
    stored: dict[str, Any],
    bot: str,
    sessions: dict[str, str],
) -> None:
    by_user = {
        str((v.get("metadata") or {}).get("user_key")): str(v.get("id")) for v in stored["vectors"]
    }
    for key in KEYS:
        episodes = episodes_of(suite, bot, sessions[key])
        origin = [dict(e.extra).get("imported_from") for e in episodes]
        want = by_user.get(f"{bot}:{sessions[key]}")
        counts = [(r["imported"], r["profiles"]) for r in first[key]]
        suite.check(
            f"MemVault's migration brought chat {key}'s LongTermMemory profile and episode, "
            "the episode keeping LongTermMemory's id (extra.imported_from)",
            counts == [(0, 1), (1, 0)] and len(episodes) == 1
            and OWN[key][1] in episodes[0].body and origin == [want],
            f"(imported, profiles) per file {counts}; episodes {[e.body for e in episodes]}; "
            f"imported_from {origin} (LongTermMemory's id {want})",
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
    heads = [t for r, t in turn.requests[0].texts() if r == "system" and t.startswith(PROFILE_HEAD)]
    pref = OWN[key][0]
    suite.check(
        f"after the migration, chat {key}'s next request carries its LongTermMemory profile in "
        "MemVault's profile block and its memory in MemVault's memory block, nothing of the "
        "other chat",
        pref in seen.profile and len(heads) == 1 and len(migrated) == 1
        and list(seen.block_ids) == migrated and seen.times(migrated[0]) == 1
        and seen.other_chat == 0,
        f"profile block {seen.profile[-200:]!r}; profile messages {len(heads)}; block ids "
        f"{list(seen.block_ids)} (migrated {migrated}); all ids {list(seen.ids)}; other "
        f"chat's texts x{seen.other_chat}",
    )  # fmt: skip
