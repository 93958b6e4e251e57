"""The `remember` tool sets Synapse's fields (issue 14, item 2): category, key, priority,
tags, expiry and confidence, through the SDK's Tool.call and the fake host over a real vault;
a bad value is refused with what to send, and nothing is written."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.plugin.tools.test_tools import call, scope

KB = "kb-memvault"


@pytest.fixture
def opted_in(host):
    host.register_memory_kb(KB)
    return host


def stored(plugin):
    vault, _ = plugin.memory.require()
    return [s.episode for s in vault.list_episodes(scope(plugin)).items]


async def test_remember_sets_every_field(plugin, opted_in):
    before = datetime.now(UTC).replace(microsecond=0)  # the vault clock keeps whole seconds
    params = {
        "content": "Alice is allergic to peanuts",
        "category": "fact",
        "key": "alice_allergy",
        "priority": "Critical",
        "tags": ["Health", "health", " food "],
        "expires_in": "2w",
        "confidence": "0.9",
    }
    assert (await call(plugin, opted_in, "remember", params)).startswith("Remembered")
    (ep,) = stored(plugin)
    assert (ep.category, ep.key, ep.priority, ep.confidence) == (
        "fact",
        "alice_allergy",
        "critical",
        0.9,
    )
    assert ep.tags == ("Health", "food")  # trimmed, one per case-folded spelling
    assert ep.expires_at is not None
    assert before + timedelta(weeks=2) <= ep.expires_at <= datetime.now(UTC) + timedelta(weeks=2)
    assert ep.source == "agent" and not ep.verified

    at = {"content": "The lease ends in June", "expires_at": "2099-06-30", "confidence": 1}
    assert (await call(plugin, opted_in, "remember", at)).startswith("Remembered")
    (lease,) = [e for e in stored(plugin) if e.body == "The lease ends in June"]
    assert lease.expires_at == datetime(2099, 6, 30, tzinfo=UTC) and lease.confidence == 1.0
    assert lease.priority == "normal"  # importance 2 by default maps onto normal


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        ({"priority": "urgent"}, "Error: priority must be one of low, normal, high, critical"),
        ({"priority": 3}, "Error: priority must be one of low, normal, high, critical"),
        ({"confidence": 2}, "Error: confidence must be a number from 0 to 1"),
        ({"confidence": True}, "Error: confidence must be a number from 0 to 1"),
        ({"confidence": "likely"}, "Error: confidence must be a number from 0 to 1"),
        ({"expires_in": "soon"}, "Error: duration 'soon' is not understood"),
        ({"expires_in": 7}, "Error: expires_in must be a duration like 30m, 12h, 7d or 2w"),
        ({"expires_at": "tomorrow"}, "Error: expires_at must be an ISO 8601 time"),
        ({"expires_at": "2001-01-01"}, "Error: expires_at 2001-01-01 is not in the future"),
        ({"expires_at": "2099-01-01", "expires_in": "1d"}, "Error: give expires_at or"),
    ],
)
async def test_remember_refuses_a_bad_field_and_writes_nothing(plugin, opted_in, extra, says):
    reply = await call(plugin, opted_in, "remember", {"content": "x", **extra})
    assert reply.startswith(says), reply
    assert stored(plugin) == []
