"""Git states a person leaves a vault in, through the CLI (in-process) and the real `git` binary.

A detached HEAD (a bisect, `git checkout <commit>`): the old code committed the memory onto
it, on no branch, so the person's next `git switch main` deleted the memory file from disk
(only the reflog still had it). Now the write is saved, not committed (exit 1, saying why),
the file survives the switch, and the next operation on the branch commits it. A rebase
stopped on a conflict (HEAD detached as well) keeps committing: that lands in the branch.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers.cli_run import run_main
from vault.writes.create import init_vault

GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="needs the git binary")
SCOPE = ["--bot", "b1", "--session", "group_1"]


def git(vault: Path, *args: str, check: bool = True) -> str:
    env = {**os.environ, "GIT_EDITOR": "true", "GIT_AUTHOR_NAME": "P", "GIT_COMMITTER_NAME": "P"}
    env |= {"GIT_AUTHOR_EMAIL": "p@x", "GIT_COMMITTER_EMAIL": "p@x"}
    done = subprocess.run(
        [GIT or "git", *args], cwd=vault, env=env, capture_output=True, text=True, check=False
    )
    assert not check or done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


def episode_files(vault: Path) -> set[str]:
    return {p.relative_to(vault).as_posix() for p in (vault / "bots").rglob("*.md")}


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    init_vault(root, git=True)
    assert run_main("remember", "first memory", *SCOPE, env_vault=root).returncode == 0
    return root


def _detach_by_stopped_rebase(vault: Path) -> None:
    """A rebase stopped on a conflict in a person's own file: HEAD is detached meanwhile."""
    (vault / "notes.txt").write_text("base\n", encoding="utf-8")
    git(vault, "add", "notes.txt")
    git(vault, "commit", "-qm", "notes")
    git(vault, "checkout", "-qb", "side")
    (vault / "notes.txt").write_text("side\n", encoding="utf-8")
    git(vault, "commit", "-qam", "side")
    git(vault, "checkout", "-q", "main")
    (vault / "notes.txt").write_text("main\n", encoding="utf-8")
    git(vault, "commit", "-qam", "main")
    git(vault, "checkout", "-q", "side")
    git(vault, "rebase", "main", check=False)  # stops: notes.txt conflicts
    assert (vault / ".git" / "rebase-merge").is_dir() or (vault / ".git" / "rebase-apply").is_dir()
    (vault / "notes.txt").write_text("resolved\n", encoding="utf-8")
    git(vault, "add", "notes.txt")


def test_a_memory_saved_on_a_detached_head_survives_and_is_committed_on_the_branch(
    vault: Path,
) -> None:
    git(vault, "checkout", "-q", "--detach", "HEAD")
    detached_at = git(vault, "rev-parse", "HEAD").strip()

    saved = run_main("remember", "written while detached", *SCOPE, env_vault=vault)

    assert saved.returncode == 1, saved.stderr
    assert "HEAD is detached" in saved.stderr and "memory saved in" in saved.stderr
    assert git(vault, "rev-parse", "HEAD").strip() == detached_at  # nothing committed there
    new_file = next(iter(episode_files(vault) - set(git(vault, "ls-files").split())))
    status = run_main("status", env_vault=vault)
    assert status.returncode == 1 and "not committed" in status.stderr + status.stdout

    git(vault, "switch", "-q", "main")

    assert new_file in episode_files(vault)  # the old code's commit made the switch delete it
    again = run_main("remember", "back on the branch", *SCOPE, env_vault=vault)
    assert again.returncode == 0, again.stderr
    assert "Also commits what earlier operations saved" in git(vault, "log", "-1", "--format=%B")
    assert new_file in git(vault, "ls-tree", "-r", "--name-only", "main").split()
    assert git(vault, "status", "--porcelain", "--", "bots").strip() == ""
    listed = run_main("list", *SCOPE, env_vault=vault)
    assert "written while detached" in listed.stdout and "back on the branch" in listed.stdout


def test_a_memory_saved_during_a_stopped_rebase_lands_in_the_rebased_branch(vault: Path) -> None:
    """During a rebase HEAD is detached too, but a commit there is what the rebase builds the
    branch from: kept (refusing it would leave audit.jsonl modified, which blocks
    `git rebase --continue`)."""
    _detach_by_stopped_rebase(vault)

    saved = run_main("remember", "written mid-rebase", *SCOPE, env_vault=vault)

    assert saved.returncode == 0, saved.stderr
    new_file = next(
        iter(episode_files(vault) - {*git(vault, "ls-tree", "-r", "--name-only", "main").split()})
    )
    git(vault, "rebase", "--continue")
    assert new_file in git(vault, "ls-tree", "-r", "--name-only", "side").split()
    assert (vault / "notes.txt").read_text(encoding="utf-8") == "resolved\n"
    assert git(vault, "status", "--porcelain").strip() == ""
