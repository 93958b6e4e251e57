"""The `remember` tool never stores the same thing twice: its reply is one line the model can
act on ("Already remembered as ep_...: <text> (nothing new was stored; ...)"), through the
SDK's Tool.call with a real Session and the fake host over a real vault and indexes. The
tiny TEST FAKE embedder (bag-of-words): the same words reordered are a near repeat here."""

from __future__ import annotations

import importlib

import pytest

KB = "kb-memvault"
SAID = "Alice's flight to Tokyo is next Tuesday"


async def remember(plugin, host, content, launcher_id="123", **params):
    module = importlib.import_module("components.tools.remember")
    tool = module.Remember()
    tool.plugin = plugin
    session = host.session("group", launcher_id)
    return await tool.call({"content": content, **params}, session, 7)


def bodies(plugin, session="group_123"):
    vault, _ = plugin.memory.require()
    scope = plugin.memory.scope(session, "bot-1")
    return [s.episode.body for s in vault.load_episodes(scope)[0]]


@pytest.fixture
def opted_in(host):
    host.register_memory_kb(KB)
    return host


async def test_a_repeat_is_answered_with_the_memory_that_says_it(plugin, opted_in):
    assert await remember(plugin, opted_in, SAID) == f"Remembered: {SAID}"
    (first,) = plugin.memory.require()[0].load_episodes(plugin.memory.scope("group_123", "bot-1"))[
        0
    ]
    for again in (SAID.upper() + ".", "Next Tuesday is Alice's flight to Tokyo"):
        reply = await remember(plugin, opted_in, again)
        assert reply == (
            f"Already remembered as {first.episode.id}: {SAID} (nothing new was stored; to "
            'change it, remember the new text with the tag "correction").'
        )
        assert "\n" not in reply
    assert bodies(plugin) == [SAID]


async def test_a_different_fact_and_another_chats_same_text_are_stored(plugin, opted_in):
    await remember(plugin, opted_in, SAID)
    other = "Bob's train to Osaka leaves on Friday"
    assert await remember(plugin, opted_in, other) == f"Remembered: {other}"
    assert await remember(plugin, opted_in, SAID, launcher_id="456") == f"Remembered: {SAID}"
    assert (await remember(plugin, opted_in, SAID)).startswith("Already remembered as ")
    assert sorted(bodies(plugin)) == sorted([SAID, other])
    assert bodies(plugin, "group_456") == [SAID]


async def test_a_correction_repeating_the_text_is_stored(plugin, opted_in):
    await remember(plugin, opted_in, SAID)
    assert (await remember(plugin, opted_in, SAID)).startswith("Already remembered as ")
    reply = await remember(plugin, opted_in, SAID, tags=["correction"])
    assert reply == f"Remembered: {SAID}"
    assert bodies(plugin) == [SAID, SAID]  # the correction, and the memory it supersedes
