"""The plugin's side of two CLI fixes (issue 15 follow-up), on the FAKE host over a real
vault: `!memory archive|restore|verify` sent again is no error and writes nothing, as
`memvault` and the console answer it; the update_profile tool names a new speaker profile
after the sender (sender_name) and never renames one that has a name."""

from __future__ import annotations

from tests.conftest import git
from tests.plugin.commands.test_command import chat, command, remember, say
from tests.plugin.tools.test_tools import call
from vault.files import audit

KB = "kb-memvault"


def commits(root) -> int:
    return int(git(root, "rev-list", "--count", "HEAD").strip())


def audit_count(vault, scope) -> int:
    return len(audit.read(vault.layout.audit_path(scope))[0])


async def test_a_repeated_state_command_says_nothing_changed_and_writes_nothing(plugin, host):
    cmd = command(plugin)
    vault, _ = plugin.memory.require()
    ep = remember(plugin, "Heidi prefers window seats", source="agent")  # not verified
    for text, reply in [
        (
            f"!memory restore {ep.id}",
            f"[Memory] Episode {ep.id} is already active: nothing changed.",
        ),
        (f"!memory archive {ep.id}", f"[Memory] Episode {ep.id} status set to archived."),
        (
            f"!memory archive {ep.id}",
            f"[Memory] Episode {ep.id} is already archived: nothing changed.",
        ),
        (f"!memory verify {ep.id}", f"[Memory] Episode {ep.id} verified."),
        (
            f"!memory verify {ep.id}",
            f"[Memory] Episode {ep.id} is already verified: nothing changed.",
        ),
    ]:
        count, lines = commits(vault.root), audit_count(vault, chat(plugin))
        assert await say(cmd, host, text) == reply
        wrote = "nothing changed" not in reply
        assert commits(vault.root) == count + wrote, text
        assert audit_count(vault, chat(plugin)) == lines + wrote, text


async def test_the_tool_names_a_new_speaker_profile_after_the_sender(plugin, host):
    host.register_memory_kb(KB)
    vault, _ = plugin.memory.require()
    params = {"field": "traits", "action": "add", "value": "night owl", "scope": "speaker"}
    reply = await call(plugin, host, "update_profile", params)
    assert reply.splitlines()[:2] == ["Speaker profile updated.", "Name: Alice"]
    assert vault.read_profile(chat(plugin), "u1").name == "Alice"
    # The same sender under another display name later: the name already there stays.
    host.query_vars["sender_name"] = "Alice W."
    await call(plugin, host, "update_profile", {**params, "value": "early riser"})
    assert vault.read_profile(chat(plugin), "u1").name == "Alice"
    # Without a display name nothing is invented.
    host.query_vars["sender_id"], host.query_vars["sender_name"] = "u2", ""
    await call(plugin, host, "update_profile", params)
    assert vault.read_profile(chat(plugin), "u2").name is None
