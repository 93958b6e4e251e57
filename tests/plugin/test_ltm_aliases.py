"""LongTermMemory names that MemVault answers to (issue 15): upstream's settings and flags
through `!memory` and the tools on the FAKE host, over a real vault and real indexes."""

from __future__ import annotations

import json

import pytest

from tests.plugin.commands.test_command import chat, command, remember, say
from tests.plugin.fakehost import started_plugin
from tests.plugin.tools.test_tools import call

KB = "kb-memvault"


@pytest.fixture
async def limited(tmp_path, host):
    """A plugin with LongTermMemory's two profile settings set low."""
    plug = await started_plugin(
        host, tmp_path / "memory", max_profile_traits=2, max_profile_preferences="1"
    )
    host.register_memory_kb(KB)
    yield plug
    plug.memory.close()


def add(field: str, value: str, scope: str = "session") -> dict[str, str]:
    return {"field": field, "action": "add", "value": value, "scope": scope}


async def test_max_profile_settings_bound_what_the_tool_can_add(limited, host):
    assert not (await call(limited, host, "update_profile", add("traits", "curious"))).startswith(
        "Error"
    )
    await call(limited, host, "update_profile", add("traits", "patient"))
    refused = await call(limited, host, "update_profile", add("traits", "loud"))
    assert refused.startswith("Error: traits already has 2 items (the limit is 2")
    assert "max_profile_traits" in refused
    await call(limited, host, "update_profile", add("preferences", "tea"))
    refused = await call(limited, host, "update_profile", add("preferences", "coffee"))
    assert refused.startswith("Error: preferences already has 1 items (the limit is 1")
    vault, _ = limited.memory.require()
    profile = vault.read_profile(chat(limited))
    assert profile.traits == ("curious", "patient") and profile.preferences == ("tea",)
    shown = await say(command(limited), host, "!memory profile")
    assert "loud" not in shown and "coffee" not in shown and "patient" in shown


async def test_max_profile_settings_bound_an_import(limited, host):
    payload = {
        "version": 1,
        "profiles": [
            {
                "type": "session",
                "profile": {"traits": ["a", "b", "c", "d"], "preferences": ["x", "y"]},
            }
        ],
    }
    reply = await say(command(limited), host, f"!memory import l2 {json.dumps(payload)}")
    assert "Imported 1 L1 profile(s)" in reply
    vault, _ = limited.memory.require()
    profile = vault.read_profile(chat(limited))
    assert profile.traits == ("a", "b") and profile.preferences == ("x",)


async def test_without_the_settings_the_upstream_defaults_apply(plugin, host):
    host.register_memory_kb(KB)
    for n in range(20):
        text = await call(plugin, host, "update_profile", add("traits", f"trait {n}"))
        assert not text.startswith("Error"), text
    refused = await call(plugin, host, "update_profile", add("traits", "one too many"))
    assert "(the limit is 20" in refused
    assert plugin.memory.settings.profile_limits.preferences == 10


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"max_profile_traits": 0}, "max_profile_traits must be at least 1"),
        ({"max_profile_traits": 101}, "max_profile_traits must be a whole number from 1 to 100"),
        ({"max_profile_preferences": "many"}, "max_profile_preferences must be a number"),
        ({"max_profile_preferences": 500}, "max_profile_preferences must be a whole number"),
    ],
)
def test_an_out_of_range_profile_setting_says_what_to_fix(config, message):
    import main

    with pytest.raises(main.SettingsError, match=message):
        main.PluginSettings.from_config(config)


# -- status flags on `!memory export` ------------------------------------------------------


async def test_export_takes_upstream_status_flags_without_l2(plugin, host):
    cmd = command(plugin)
    vault, _ = plugin.memory.require()
    kept = remember(plugin, "Ivan speaks Finnish")
    old = remember(plugin, "Ivan used to live in Oulu")
    vault.archive(chat(plugin), old.id)
    data = json.loads(await say(cmd, host, "!memory export --include-archived"))
    assert sorted(e["id"] for e in data["episodes"]) == sorted([kept.id, old.id])
    assert data["statuses"] == ["active", "archived"]
    only = json.loads(await say(cmd, host, "!memory e --status archived"))
    assert [e["id"] for e in only["episodes"]] == [old.id]
    active = json.loads(await say(cmd, host, "!memory export --include-superseded"))
    assert [e["id"] for e in active["episodes"]] == [kept.id]
