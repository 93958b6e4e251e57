"""`!memory migrate ltm`: LongTermMemory's memories of every chat, read through the host's
vector API (as LangBot 4.11.2 lets any plugin of the workspace list a knowledge base), in one
go; a second run adds nothing; the profiles' way is said. FAKE host (tests/plugin/fakehost.py)
with a Chroma-like store answering vector_list as langbot's chroma.py list_by_filter does;
records from LongTermMemory's code (tests/vault/ltm/ltm_shapes.py)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.plugin.commands.test_command import command
from tests.vault.ltm.ltm_shapes import L2_EPISODES, vector_item
from vault.layout.keys import ScopeId

LTM_KB = "7c1f0e2a-9b8d-4c6e-a5f4-3b2a1c0d9e8f"
DOCS_KB = "kb-docs"  # an ordinary knowledge base of the workspace: never taken for LTM's


class ChromaLike:
    """vector_list as langbot 4.11.2 pkg/vector/vdbs/chroma.py answers it: items {id,
    document, metadata}, total = the collection's count when unfiltered."""

    def __init__(self, rows: dict[str, list[dict[str, Any]]]) -> None:
        self.rows = rows
        self.listed: list[tuple[str, int, int]] = []

    async def vector_list(self, kb: str, filters: Any, limit: int, offset: int) -> dict[str, Any]:
        self.listed.append((kb, limit, offset))
        rows = self.rows.get(kb, [])
        return {"items": rows[offset : offset + limit], "total": -1 if filters else len(rows)}


async def say(cmd: Any, host: Any, text: str, launcher_id: str = "123", admin: bool = True) -> str:
    """The one reply to `text`, sent from a chat that is (or is not) an admin of the bot."""
    ctx = host.command(text, launcher_id=launcher_id)
    ctx.privilege = 2 if admin else 1  # LangBot: 2 when the chat is an admin of the bot
    replies = [r.text async for r in cmd._execute(ctx)]
    assert len(replies) == 1, replies
    return replies[0]


@pytest.fixture
def ltm_host(host):
    group = [vector_item(e, "bot-1:group_123") for e in L2_EPISODES]
    other = [
        vector_item(L2_EPISODES[0] | {"id": f"{n:012x}", "content": f"fact {n}"}, "bot-1:group_456")
        for n in range(130)  # more than one page
    ]
    docs = [{"id": "chunk1", "document": "manual", "metadata": {"file_id": "f1", "text": "x"}}]
    host.vector_db = ChromaLike({LTM_KB: group + other, DOCS_KB: docs})
    host.vector_kbs = {LTM_KB, DOCS_KB}
    host.workspace_kbs += [
        {"uuid": LTM_KB, "name": "memory (LongTermMemory)", "description": ""},
        {"uuid": DOCS_KB, "name": "docs", "description": ""},
    ]
    return host


async def test_every_chat_comes_across_and_a_second_run_adds_nothing(plugin, ltm_host):
    cmd = command(plugin)
    reply = await say(cmd, ltm_host, "!memory migrate ltm --dry-run")
    assert f"Read 136 row(s) of {LTM_KB}." in reply
    assert "chat bot-1:group_123: 5 new, 0 already imported, 0 refused, 1 deleted" in reply
    assert "chat bot-1:group_456: 130 new" in reply and "dry run: nothing written" in reply
    assert "memvault migrate ltm --langbot-data" in reply  # where the profiles come from
    vault, _ = plugin.memory.require()
    assert vault.load_episodes(ScopeId("bot-1", "group_123"))[0] == []
    reply = await say(cmd, ltm_host, "!memory migrate ltm")
    assert "imported 135 memories" in reply
    group = {s.episode.id for s in vault.load_episodes(ScopeId("bot-1", "group_123"))[0]}
    assert group == {e["id"] for e in L2_EPISODES if e["status"] != "deleted"}
    assert len(vault.load_episodes(ScopeId("bot-1", "group_456"))[0]) == 130
    again = await say(cmd, ltm_host, "!memory migrate ltm")
    assert "imported 0 memories" in again and "135 already imported" in again
    listed = {kb for kb, _, _ in ltm_host.vector_db.listed}
    assert "kb-memvault" not in listed  # MemVault's own knowledge base is never read


async def test_the_migrated_memory_is_found_in_its_chat_only(plugin, ltm_host):
    cmd = command(plugin)
    await say(cmd, ltm_host, "!memory migrate ltm")
    found = await say(cmd, ltm_host, "!memory search Beijing conference")
    assert "3f9a1c2b7d4e" in found
    elsewhere = await say(cmd, ltm_host, "!memory show 3f9a1c2b7d4e", launcher_id="456")
    assert "not found" in elsewhere.lower() or "no memory" in elsewhere.lower()


async def test_a_named_knowledge_base_and_bad_usage(plugin, ltm_host):
    cmd = command(plugin)
    assert (await say(cmd, ltm_host, "!memory migrate")).startswith("Usage: !memory migrate ltm")
    assert (await say(cmd, ltm_host, "!memory migrate ltm --kb")).startswith("Usage:")
    reply = await say(cmd, ltm_host, f"!memory migrate ltm --dry-run --kb {LTM_KB}")
    assert "chat bot-1:group_123: 5 new" in reply
    ltm_host.workspace_kbs = ltm_host.workspace_kbs[:1] + ltm_host.workspace_kbs[2:]  # docs only
    reply = await say(cmd, ltm_host, "!memory migrate ltm")
    assert reply.startswith("[Memory] No LongTermMemory knowledge base found")


async def test_only_a_bot_admin_can_migrate_and_a_refusal_reads_and_writes_nothing(
    plugin, ltm_host
):
    cmd = command(plugin)
    for text in ("!memory migrate ltm --dry-run", "!memory migrate ltm"):
        reply = await say(cmd, ltm_host, text, admin=False)
        assert reply.startswith("[Memory] Only a bot admin can migrate"), reply
        assert "group_456" not in reply  # another chat is never named to a non-admin
    assert ltm_host.vector_db.listed == []  # LongTermMemory's knowledge base was not read
    vault, _ = plugin.memory.require()
    assert vault.load_episodes(ScopeId("bot-1", "group_456"))[0] == []
