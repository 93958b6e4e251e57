"""What LongTermMemory itself does and shows in the real-host round trip (hostsuite/ltm/phase.py):
its own tools tried (they refuse on LangBot 4.11.2), what it shows of each chat through its own
command and console, what it stored read where it lies, and its own exports saved as files.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hostsuite.chat import Chat
from hostsuite.host import Host
from hostsuite.ltm import host_steps as steps

if TYPE_CHECKING:
    from hostsuite.framework import SuiteContext

ALL_STATUSES = ["active", "superseded", "archived", "deleted"]


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
    suite: SuiteContext,
    host: Host,
    chat: Chat,
    key: str,
    where: tuple[str, str],
    own: tuple[str, str],
    others: tuple[str, ...],
) -> None:
    """What LongTermMemory itself shows: `!memory profile` (L1) and `!memory candidates`
    (what its extractor took and applied); L2 through its Memory Console's episode list, its
    own listing that works on 4.11.2 (`!memory list` refuses there, as its tools do)."""
    kb, scope = where
    profile = await chat.send("!memory profile")
    candidates = await chat.send("!memory candidates --all-statuses")
    body = {"collection_id": kb, "user_key": scope, "page_size": 50, "statuses": ALL_STATUSES}
    listed = await asyncio.to_thread(steps.console, host, "/episodes/list", body)
    texts = [str(e.get("content")) for e in listed.get("episodes") or []]
    shown = profile + candidates + json.dumps(texts)
    pref, plan = own
    suite.check(
        f"LongTermMemory's own listings show chat {key}'s L1 (`!memory profile`) and L2 "
        "(its console's episode list), and nothing of the other chat",
        pref in profile and len(texts) == 1 and plan in texts[0]
        and candidates.count("accepted") == 2 and not any(m in shown for m in others),
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
