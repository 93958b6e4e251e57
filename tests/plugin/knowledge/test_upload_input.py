"""Knowledge-base uploads and `!memory import l2` with hostile or undated input (issue 20,
items 7 and 8): a JSON upload nested past the limits fails with a message and writes
nothing; an uploaded Markdown episode without created_at is dated at the upload, so the
consolidation right after does not take it for a memory from 1970."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta

import pytest
from langbot_plugin.api.entities.builtin.rag.enums import DocumentStatus

from indexer.jobs.consolidate import current_selection
from indexer.jobs.consolidate_select import ConsolidateSettings
from tests.plugin.commands.test_command import chat, command, say
from tests.plugin.knowledge.test_knowledge_engine import engine_for, scope, upload
from vault.writes.new_episode import NewEpisode


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("deep.json", nested(1500).encode(), "deep.json nests deeper than 40 levels"),
        (
            "extra.json",
            ('[{"content": "x", "extra": {"a": ' + nested(600) + "}}]").encode(),
            "the value at $[0].extra.a",
        ),
        ("big.json", ('[{"content": "x", "importance": 1' + "0" * 4400 + "}]").encode(), "digits"),
        ("five.json", b'{"episodes": [{"content": 5}]}', "episode 1: content must be a text"),
        (
            "name.json",
            b'[{"content": "x", "sender_id": "u1", "sender_name": ["A"]}]',
            "sender_name",
        ),
    ],
)
async def test_a_hostile_json_upload_fails_with_a_message_and_writes_nothing(
    plugin, host, name, data, message
):
    result = await engine_for(plugin).ingest(upload(host, name, data, doc="doc-h"))
    assert result.status == DocumentStatus.FAILED
    assert message in (result.error_message or ""), result.error_message
    vault, _ = plugin.memory.require()
    assert list(vault.layout.iter_vault_files()) == []


@pytest.mark.parametrize(
    ("json_text", "reply"),
    [
        (nested(1200), "nests deeper than 40 levels"),
        ('[{"content": 5}]', "episode 1: content must be a text in quotes (got the number 5)"),
        ('[{"content": "x", "tags": {"a": 1}}]', "episode 1: tags must be a list of texts"),
    ],
)
async def test_a_hostile_chat_import_is_refused_with_a_message(plugin, host, json_text, reply):
    answer = await say(command(plugin), host, f"!memory import l2 {json_text}")
    assert reply in answer and "internal" not in answer.lower(), answer
    vault, _ = plugin.memory.require()
    assert vault.load_episodes(chat(plugin))[0] == []


UNDATED = b"---\nimportance: 3\ntags: [notes]\n---\nThe wiki moved to the new server.\n"


async def test_an_undated_markdown_upload_is_dated_now_and_not_consolidated_as_old(plugin, host):
    vault, engine = plugin.memory.require()
    target = scope("group_U")
    long_ago = datetime.now(UTC) - timedelta(days=400)
    old = [
        vault.remember(NewEpisode(target, f"An old note number {n}", created_at=long_ago)).id
        for n in range(2)
    ]
    settings = {"import_scope": "bot-1:group_U"}
    before = datetime.now(UTC).replace(microsecond=0)
    result = await engine_for(plugin).ingest(upload(host, "note.md", UNDATED, settings=settings))
    assert result.status == DocumentStatus.COMPLETED and result.chunks_created == 1
    stored = {s.episode.id: s.episode for s in vault.load_episodes(target)[0]}
    (uploaded,) = (e for e in stored.values() if e.body.startswith("The wiki"))
    assert before <= uploaded.created_at <= datetime.now(UTC)
    assert uploaded.importance == 3 and uploaded.tags == ("notes",)  # the front matter kept
    cfg = ConsolidateSettings(duplicates=False)
    picked = current_selection(vault, engine, target, cfg, datetime.now(UTC))
    reasons = {p.id: p.reasons for p in picked.picks}
    assert set(old) <= set(reasons)  # the run does pick the really old ones
    assert uploaded.id not in reasons, reasons


async def test_a_hand_written_undated_file_is_dated_by_its_modification_time(plugin):
    """FORMAT.md: no created_at means the file's modification time (never 1970 unless the
    file's time really is): a note written two days ago is two days old, not ancient."""
    vault, engine = plugin.memory.require()
    target = scope("group_H")
    vault.remember(NewEpisode(target, "A first memory makes the chat"))
    hand = vault.layout.episodes_dir(target) / "hand.md"
    hand.write_text("A note a person wrote by hand\n", encoding="utf-8")
    stamp = (datetime.now(UTC) - timedelta(days=2)).replace(microsecond=0)
    os.utime(hand, (stamp.timestamp(), stamp.timestamp()))
    (note,) = (s.episode for s in vault.load_episodes(target)[0] if s.path == hand)
    assert note.created_at == stamp
    long_ago = datetime.now(UTC) - timedelta(days=400)
    old = [vault.remember(NewEpisode(target, f"Old {n}", created_at=long_ago)).id for n in range(2)]
    cfg = ConsolidateSettings(duplicates=False)
    picked = current_selection(vault, engine, target, cfg, datetime.now(UTC))
    assert set(old) <= set(picked.ids) and note.id not in picked.ids
