"""An export is a backup: a file a person broke by hand is left out of it but NAMED (file and
line) in the JSON, on stderr and in the exit code, never silently dropped and never a failed
export of the whole chat; the broken file itself is not touched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli_run import Ran, run_main
from vault.errors import FOUND_PROBLEMS
from vault.layout.keys import ScopeId
from vault.transfer.exchange import export_scope, import_payload, unreadable_warning
from vault.writes.create import init_vault
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault
from vault.writes.profile_edit import ProfileEdit

CHAT = ScopeId("b1", "group_123")
ARGS = ["--bot", "b1", "--session", "group_123"]
BROKEN_PROFILE = "traits: [kind\nname: Ann\n"  # an unclosed list, as a hand edit leaves it
BROKEN_EPISODE = "---\nid: ep_broken\ncreated_at: [\n---\nhalf a memory\n"


@pytest.fixture
def broken(tmp_path: Path) -> tuple[Vault, dict[str, bytes]]:
    """A chat with one good memory and session profile, one broken speaker profile and one
    broken memory file; returns the vault and the broken files' exact bytes."""
    root = tmp_path / "memory"
    init_vault(root, git=False)
    vault = Vault(root, git=False)
    good = vault.remember(NewEpisode(CHAT, "Ann runs the Friday book club"))
    vault.update_profile(ProfileEdit(CHAT, "name", "set", "Book club"))
    vault.update_profile(ProfileEdit(CHAT, "traits", "add", "kind", speaker="u1"))
    profile = vault.profile_path(CHAT, "u1")
    profile.write_text(BROKEN_PROFILE, encoding="utf-8")
    episode = vault.layout.root / vault.find_episode(CHAT, good.id).rel
    (episode.parent / "broken.md").write_text(BROKEN_EPISODE, encoding="utf-8")
    files = {vault.layout.rel(p): p.read_bytes() for p in (profile, episode.parent / "broken.md")}
    return vault, files


def test_export_names_each_unreadable_file_and_keeps_the_rest(broken) -> None:
    vault, files = broken
    data = export_scope(vault, CHAT)
    assert [e["content"] for e in data["episodes"]] == ["Ann runs the Friday book club"]
    assert [(p["type"], p["profile"]["name"]) for p in data["profiles"]] == [
        ("session", "Book club")
    ]
    assert sorted(u["file"] for u in data["unreadable"]) == sorted(files)
    assert all(u["line"] >= 1 and u["message"] for u in data["unreadable"])
    warning = unreadable_warning(data)
    assert warning.startswith("2 file(s) could not be read and are NOT in this export")
    assert all(rel in warning for rel in files) and "memvault check" in warning
    for rel, raw in files.items():  # reported, never rewritten
        assert (vault.layout.root / rel).read_bytes() == raw


def test_a_clean_chat_exports_an_empty_unreadable_list_and_round_trips(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    init_vault(root, git=False)
    vault = Vault(root, git=False)
    vault.remember(NewEpisode(CHAT, "Ann runs the Friday book club"))
    data = export_scope(vault, CHAT)
    assert data["unreadable"] == [] and unreadable_warning(data) == ""
    other = ScopeId("b1", "group_456")
    assert import_payload(vault, other, data)["imported"] == 1  # the new key imports fine


def run(vault: Vault, *args: str) -> Ran:
    return run_main(*args, env_vault=vault.layout.root)


def test_cli_export_writes_the_rest_warns_on_stderr_and_exits_1(broken, tmp_path) -> None:
    vault, files = broken
    proc = run(vault, "export", *ARGS)
    assert proc.returncode == FOUND_PROBLEMS, proc.stderr
    data = json.loads(proc.stdout)
    assert len(data["episodes"]) == 1 and len(data["unreadable"]) == 2
    assert proc.stderr.startswith("warning: 2 file(s) could not be read")
    assert all(rel in proc.stderr for rel in files)
    out = tmp_path / "backup.json"
    proc = run(vault, "export", *ARGS, "--out", str(out))
    assert proc.returncode == FOUND_PROBLEMS
    assert proc.stdout.strip() == f"exported 1 episode and 1 profile to {out}"
    assert len(json.loads(out.read_text("utf-8"))["unreadable"]) == 2
    assert "warning: 2 file(s)" in proc.stderr


def test_cli_export_of_a_clean_chat_exits_0_without_a_warning(tmp_path) -> None:
    root = tmp_path / "memory"
    init_vault(root, git=False)
    vault = Vault(root, git=False)
    vault.remember(NewEpisode(CHAT, "Ann runs the Friday book club"))
    proc = run(vault, "export", *ARGS)
    assert proc.returncode == 0 and proc.stderr == ""
    assert json.loads(proc.stdout)["count"] == 1
