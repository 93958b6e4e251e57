"""Critical memories in every turn (issue 14): through the injector and the fake host, over a
real vault, the real indexes and the real embedding model in tmp_path."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.plugin.fakehost import started_plugin
from tests.plugin.injection.test_injector import KB, fenced, injected, remember, turn
from vault.writes.snapshots import read_snapshot

# tests/plugin/conftest.py `plugin_embedder`: what is recalled here is what the model finds.
EMBEDDER = "model"

UNRELATED = "what do you think about the weather this weekend?"
RULE = "Alice is allergic to peanuts: never suggest food with nuts"


@pytest.fixture
def opted_in(host):
    host.register_memory_kb(KB)
    return host


def _snapshot(plugin, session="group_A", bot="bot-1"):
    return read_snapshot(plugin.memory.settings.vault_path, plugin.memory.scope(session, bot))


async def test_a_critical_memory_is_in_the_prompt_for_an_unrelated_message(plugin, opted_in):
    critical = remember(plugin, RULE, priority="critical")
    remember(plugin, "Alice's flight to Tokyo is on Tuesday")  # normal: not recalled for this
    ctx = await turn(plugin, opted_in, UNRELATED)
    _, recalled = injected(ctx)
    (line,) = fenced(recalled)
    assert f"id:{critical.id}" in line and "never suggest food with nuts" in line
    assert "Tokyo" not in recalled
    snap = _snapshot(plugin)
    assert snap["critical_ids"] == [critical.id] and snap["episode_ids"] == [critical.id]
    assert snap["recalled_ids"] == []  # it is there because it is critical, not recalled
    assert [e["content"] for e in opted_in.query_vars["_ltm_context"]["episodes"]] == [
        line.removeprefix("[1] ")
    ]


async def test_critical_memories_come_first_and_a_recalled_one_is_not_repeated(plugin, opted_in):
    critical = remember(plugin, RULE, priority="critical")
    tokyo = remember(plugin, "Alice's flight to Tokyo is on Tuesday")
    ctx = await turn(plugin, opted_in, "when is the Tokyo flight? any peanuts on board?")
    lines = fenced(injected(ctx)[1])
    assert f"id:{critical.id}" in lines[0] and f"id:{tokyo.id}" in lines[1]
    assert sum(critical.id in line for line in lines) == 1


async def test_an_expired_or_archived_critical_memory_never_is(plugin, opted_in):
    past = datetime.now(UTC) - timedelta(minutes=1)
    remember(plugin, "Gate code is 4521 for the summer house", priority="critical", expires_at=past)
    archived = remember(plugin, "Old rule: answer in French", priority="critical")
    vault, _ = plugin.memory.require()
    vault.archive(plugin.memory.scope("group_A", "bot-1"), archived.id)
    for text in (UNRELATED, "gate code summer house", "answer in French"):
        ctx = await turn(plugin, opted_in, text)
        _, recalled = injected(ctx)
        assert "4521" not in recalled and "French" not in recalled
    assert _snapshot(plugin)["critical_ids"] == []


async def test_another_chats_or_bots_critical_memory_never_is(plugin, opted_in):
    remember(plugin, "Bob's rule: always reply in Spanish", session="group_B", priority="critical")
    remember(plugin, "Other bot's rule: sign as Carol", bot="bot-2", priority="critical")
    ctx = await turn(plugin, opted_in, UNRELATED, session="group_A")
    _, recalled = injected(ctx)
    assert "Spanish" not in recalled and "Carol" not in recalled
    ctx = await turn(plugin, opted_in, UNRELATED, session="group_B")
    assert "always reply in Spanish" in injected(ctx)[1] and "Carol" not in injected(ctx)[1]


async def test_critical_memories_stay_within_the_budget(tmp_path, opted_in):
    plugin = await started_plugin(opted_in, tmp_path / "v", injection_chars=2400)
    try:
        ids = [
            remember(plugin, f"Rule {n}: " + "keep this in mind " * 30, priority="critical").id
            for n in range(6)
        ]
        ctx = await turn(plugin, opted_in, UNRELATED)
        system, recalled = injected(ctx)
        assert len(system) + len(recalled) <= 2400
        shown = fenced(recalled)
        assert 1 <= len(shown) < 6 and "left out" in recalled
        snap = _snapshot(plugin)
        assert set(snap["critical_ids"]) == set(ids) and len(snap["episode_ids"]) == len(shown)
    finally:
        plugin.memory.close()
