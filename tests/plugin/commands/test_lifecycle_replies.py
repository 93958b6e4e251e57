"""Issue 20 items 3 and 4 in the chat: `!memory restore` says when a newer memory keeps the
old one superseded (and recall never brings it back); `!memory forget` of a hand-written
file holding a secret says where the copy outside git is."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from indexer.retrieval.search_query import SearchQuery
from tests.cli.test_secret_never_in_git import SECRET, git_objects_holding, hand_written
from tests.plugin.commands.test_command import chat, command, remember, say

T0 = datetime(2026, 3, 1, tzinfo=UTC)


async def test_restore_of_the_stale_memory_says_it_stays_superseded(plugin, host):
    cmd = command(plugin)
    vault, engine = plugin.memory.require()
    berlin = remember(plugin, "Eve lives in Berlin", key="city", created_at=T0)
    munich = remember(plugin, "Eve moved to Munich", key="city", created_at=T0 + timedelta(30))
    await say(cmd, host, f"!memory archive {munich.id}")
    await say(cmd, host, f"!memory archive {berlin.id}")
    reply = await say(cmd, host, f"!memory restore {berlin.id}")
    assert reply.startswith(f"[Memory] Episode {berlin.id} not restored: ")
    assert f"the newer memory {munich.id} replaces it" in reply
    reply = await say(cmd, host, f"!memory restore {munich.id}")
    assert reply == f"[Memory] Episode {munich.id} status set to active."
    found = [
        r.doc.episode_id for r in engine.search(SearchQuery("Where does Eve live", chat(plugin)))
    ]
    assert munich.id in found and berlin.id not in found


async def test_forget_of_a_secret_bearing_file_says_where_the_copy_is(plugin, host):
    cmd = command(plugin)
    vault, _ = plugin.memory.require()
    path = hand_written(vault, chat(plugin))
    reply = await say(cmd, host, "!memory forget ep_20260101_hand01")
    assert reply.startswith("[Memory] Episode ep_20260101_hand01 deleted; ")
    assert ".memvault/forgotten/" in reply and SECRET not in reply
    assert not path.exists() and git_objects_holding(vault.root, SECRET) == []


async def test_bulk_archive_in_the_chat_names_the_file_it_left_and_archives_the_rest(plugin, host):
    cmd = command(plugin)
    vault, _ = plugin.memory.require()
    path = hand_written(vault, chat(plugin), extra="tags: [travel]\n")
    before = path.read_bytes()
    clean = remember(plugin, "Eve flies to Rome in May", tags=["travel"])
    preview = await say(cmd, host, "!memory archive --tag travel")
    assert clean.id in preview and f"{vault.layout.rel(path)}:7: holds what looks like" in preview
    reply = await say(cmd, host, "!memory archive --tag travel --yes")
    assert reply.startswith("[Memory] Archived 1 memories (tag travel) in one commit.")
    assert "Left as it is: " in reply and SECRET not in reply
    assert path.read_bytes() == before and git_objects_holding(vault.root, SECRET) == []
    assert vault.find_episode(chat(plugin), clean.id).episode.status == "archived"
