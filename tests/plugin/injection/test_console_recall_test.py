"""The Memory Console's recall test (issue 24, item 7) against real injections: for the same
message, speaker and chat, the blocks it shows are the very messages the injector put into
the model's request (profile, memories, key events, in their order), with the same gate,
floor and reason; it records no snapshot, audit line or commit and writes nothing at all.
Through the fake host, the plugin's Page (inside LangBot) and `memvault console`'s dispatch
(standalone) over one real vault and real indexes."""

from __future__ import annotations

import pytest

from console.api import dispatch
from console.context import ConsoleContext
from console.errors import ApiError
from tests.helpers.tree_hash import tree_hash
from tests.plugin.fakehost import started_plugin
from tests.plugin.injection.test_injector import KB, profile, remember
from tests.plugin.injection.test_recall_gate import SESSION, snapshot, turn
from tests.plugin.test_console_page import api
from tests.plugin.tools.test_events_tools import TYPES, opened_id

# tests/plugin/conftest.py `plugin_embedder`: what is recalled is what the model finds.
EMBEDDER = "model"

SCOPE = {"bot": "bot-1", "session": SESSION}
MESSAGES = (
    "when does my flight to Tokyo leave?",  # recalled: Alice's own memory, ranked up
    "thanks!",  # the gate skips it: the profile and critical memory only
    "what did Bob say about tea?",  # another speaker's memory
    "when is the dentist appointment?",  # below the floor: the reason, with the numbers
)


@pytest.fixture
async def chat(tmp_path, host):
    host.register_memory_kb(KB)
    plugin = await started_plugin(host, tmp_path / "memory", event_types=TYPES, top_k=2)
    remember(plugin, "Alice's flight to Tokyo leaves on Tuesday at 9", session=SESSION)
    remember(plugin, "Bob's favourite tea is oolong", session=SESSION, speaker=("u2", "Bob"))
    remember(plugin, "The fire exit code is 4512", session=SESSION, priority="critical")
    remember(plugin, "Group B's codename is Falcon", session="group_456")  # another chat
    profile(plugin, "notes", "This group plans the spring release", session=SESSION)
    profile(plugin, "traits", "night owl", session=SESSION, speaker="u1")
    await opened_id(plugin, host, "Dentist visit booked for Friday")
    yield plugin
    plugin.memory.close()


def sent(ctx) -> list[str]:
    """What the injector appended to the model's request (after the pipeline's prompt)."""
    return [m.content for m in ctx.event.default_prompt[1:]]


async def recall_test(plugin, text: str, speaker: str = "u1", name: str = "Alice") -> dict:
    body = {"scope": SCOPE, "text": text, "speaker": speaker, "speaker_name": name}
    answer = await api(plugin, "/recall/test", body)
    assert answer.error is None, answer.error
    return answer.data


def standalone(plugin, endpoint: str, body: dict):
    """`memvault console`'s dispatch over the same vault and index (no plugin settings)."""
    ctx = ConsoleContext(vault=plugin.memory.vault, engine=plugin.memory.engine)
    return dispatch(ctx, endpoint, body)


@pytest.mark.parametrize("message", MESSAGES)
async def test_the_recall_test_shows_the_blocks_a_real_turn_sends(chat, host, message):
    ctx = await turn(chat, host, message)
    real, snap = sent(ctx), snapshot(chat)
    shown = await recall_test(chat, message)
    assert [b["text"] for b in shown["blocks"]] == real and real  # the same texts, in order
    assert [b["block"] for b in shown["blocks"]] == [
        name for names in snap["placed"].values() for name in names
    ]
    assert shown["placed"] == snap["placed"]
    for key in ("gate", "floor", "why", "nothing_injected", "recalled_ids", "episode_ids"):
        assert shown[key] == snap[key], key
    assert shown["event_ids"] == snap["event_ids"] and shown["event_ids"]
    assert shown["settings_from"] == "langbot" and shown["recorded"] is False
    # `memvault console` on the same vault runs the chat's turn with the settings its last
    # turn recorded (top_k 2, the event types): the same blocks.
    alone = standalone(chat, "/recall/test", {"scope": SCOPE, "text": message, "speaker": "u1",
                                             "speaker_name": "Alice"})  # fmt: skip
    assert alone["settings_from"] == "last_turn"
    assert [b["text"] for b in alone["blocks"]] == real


