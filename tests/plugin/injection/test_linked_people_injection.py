"""One person across chats and platforms, through the plugin as LangBot drives it: the
SDK's real Command, Tool and PromptPreProcessing types with the FAKE host, over a real
vault with git and real indexes (tiny TEST FAKE embedder).

A bot admin links a QQ number and a Telegram id with `!memory link`; a key event opened
through the tool in a QQ-style group is then in the rendered prompt of the same person's
Telegram-style private chat with the same bot, and in no one else's; the Telegram chat can
note and close it; unlinked, or with linked_people off, nothing crosses.
"""

from __future__ import annotations

import subprocess

import pytest
from components.commands.memory import Memory

from tests.plugin.fakehost import FakeHost, started_plugin
from tests.plugin.injection.test_events_injection import as_speaker, block, ids, turn
from tests.plugin.tools.test_events_tools import KB, TYPES, call, opened_id
from vault.format.model import Speaker
from vault.layout.keys import ScopeId
from vault.writes.new_episode import NewEpisode

QQ_GROUP, QQ = "10001", "12345"  # a QQ group and a member's QQ number
TG = "777000111"  # the same person's Telegram id: their private chat is person_777000111
STRANGER = "555"  # someone else, with a private chat of their own


async def say(plugin, host: FakeHost, text: str, kind: str, launcher: str, admin: bool) -> str:
    cmd = Memory()
    cmd.plugin = plugin
    ctx = host.command(text, launcher_type=kind, launcher_id=launcher)
    ctx.privilege = 2 if admin else 1  # LangBot: 2 when the chat is an admin of the bot
    replies = [r.text async for r in cmd._execute(ctx)]
    assert len(replies) == 1, replies
    return replies[0]


async def started(host: FakeHost, root, on: bool = True):
    host.register_memory_kb(KB)
    return await started_plugin(host, root, event_types=TYPES, linked_people=on)


@pytest.fixture
async def linked(tmp_path, host):
    plug = await started(host, tmp_path / "memory")
    as_speaker(host, "bot-1", TG)
    text = await say(plug, host, f"!memory link {QQ} alice", "person", TG, admin=True)
    assert text.startswith(f"[Memory] Linked {QQ} to person alice"), text
    text = await say(plug, host, f"!memory link {TG} alice", "person", TG, admin=True)
    assert f"sender ids: {QQ}, {TG}" in text, text
    yield plug
    plug.memory.close()


async def open_in_qq_group(plugin, host: FakeHost, summary: str = "Dentist Tuesday 3pm") -> str:
    as_speaker(host, "bot-1", QQ)
    return await opened_id(plugin, host, summary=summary, kind="group", launcher=QQ_GROUP)


async def shown(plugin, host: FakeHost, bot: str, sender: str, kind: str, launcher: str) -> set:
    as_speaker(host, bot, sender)
    return ids(block(await turn(plugin, host, kind, launcher)))


async def test_a_qq_group_event_is_in_the_same_persons_telegram_private_prompt_only(linked, host):
    eid = await open_in_qq_group(linked, host)
    # the same person, on Telegram, in their private chat with the same bot: in the prompt
    as_speaker(host, "bot-1", TG)
    prompt = await turn(linked, host, "person", TG)
    assert ids(block(prompt)) == {eid}
    assert "Dentist Tuesday 3pm" in block(prompt)
    # and where the QQ number speaks (the group, its own private chat)
    assert await shown(linked, host, "bot-1", QQ, "group", QQ_GROUP) == {eid}
    assert await shown(linked, host, "bot-1", QQ, "person", QQ) == {eid}
    # nowhere else: another person in the same group and in their private chat,
    assert await shown(linked, host, "bot-1", STRANGER, "group", QQ_GROUP) == set()
    assert await shown(linked, host, "bot-1", STRANGER, "person", STRANGER) == set()
    # and the same two ids on another bot
    assert await shown(linked, host, "bot-2", TG, "person", TG) == set()
    assert await shown(linked, host, "bot-2", QQ, "group", QQ_GROUP) == set()


async def test_the_telegram_chat_notes_and_closes_the_qq_event_where_it_lives(linked, host):
    eid = await open_in_qq_group(linked, host)
    as_speaker(host, "bot-1", TG)
    listed = await call(linked, host, "list_events", {}, kind="person", launcher=TG)
    assert eid in listed
    noted = await call(
        linked, host, "update_event", {"id": eid, "note": "moved to Wednesday"}, "person", TG
    )
    assert noted.startswith(f"Noted on key event {eid}"), noted
    root = linked.memory.settings.vault_path
    (path,) = root.glob(f"bots/bot-1/people/{QQ}/events/{eid}.md")  # still the QQ id's file
    assert "moved to Wednesday" in path.read_text("utf-8")
    closed = await call(
        linked, host, "close_event", {"id": eid, "resolution": "done"}, "person", TG
    )
    assert closed.startswith(f"Closed key event {eid}"), closed
    assert await shown(linked, host, "bot-1", QQ, "group", QQ_GROUP) == set()
    # a stranger cannot reach it by id
    as_speaker(host, "bot-1", STRANGER)
    refused = await call(linked, host, "list_events", {"status": "all"}, "person", STRANGER)
    assert eid not in refused


