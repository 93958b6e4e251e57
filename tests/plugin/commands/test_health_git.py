"""`!memory health` shows a commit failure that persists in red, and green once a commit
works again (the memories were saved all along)."""

from __future__ import annotations

import os

import pytest

from tests.conftest import git
from tests.plugin.commands.test_command import chat, command, remember, say
from vault.git import gitrepo


async def test_memory_health_is_red_while_commits_fail_and_green_after(plugin, host, monkeypatch):
    monkeypatch.setattr(gitrepo, "LOCK_WAIT_SECONDS", 0.1)
    vault, _ = plugin.memory.require()
    lock = vault.root / ".git" / "index.lock"
    fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)  # held the way git holds it
    try:
        episode = remember(plugin, "saved while a person's git held the index")
        assert vault.commit_failure is not None
        assert vault.find_episode(chat(plugin), episode.id).path.exists()
        lines = (await say(command(plugin), host, "!memory health")).splitlines()
        git_lines = [line for line in lines if ": git: " in line]
        assert len(git_lines) == 1 and git_lines[0].startswith("- ERROR: git: 2 file(s) saved")
        assert (
            str(lock) in git_lines[0] and "if no git is running, delete that file" in (git_lines[0])
        )
        assert lines[-1].startswith("Result: ERROR")
    finally:
        os.close(fd)
        lock.unlink()
    remember(plugin, "saved once git was free")
    assert vault.commit_failure is None
    assert git(vault.root, "status", "--porcelain") == ""
    lines = (await say(command(plugin), host, "!memory health")).splitlines()
    assert "- OK: git history on: every memory operation is one commit" in lines


async def test_memory_health_says_a_failing_sync_and_then_a_good_one(plugin, host, tmp_path):
    from dulwich.repo import Repo

    from vault.git import gitsync

    vault, _ = plugin.memory.require()
    lines = (await say(command(plugin), host, "!memory health")).splitlines()
    assert not any("sync" in line for line in lines)  # never synced: no line
    gone = tmp_path / "gone.git"
    with pytest.raises(gitsync.SyncError):
        gitsync.sync(vault, str(gone))
    lines = (await say(command(plugin), host, "!memory health")).splitlines()
    (said,) = [line for line in lines if "last sync" in line]
    assert said.startswith("- WARN:") and "gone.git" in said and "git init --bare" in said
    Repo.init_bare(str(gone), mkdir=True, default_branch=b"main").close()
    gitsync.sync(vault, str(gone))
    lines = (await say(command(plugin), host, "!memory health")).splitlines()
    assert any(line.startswith("- OK: last synced with") for line in lines)
