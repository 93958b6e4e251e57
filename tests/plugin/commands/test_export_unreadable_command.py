"""`!memory export` (profiles) and `!memory export l2` (memories) name the files of their
kind a person broke by hand under `unreadable`, and export the rest; the JSON still imports."""

from __future__ import annotations

import json

from tests.plugin.commands.test_command import chat, command, remember, say
from vault.writes.profile_edit import ProfileEdit


async def test_profile_export_names_a_broken_profile_and_keeps_the_rest(plugin, host):
    cmd = command(plugin)
    vault, _ = plugin.memory.require()
    vault.update_profile(ProfileEdit(chat(plugin), "name", "set", "Team chat"))
    vault.update_profile(ProfileEdit(chat(plugin), "traits", "add", "kind", speaker="u1"))
    broken = vault.profile_path(chat(plugin), "u1")
    broken.write_text("traits: [kind\n", encoding="utf-8")
    data = json.loads(await say(cmd, host, "!memory export"))
    assert [p["type"] for p in data["profiles"]] == ["session"]
    assert [u["file"] for u in data["unreadable"]] == [vault.layout.rel(broken)]
    assert broken.read_text("utf-8") == "traits: [kind\n"
    # only a broken profile, no good one: still not "No profiles to export"
    vault.profile_path(chat(plugin)).write_text("name: [\n", encoding="utf-8")
    data = json.loads(await say(cmd, host, "!memory export"))
    assert data["profiles"] == [] and len(data["unreadable"]) == 2


async def test_l2_export_names_a_broken_memory_file_only(plugin, host):
    cmd = command(plugin)
    vault, _ = plugin.memory.require()
    good = remember(plugin, "Ivan speaks Finnish")
    path = vault.layout.root / vault.find_episode(chat(plugin), good.id).rel
    (path.parent / "broken.md").write_text("---\nid: [\n---\nhalf\n", encoding="utf-8")
    vault.profile_path(chat(plugin), "u1").parent.mkdir(parents=True, exist_ok=True)
    vault.profile_path(chat(plugin), "u1").write_text("traits: [\n", encoding="utf-8")
    data = json.loads(await say(cmd, host, "!memory export l2"))
    assert [e["id"] for e in data["episodes"]] == [good.id]
    # the memories' export names the memory file, not the profile (that is `!memory export`)
    assert [u["file"].rsplit("/", 1)[-1] for u in data["unreadable"]] == ["broken.md"]
    (path.parent / "broken.md").unlink()
    assert "unreadable" not in json.loads(await say(cmd, host, "!memory export l2"))
