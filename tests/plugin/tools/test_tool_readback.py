"""The plugin's writes read back and its acts by id never guess (issue 10, items 6 and 7):
the tools and `!memory` through the SDK and the fake host, over a real vault and indexes."""

from __future__ import annotations

import json

import pytest

from tests.plugin.commands.test_command import command, say
from tests.plugin.recall_parse import ids as recalled_ids
from tests.plugin.recall_parse import parse as parse_recall
from tests.plugin.tools.test_tools import call
from vault.health.check import check_vault

KB = "kb-memvault"


@pytest.fixture
def opted_in(host):
    host.register_memory_kb(KB)
    return host


async def test_a_blank_sender_id_is_no_speaker_and_the_memory_reads_back(plugin, opted_in):
    opted_in.query_vars["sender_id"] = "   "
    content = "the office plant needs water on fridays"
    assert await call(plugin, opted_in, "remember", {"content": content}) == (
        f"Remembered: {content}"
    )
    vault, _ = plugin.memory.require()
    (stored,) = vault.list_episodes(plugin.memory.scope("group_123", "bot-1")).items
    assert stored.episode.speaker is None
    assert check_vault(vault.root).problems == ()
    found = await call(plugin, opted_in, "recall_memory", {"query": "office plant"})
    assert recalled_ids(found) == [stored.episode.id]


@pytest.mark.parametrize("launcher_id", ["1.swp", "9.tmp", "x~"])
async def test_a_chat_id_shaped_like_an_editor_file_is_recalled(plugin, opted_in, launcher_id):
    content = f"chat {launcher_id} likes the harbour ferry"
    remembered = await call(plugin, opted_in, "remember", {"content": content}, launcher_id)
    assert remembered == f"Remembered: {content}"
    _, found = parse_recall(
        await call(plugin, opted_in, "recall_memory", {"query": "harbour ferry"}, launcher_id)
    )
    assert [f.text for f in found] == [content]


async def test_forget_tool_and_command_refuse_a_duplicated_id(plugin, opted_in):
    content = "the wifi password is on the fridge"
    await call(plugin, opted_in, "remember", {"content": content})
    vault, _ = plugin.memory.require()
    scope = plugin.memory.scope("group_123", "bot-1")
    (stored,) = vault.list_episodes(scope).items
    copy = stored.path.with_name("copy.md")
    copy.write_bytes(stored.path.read_bytes().replace(b"fridge", b"router"))
    files = {p: p.read_bytes() for p in (stored.path, copy)}
    both = (stored.rel, vault.layout.rel(copy))

    reply = await call(plugin, opted_in, "forget", {"episode_id": stored.episode.id})
    assert reply.startswith("Error: ") and all(rel in reply for rel in both), reply
    cmd = command(plugin)
    for verb in ("forget", "archive", "show"):
        text = await say(cmd, opted_in, f"!memory {verb} {stored.episode.id}")
        assert all(rel in text for rel in both), (verb, text)
    assert {p: p.read_bytes() for p in files} == files


async def test_forget_tool_says_it_kept_a_hand_edit(plugin, opted_in):
    await call(plugin, opted_in, "remember", {"content": "lunch is at noon"})
    vault, _ = plugin.memory.require()
    (stored,) = vault.list_episodes(plugin.memory.scope("group_123", "bot-1")).items
    stored.path.write_bytes(stored.path.read_bytes().replace(b"noon", b"one (hand edit)"))
    reply = await call(plugin, opted_in, "forget", {"episode_id": stored.episode.id})
    assert reply.startswith(f"Deleted episode {stored.episode.id}.") and "committed first" in reply
    assert not stored.path.exists()


async def test_deleting_a_kb_document_leaves_a_duplicated_id_alone(plugin, host):
    from tests.plugin.knowledge.test_knowledge_engine import KB as DOC_KB
    from tests.plugin.knowledge.test_knowledge_engine import engine_for, l2_export, upload
    from tests.plugin.knowledge.test_knowledge_engine import scope as chat_scope

    kb = engine_for(plugin)
    await kb.ingest(
        upload(host, "memory.json", json.dumps(l2_export()).encode(), mime="application/json")
    )
    vault, _ = plugin.memory.require()
    first, second = vault.list_episodes(chat_scope(), page_size=50).items
    copy = first.path.with_name("my-copy.md")
    copy.write_bytes(first.path.read_bytes() + b"\nmy own note\n")
    files = {p: p.read_bytes() for p in (first.path, copy)}
    assert await kb.delete_document(DOC_KB, "doc-1") is True
    assert {p: p.read_bytes() for p in files} == files  # the ambiguous id: both kept
    assert not second.path.exists()  # the document's other memory is gone