async def test_unlinked_or_switched_off_nothing_crosses(tmp_path, host):
    root = tmp_path / "memory"
    plug = await started(host, root)
    try:
        eid = await open_in_qq_group(plug, host)
        assert await shown(plug, host, "bot-1", TG, "person", TG) == set()  # never linked
        as_speaker(host, "bot-1", TG)
        await say(plug, host, f"!memory link {QQ} alice", "person", TG, admin=True)
        await say(plug, host, f"!memory link {TG} alice", "person", TG, admin=True)
        assert await shown(plug, host, "bot-1", TG, "person", TG) == {eid}
        as_speaker(host, "bot-1", TG)
        text = await say(plug, host, "!memory unlink", "person", TG, admin=False)
        assert text.startswith(f"[Memory] Unlinked {TG} from person alice"), text
        assert await shown(plug, host, "bot-1", TG, "person", TG) == set()
        await say(plug, host, f"!memory link {TG} alice", "person", TG, admin=True)
    finally:
        plug.memory.close()
    off = await started(host, root, on=False)  # the same files, the setting off
    try:
        assert await shown(off, host, "bot-1", TG, "person", TG) == set()
        assert await shown(off, host, "bot-1", QQ, "person", QQ) == {eid}  # its own, as ever
    finally:
        off.memory.close()


async def test_the_persons_profile_follows_it_and_the_chats_memories_stay_put(linked, host):
    root = linked.memory.settings.vault_path
    person = root / "bots/bot-1/persons/alice/person.yaml"
    person.write_text(person.read_text("utf-8") + "traits: [allergic to penicillin]\n", "utf-8")
    vault, _ = linked.memory.require()
    secret = "The QQ group's raffle code is 4711"
    vault.remember(NewEpisode(ScopeId("bot-1", f"group_{QQ_GROUP}"), secret, Speaker(QQ, None)))
    as_speaker(host, "bot-1", TG)
    prompt = "\n".join(await turn(linked, host, "person", TG, text="raffle code 4711?"))
    assert "## Person Profile" in prompt and "allergic to penicillin" in prompt
    assert "4711" not in prompt.replace("raffle code 4711?", "")  # the group's memory stays
    as_speaker(host, "bot-1", STRANGER)
    other = "\n".join(await turn(linked, host, "person", STRANGER))
    assert "penicillin" not in other and "## Person Profile" not in other


async def test_speaker_first_recall_counts_every_id_of_the_person(linked, host):
    """In one chat, the same person's memory written under their QQ number ranks as the
    current speaker's when they speak from Telegram (`speaker:current`), a stranger's not."""
    vault, _ = linked.memory.require()
    scope = ScopeId("bot-1", f"group_{QQ_GROUP}")
    vault.remember(NewEpisode(scope, "prefers tea in the morning", Speaker(QQ, "Alice")))
    vault.remember(NewEpisode(scope, "prefers tea in the evening", Speaker(STRANGER, "Bob")))
    as_speaker(host, "bot-1", TG)
    lines = [
        line
        for message in await turn(linked, host, "group", QQ_GROUP, text="who prefers tea?")
        for line in message.splitlines()
        if "<mem>" in line
    ]
    morning = [line for line in lines if "morning" in line]
    evening = [line for line in lines if "evening" in line]
    assert len(morning) == 1 and len(evening) == 1, lines
    assert "speaker:current" in morning[0] and "speaker:current" not in evening[0]


async def test_only_a_bot_admin_links_and_a_second_person_is_refused_by_name(linked, host):
    root = linked.memory.settings.vault_path
    as_speaker(host, "bot-1", STRANGER)
    refused = await say(linked, host, f"!memory link {QQ} mallory", "person", STRANGER, False)
    assert refused.startswith("[Memory] Only a bot admin can link"), refused
    assert not (root / "bots/bot-1/persons/mallory").exists()
    taken = await say(linked, host, f"!memory link {QQ} bob", "person", STRANGER, admin=True)
    assert "already linked to person 'alice'" in taken, taken
    assert not (root / "bots/bot-1/persons/bob").exists()
    mine = await say(linked, host, f"!memory unlink {QQ}", "person", STRANGER, admin=False)
    assert mine.startswith("[Memory] Only a bot admin can unlink another"), mine
    as_speaker(host, "bot-1", QQ)
    status = await say(linked, host, "!memory link", "group", QQ_GROUP, admin=False)
    assert status == (
        f"[Memory] You ({QQ}) are person alice, 2 sender id(s) (linked_people: on)."
    ), status
    # every change was one commit of the person's file and its audit log
    log = subprocess.run(
        ["git", "-C", str(root), "log", "--format=%s", "--", "bots/bot-1/persons"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    assert [line for line in log if line] == [
        "link_person bot-1:person_777000111 alice",
        "link_person bot-1:person_777000111 alice",
    ]
