"""One profile edit sent the same way through each entrance that builds a ProfileEdit (the
plugin's `update_profile` tool, `memvault profile add`'s arguments, the console's
/profile/update) becomes one value: the same fields, only the scope and what the surface
knows of itself (the sender's name: the console has none) differ, and how each asks for the
write (source, query id) stays beside the value. Each is stored as that value says."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from console.api import dispatch
from console.context import ConsoleContext
from memvault_cli.main import LAYERS, build_parser
from tests.plugin.tools.test_tools import call, scope
from vault.cli.commands import cmd_profile
from vault.layout.keys import ScopeId
from vault.writes import profile_ops
from vault.writes.create import init_vault
from vault.writes.operations import Vault
from vault.writes.profile_edit import ProfileEdit

KB = "kb-memvault"
VALUE = "  coffee: oat flat white "  # a slot in the text: the console sends no fact_key
CONSOLE_CHAT = ScopeId("bot-c", "group_c")


@pytest.fixture
def opted_in(host):
    host.register_memory_kb(KB)
    return host


@pytest.fixture
def edits(monkeypatch) -> list[tuple[ProfileEdit, dict[str, Any]]]:
    """Every ProfileEdit Vault.update_profile is given, with its keywords (the write runs)."""
    seen: list[tuple[ProfileEdit, dict[str, Any]]] = []
    original = Vault.update_profile

    def spy(self: Vault, edit: ProfileEdit, **kw: Any):  # noqa: ANN202
        seen.append((edit, kw))
        return original(self, edit, **kw)

    monkeypatch.setattr(Vault, "update_profile", spy)
    # The console's edit checks what the person saw first (profile_ops.update_seen_profile),
    # which calls the module's function, not the bound method: the same write, spied there.
    monkeypatch.setattr(profile_ops, "update_profile", spy)
    return seen


def own_words(edit: ProfileEdit) -> ProfileEdit:
    """The value without what only the surface decides."""
    return dataclasses.replace(edit, scope=CONSOLE_CHAT, speaker_name=None)


async def test_one_profile_edit_is_one_value_at_every_entrance(plugin, opted_in, edits, tmp_path):
    params = {"field": "preferences", "action": "add", "value": VALUE, "scope": "speaker"}
    assert (await call(plugin, opted_in, "update_profile", params)).startswith(
        "Speaker profile updated."
    )

    root = tmp_path / "standalone"
    init_vault(root, git=False)
    vault = Vault(root, git=False)
    ctx = ConsoleContext(vault=vault, engine=None)
    body = {"bot": CONSOLE_CHAT.bot, "session": CONSOLE_CHAT.session}
    dispatch(
        ctx,
        "/profile/update",
        {"scope": body, "speaker": "u1", "field": "preferences", "action": "add", "value": VALUE},
    )

    argv = ["profile", "--vault", str(root), "--no-git", "--bot", "bot-c", "--session", "group_c"]
    argv += ["--speaker", "u1", "--speaker-name", "Alice", "add", "preferences", VALUE]
    assert cmd_profile(build_parser([make() for make in LAYERS]).parse_args(argv)) == 0

    (tool, tool_kw), (console, console_kw), (cli, cli_kw) = edits
    assert (tool.scope, console.scope, cli.scope) == (scope(plugin), CONSOLE_CHAT, CONSOLE_CHAT)
    assert (tool.speaker_name, console.speaker_name, cli.speaker_name) == ("Alice", None, "Alice")
    assert own_words(tool) == own_words(console) == own_words(cli)
    assert (tool.value, tool.speaker, tool.fact_key) == ("coffee: oat flat white", "u1", None)
    assert [tool_kw, console_kw, cli_kw] == [
        {"source": "agent", "query_id": 7},
        {"source": "console", "query_id": None, "expected_hash": None},
        {"source": "user"},
    ]

    plugin_vault, _ = plugin.memory.require()
    for profile in (
        plugin_vault.read_profile(tool.scope, "u1"),
        vault.read_profile(CONSOLE_CHAT, "u1"),
    ):
        assert profile.preferences == ("coffee: oat flat white",)
    assert plugin_vault.read_profile(tool.scope, "u1").name == "Alice"