async def test_an_empty_recall_shows_the_reason_a_turn_records(chat, host):
    message = "when is the dentist appointment?"
    await turn(chat, host, message)
    snap = snapshot(chat)
    shown = await recall_test(chat, message)
    assert shown["why"]["kind"] == "floor" and shown["why"] == snap["why"]
    assert shown["why"]["words"].startswith("below the floor (best 0.")


async def test_the_recall_test_writes_nothing(chat, host):
    await turn(chat, host, MESSAGES[0], query_id=41)
    assert snapshot(chat)["query_id"] == 41  # written (the turn queues it)
    root = chat.memory.settings.vault_path
    before = tree_hash(root, skip=(".memvault/index",))
    for message in (*MESSAGES, "!memory"):
        await recall_test(chat, message)
        standalone(chat, "/recall/test", {"scope": SCOPE, "text": message})
    assert tree_hash(root, skip=(".memvault/index",)) == before  # snapshots, audit, git too
    assert snapshot(chat)["query_id"] == 41  # the last real turn's snapshot is the one kept


async def test_another_chat_and_another_bot_never_show_this_chats_memories(chat):
    # The same session name under another bot, and the other chat of this bot.
    for scope in ({"bot": "bot-2", "session": SESSION}, {"bot": "bot-1", "session": "group_456"}):
        answer = await api(chat, "/recall/test", {"scope": scope, "text": "Tokyo flight?"})
        if scope["bot"] == "bot-2":
            assert answer.error is not None and "has no chat group_123" in answer.error
            continue
        assert answer.error is None, answer.error
        texts = "\n".join(b["text"] for b in answer.data["blocks"])
        assert "Tokyo" not in texts and "4512" not in texts and "spring release" not in texts
    mine = await recall_test(chat, "what is Group B's codename Falcon?")
    assert "Falcon" not in "\n".join(b["text"] for b in mine["blocks"])


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"scope": {"bot": "bot-1", "session": "group_999"}, "text": "hi"}, "has no chat"),
        ({"scope": SCOPE, "text": "x" * 4001}, "at most 4000"),
        ({"scope": SCOPE, "text": ""}, "`text` is missing"),
        ({"scope": SCOPE, "text": "hi", "speaker": ".."}, "sender id"),
        ({"scope": SCOPE, "text": "hi", "speaker": 7}, "must be a string"),
        ({"scope": SCOPE, "text": "hi\x00"}, "NUL"),
        ({"scope": SCOPE, "text": "hi", "speaker_name": "n" * 201}, "at most 200"),
        ({"scope": {"bot": "../x", "session": SESSION}, "text": "hi"}, "has no chat"),
    ],
)
async def test_hostile_requests_are_refused_saying_what_to_send(chat, body, words):
    answer = await api(chat, "/recall/test", body)
    assert answer.error is not None and words in answer.error, answer.error
    with pytest.raises(ApiError) as refused:
        standalone(chat, "/recall/test", body)
    assert refused.value.code in ("bad_request", "not_found") and words in refused.value.message


async def test_a_linked_persons_blocks_are_the_same_in_the_test_and_the_turn(tmp_path, host):
    """People linking (issue 24 item 2) changes the speaker's blocks; the recall test runs
    the same build, so it shows the person's profile exactly as the turn sends it."""
    from vault.persons import link

    host.register_memory_kb(KB)
    plugin = await started_plugin(host, tmp_path / "memory", event_types=TYPES, linked_people=True)
    try:
        vault = plugin.memory.vault
        link(vault, "bot-1", "alice", ["u1", "tg-777"], name="Alice")
        path = vault.layout.person_path("bot-1", "alice")
        path.write_text(path.read_text("utf-8") + "traits: [plays the cello]\n", "utf-8")
        remember(plugin, "Alice's flight to Tokyo leaves on Tuesday at 9", session=SESSION)
        message = "when does my flight to Tokyo leave?"
        ctx = await turn(plugin, host, message)
        real = sent(ctx)
        assert "plays the cello" in real[0]  # the person's profile block is in the turn
        shown = await recall_test(plugin, message)
        assert [b["text"] for b in shown["blocks"]] == real
        assert shown["settings"]["linked_people"] is True
    finally:
        plugin.memory.close()
