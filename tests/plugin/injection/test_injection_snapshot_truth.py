"""Issue 12, item 3: the injection snapshot, `!memory` and the console's /injection say what
was put where in the last turn and what the runner's `retrieve` served or withheld in that
same turn: exactly the ids the model got, nothing that did not happen."""

from __future__ import annotations

from components.commands.memory import Memory
from langbot_plugin.api.definition.components.page import PageRequest

from tests.plugin.injection.test_injector import KB, injected, remember
from tests.plugin.injection.test_memory_once_per_turn import (
    injector_turn,
    placed_ids,
    retrieve,
)
from vault.layout.keys import ScopeId
from vault.writes.snapshots import read_snapshot

SESSION = "group_123"  # what `!memory` in the fake host's group 123 resolves to
SCOPE = ScopeId("bot-1", SESSION)
# Asks about the hotel only: the flight memory is no runner-up of it (rel-3).
HOTEL = "which hotel is near the terminal?"
FLIGHT = "when is my flight to Tokyo?"


async def overview(plugin, host) -> str:
    cmd = Memory()
    cmd.plugin = plugin
    replies = [r.text async for r in cmd._execute(host.command("!memory"))]
    assert len(replies) == 1
    return replies[0]


async def console_injection(plugin) -> dict:
    import importlib

    page = importlib.import_module("components.pages.console.console").MemoryConsole()
    page.plugin = plugin
    body = {"scope": {"bot": "bot-1", "session": SESSION}}
    response = await page.handle_api(PageRequest(endpoint="/injection", method="POST", body=body))
    assert response.error is None, response.error
    return response.data


def ids_line(ids) -> str:
    return f"[{', '.join(ids)}]"


async def test_snapshot_command_and_console_list_the_ids_placed_and_served(plugin, host):
    host.register_memory_kb(KB)
    flight = remember(plugin, "Alice's flight to Tokyo is on Tuesday", session=SESSION).id
    hotel = remember(plugin, "Alice's Tokyo hotel is near the flight terminal", session=SESSION)
    ctx = await injector_turn(plugin, host, HOTEL, session=SESSION, query_id=31)
    placed = placed_ids(ctx)
    assert placed == [hotel.id]
    served = await retrieve(plugin, FLIGHT, session=SESSION)  # the runner asks differently
    assert served == [flight]

    snap = read_snapshot(plugin.memory.settings.vault_path, SCOPE)
    assert snap["query_id"] == 31 and "naive_rag_suppressed" not in snap
    assert snap["placed"] == {"default_prompt": ["profile", "memories"]}
    assert snap["episode_ids"] == placed
    assert snap["episode_text"] == injected(ctx)[1]
    assert snap["retrieve"]["served_ids"] == served
    assert snap["retrieve"]["withheld_ids"] == [hotel.id]  # passed the floor, already placed
    assert snap["retrieve"]["searched"] is True and snap["retrieve"]["kb_ids"] == [KB]

    text = await overview(plugin, host)
    assert "  default_prompt: profile, memories" in text.splitlines()
    assert f"  Memories in the prompt: {ids_line(placed)}" in text.splitlines()
    assert (
        f"  Knowledge base retrieve (searched): served 1 {ids_line(served)}, "
        f"withheld 1 already recalled this turn {ids_line([hotel.id])}"
    ) in text.splitlines()

    shown = await console_injection(plugin)
    assert shown["episode_ids"] == placed and shown["retrieve"]["served_ids"] == served
    assert shown["placed"] == snap["placed"]


async def test_same_question_is_recorded_as_no_second_search(plugin, host):
    host.register_memory_kb(KB)
    flight = remember(plugin, "Alice's flight to Tokyo is on Tuesday", session=SESSION).id
    await injector_turn(plugin, host, FLIGHT, session=SESSION, query_id=5)
    assert await retrieve(plugin, FLIGHT, session=SESSION) == []
    record = read_snapshot(plugin.memory.settings.vault_path, SCOPE)["retrieve"]
    assert record["searched"] is False and record["served_ids"] == []
    assert record["withheld_ids"] == [flight]
    text = await overview(plugin, host)
    assert (
        "  Knowledge base retrieve (no second search (same question)): served 0 [], "
        f"withheld 1 already recalled this turn {ids_line([flight])}"
    ) in text.splitlines()


async def test_a_turn_without_retrieve_says_no_call_was_recorded(plugin, host):
    host.register_memory_kb(KB)
    remember(plugin, "Alice's flight to Tokyo is on Tuesday", session=SESSION)
    await injector_turn(plugin, host, FLIGHT, session=SESSION)
    assert read_snapshot(plugin.memory.settings.vault_path, SCOPE)["retrieve"] is None
    text = await overview(plugin, host)
    assert "  Knowledge base retrieve: no call recorded for this turn" in text.splitlines()
    assert "suppress" not in text


async def test_a_late_retrieve_never_lands_on_a_newer_turns_snapshot(plugin, host):
    """Two speakers in one group: Alice's turn 1, then Bob's turn 2 replaces the chat's
    snapshot; the runner's retrieve for Alice's turn must not write into Bob's."""
    host.register_memory_kb(KB)
    remember(plugin, "Alice's flight to Tokyo is on Tuesday", session=SESSION)
    lunch = remember(plugin, "The team lunch is on Friday", session=SESSION, speaker=("u2", "Bob"))
    await injector_turn(plugin, host, FLIGHT, session=SESSION, query_id=1)
    host.query_vars.update(sender_id="u2", sender_name="Bob")
    await injector_turn(plugin, host, "team lunch Friday", session=SESSION, query_id=2)
    served = await retrieve(plugin, "Tokyo flight", session=SESSION, sender="u1")
    assert served == []  # Alice's own turn already placed the flight
    snap = read_snapshot(plugin.memory.settings.vault_path, SCOPE)
    assert snap["query_id"] == 2 and snap["retrieve"] is None
    assert await retrieve(plugin, "team lunch Friday", session=SESSION, sender="u2") == []
    snap = read_snapshot(plugin.memory.settings.vault_path, SCOPE)
    assert snap["retrieve"]["withheld_ids"] == [lunch.id]


async def test_an_old_snapshot_is_shown_without_claims(plugin, host):
    from vault.writes.snapshots import write_snapshot

    old = {"recorded_at": "2026-11-30T10:00:00Z", "query_id": 3, "episode_count": 1}
    write_snapshot(plugin.memory.settings.vault_path, SCOPE, {**old, "injection_chars": 9})
    text = await overview(plugin, host)
    assert "  Placed: not recorded (snapshot of an older MemVault)" in text.splitlines()
    assert "retrieve" not in text


async def test_hostile_ids_in_a_hand_edited_snapshot_stay_on_their_line(plugin, host):
    from vault.writes.snapshots import write_snapshot

    snap = {
        "query_id": 1,
        "placed": {"default_prompt\nL2 (Episodic): KB=fake active": ["memories"]},
        "episode_ids": ["ep_a\nVault: /etc"],
        "retrieve": {"served_ids": ["x" * 500], "withheld_ids": [], "searched": True},
    }
    write_snapshot(plugin.memory.settings.vault_path, SCOPE, snap)
    lines = (await overview(plugin, host)).splitlines()
    assert not any(line.startswith(("L2 (Episodic): KB=fake", "Vault: /etc")) for line in lines)
    assert max(len(line) for line in lines) < 300  # a 500-character id is cut
