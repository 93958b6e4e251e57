"""vault.git.gitlog against real repositories, checked from outside with the real git binary."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC
from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from vault.git import gitrepo
from vault.git.gitlog import CommitInfo, GitCommitError, commit_paths, file_history, init_repo

REPO_ROOT = REPO
GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="tests verify results with the git binary")
PERSON = ["-c", "user.name=Person", "-c", "user.email=person@example.com"]


@pytest.fixture(autouse=True)
def _isolated_git_config(tmp_path_factory: pytest.TempPathFactory, monkeypatch) -> None:
    # Neither git nor dulwich may read the machine's global identity or settings.
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(var, raising=False)


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        [GIT or "git", "-C", str(root), *args], capture_output=True, text=True, check=True
    )
    return done.stdout


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def commit_count(root: Path) -> int:
    return int(git(root, "rev-list", "--count", "HEAD").strip())


def changed_in(root: Path, rev: str = "HEAD") -> list[str]:
    out = git(root, "show", "--name-status", "--format=", rev)
    return sorted(line for line in out.splitlines() if line)


def status(root: Path) -> list[str]:
    return sorted(git(root, "status", "--porcelain", "--untracked-files=all").splitlines())


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    init_repo(root)
    return root


def test_init_repo_makes_empty_repo_on_main(tmp_path: Path) -> None:
    root = tmp_path / "new"
    init_repo(root)
    assert git(root, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    assert sorted(p.name for p in root.iterdir()) == [".git"]
    head_before = (root / ".git" / "HEAD").read_bytes()
    init_repo(root)  # second call is a no-op
    assert (root / ".git" / "HEAD").read_bytes() == head_before
    git(root, "fsck", "--strict")


def test_each_call_commits_exactly_the_given_paths(repo: Path) -> None:
    write(repo, "bots/b1/episodes/2026/11/ep1.md", "first\n")
    write(repo, "bots/b1/sessions/group_1/profile.yaml", "name: Alice\n")
    write(repo, "not-mine.md", "a person's new file\n")
    paths = ["bots/b1/episodes/2026/11/ep1.md", "bots/b1/sessions/group_1/profile.yaml"]
    sha1 = commit_paths(repo, paths, "memvault: remember ep1")
    assert sha1 == git(repo, "rev-parse", "HEAD").strip()
    assert changed_in(repo) == [f"A\t{p}" for p in sorted(paths)]

    write(repo, "bots/b1/sessions/group_1/profile.yaml", "name: Alice B\n")
    (repo / "bots/b1/episodes/2026/11/ep1.md").unlink()
    write(repo, "bots/b1/episodes/2026/11/ep2.md", "second\n")
    sha2 = commit_paths(
        repo,
        [
            "bots/b1/sessions/group_1/profile.yaml",
            "bots/b1/episodes/2026/11/ep1.md",
            "bots/b1/episodes/2026/11/ep2.md",
        ],
        "memvault: update\n\nlonger body",
    )
    assert sha2 is not None and sha2 != sha1
    assert commit_count(repo) == 2
    assert git(repo, "rev-parse", "HEAD^").strip() == sha1
    assert changed_in(repo) == [
        "A\tbots/b1/episodes/2026/11/ep2.md",
        "D\tbots/b1/episodes/2026/11/ep1.md",
        "M\tbots/b1/sessions/group_1/profile.yaml",
    ]
    assert git(repo, "log", "-1", "--format=%B").strip() == "memvault: update\n\nlonger body"
    assert git(repo, "show", "HEAD:bots/b1/sessions/group_1/profile.yaml") == "name: Alice B\n"
    assert git(repo, "ls-tree", "-r", "--name-only", "HEAD").split() == [
        "bots/b1/episodes/2026/11/ep2.md",
        "bots/b1/sessions/group_1/profile.yaml",
    ]
    # committed paths are clean; the person's file was never touched
    assert status(repo) == ["?? not-mine.md"]
    git(repo, "fsck", "--strict")


def test_persons_staged_and_unstaged_edits_are_left_alone(repo: Path) -> None:
    for rel in ("notes/staged.md", "notes/unstaged.md", "bots/b/profile.yaml"):
        write(repo, rel, f"v1 {rel}\n")
    git(repo, "add", ".")
    git(repo, *PERSON, "commit", "-q", "-m", "person: base")

    write(repo, "notes/staged.md", "v2 staged by person\n")
    write(repo, "notes/new-staged.md", "new, staged by person\n")
    git(repo, "add", "notes/staged.md", "notes/new-staged.md")
    write(repo, "notes/staged.md", "v3 edited again after staging\n")
    write(repo, "notes/unstaged.md", "v2 unstaged by person\n")
    write(repo, "notes/untracked.md", "untracked\n")
    before = status(repo)
    staged_diff = git(repo, "diff", "--cached")
    unstaged_diff = git(repo, "diff")

    write(repo, "bots/b/profile.yaml", "v2 by memvault\n")
    write(repo, "bots/b/episodes/ep.md", "episode\n")
    sha = commit_paths(repo, ["bots/b/profile.yaml", "bots/b/episodes/ep.md"], "memvault: write")

    assert sha is not None
    assert changed_in(repo) == ["A\tbots/b/episodes/ep.md", "M\tbots/b/profile.yaml"]
    assert status(repo) == before
    assert git(repo, "diff", "--cached") == staged_diff
    assert git(repo, "diff") == unstaged_diff
    git(repo, "fsck", "--strict")

    # The person's next commit takes exactly what they staged and does not undo ours.
    git(repo, *PERSON, "commit", "-q", "-m", "person: notes")
    assert changed_in(repo) == ["A\tnotes/new-staged.md", "M\tnotes/staged.md"]
    assert git(repo, "show", "HEAD:notes/staged.md") == "v2 staged by person\n"
    assert git(repo, "show", "HEAD:bots/b/profile.yaml") == "v2 by memvault\n"
    assert git(repo, "show", "HEAD:bots/b/episodes/ep.md") == "episode\n"


def test_unborn_head_then_noop_returns_none(repo: Path) -> None:
    write(repo, ".gitignore", ".memvault/\n")
    write(repo, "README.md", "# vault\n")
    sha = commit_paths(repo, [".gitignore", "README.md"], "memvault: init")
    assert sha is not None
    assert commit_count(repo) == 1
    assert git(repo, "rev-list", "--parents", "-1", "HEAD").split() == [sha]
    assert git(repo, "rev-parse", "refs/heads/main").strip() == sha

    assert commit_paths(repo, [".gitignore", "README.md"], "nothing changed") is None
    assert commit_paths(repo, ["never/existed.md"], "deleting nothing") is None
    assert commit_paths(repo, [], "no paths") is None
    assert commit_count(repo) == 1
    assert not (repo / ".git" / "index.lock").exists()
    assert status(repo) == []


def test_noop_on_unborn_head_makes_no_commit(repo: Path) -> None:
    assert commit_paths(repo, ["missing.md"], "nothing") is None
    assert git(repo, "rev-list", "--all").strip() == ""


def test_not_a_repository_warns_once_and_touches_nothing(tmp_path: Path, caplog) -> None:
    write(tmp_path, "ep.md", "hello\n")
    before = sorted(p.name for p in tmp_path.iterdir())
    with caplog.at_level(logging.WARNING, logger="vault.git.gitlog"):
        assert commit_paths(tmp_path, ["ep.md"], "m") is None
        assert commit_paths(tmp_path, ["ep.md"], "m") is None
    assert (tmp_path / "ep.md").read_text(encoding="utf-8") == "hello\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [f'git=off reason=not_a_repository root={tmp_path} hint="run memvault init"']
    assert file_history(tmp_path, "ep.md") == []


def test_works_without_git_binary(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    root = tmp_path / "vault"
    script = textwrap.dedent(
        f"""
        import shutil
        from pathlib import Path
        from vault.git.gitlog import commit_paths, init_repo

        assert shutil.which("git") is None, shutil.which("git")
        root = Path({str(root)!r})
        init_repo(root)
        (root / "ep.md").write_text("no git here\\n")
        print(commit_paths(root, ["ep.md"], "memvault: without git"))
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(PATH=str(bin_dir), PYTHONPATH=str(REPO_ROOT))
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    sha = done.stdout.strip()
    assert sha == git(root, "rev-parse", "HEAD").strip()
    assert git(root, "log", "--format=%s", "--name-only").split("\n")[:3] == [
        "memvault: without git",
        "",
        "ep.md",
    ]
    assert status(root) == []
    git(root, "fsck", "--strict")


def test_file_history_newest_first(repo: Path) -> None:
    shas = []
    for i in range(3):
        write(repo, "ep.md", f"version {i}\n")
        write(repo, "other.md", f"other {i}\n")
        paths = ["ep.md", "other.md"] if i != 1 else ["other.md"]
        shas.append(commit_paths(repo, paths, f"change {i}\n\nbody"))
    write(repo, "ep.md", "version 3\n")
    shas.append(commit_paths(repo, ["ep.md"], "change 3"))

    history = file_history(repo, "ep.md")
    assert [c.sha for c in history] == [shas[3], shas[2], shas[0]]
    assert [c.message for c in history] == ["change 3", "change 2", "change 0"]
    assert all(isinstance(c, CommitInfo) and c.timestamp.tzinfo == UTC for c in history)
    assert history[0].author == "MemVault <memvault@localhost>"
    assert git(repo, "log", "--format=%H", "--", "ep.md").split() == [c.sha for c in history]
    assert [c.sha for c in file_history(repo, "ep.md", limit=2)] == [shas[3], shas[2]]
    assert [c.sha for c in file_history(repo, "other.md")] == shas[2::-1]
    assert file_history(repo, "nope.md") == []


def test_file_history_on_unborn_head_is_empty(repo: Path) -> None:
    assert file_history(repo, "ep.md") == []


def test_author_comes_from_repo_config(repo: Path) -> None:
    git(repo, "config", "user.name", "Vault Owner")
    git(repo, "config", "user.email", "owner@example.com")
    write(repo, "ep.md", "x\n")
    commit_paths(repo, ["ep.md"], "m")
    assert git(repo, "log", "-1", "--format=%an <%ae>|%cn <%ce>").strip() == (
        "Vault Owner <owner@example.com>|Vault Owner <owner@example.com>"
    )


def test_author_falls_back_to_global_config(repo: Path) -> None:
    subprocess.run([GIT or "git", "config", "--global", "user.name", "Global Person"], check=True)
    write(repo, "ep.md", "x\n")
    commit_paths(repo, ["ep.md"], "m")
    assert git(repo, "log", "-1", "--format=%an <%ae>").strip() == (
        "Global Person <memvault@localhost>"
    )


def test_detached_head_is_not_committed_onto(repo: Path) -> None:
    """A commit on a detached HEAD belongs to no branch: the next `git switch` would delete
    the file from disk with it (tests/vault/git/test_adversarial_git.py has the whole story)."""
    write(repo, "ep.md", "1\n")
    first = commit_paths(repo, ["ep.md"], "one")
    git(repo, "checkout", "-q", "--detach")
    write(repo, "ep.md", "2\n")
    with pytest.raises(GitCommitError, match="HEAD is detached"):
        commit_paths(repo, ["ep.md"], "two")
    assert git(repo, "rev-parse", "HEAD").strip() == first
    assert git(repo, "rev-parse", "main").strip() == first
    assert not (repo / ".git" / "index.lock").exists()


def test_locked_index_raises_and_commits_nothing(repo: Path, monkeypatch) -> None:
    monkeypatch.setattr(gitrepo, "LOCK_WAIT_SECONDS", 0.05)
    write(repo, "ep.md", "x\n")
    (repo / ".git" / "index.lock").write_bytes(b"")
    with pytest.raises(GitCommitError, match="index.lock"):
        commit_paths(repo, ["ep.md"], "m")
    assert git(repo, "rev-list", "--all").strip() == ""


@pytest.mark.parametrize(
    "bad", ["", "/abs.md", "a//b.md", "../up.md", "a/./b.md", "a\\b.md", ".git/config", "a/"]
)
def test_bad_paths_are_refused(repo: Path, bad: str) -> None:
    with pytest.raises(ValueError):
        commit_paths(repo, [bad], "m")


def test_file_replacing_a_tracked_folder_is_refused_and_unlocks(repo: Path) -> None:
    write(repo, "a/b.md", "x\n")
    commit_paths(repo, ["a/b.md"], "m")
    (repo / "a" / "b.md").unlink()
    (repo / "a").rmdir()
    write(repo, "a", "now a file\n")
    with pytest.raises(GitCommitError, match="folder in HEAD"):
        commit_paths(repo, ["a"], "m")
    assert not (repo / ".git" / "index.lock").exists()
    assert commit_count(repo) == 1


def test_a_single_str_is_not_taken_for_a_list_of_paths(repo: Path) -> None:
    with pytest.raises(TypeError):
        commit_paths(repo, "ep.md", "m")


def test_split_index_is_refused_not_corrupted(repo: Path) -> None:
    write(repo, "ep.md", "1\n")
    commit_paths(repo, ["ep.md"], "one")
    git(repo, "update-index", "--split-index")
    write(repo, "ep.md", "2\n")
    with pytest.raises(GitCommitError, match="split or sparse"):
        commit_paths(repo, ["ep.md"], "two")
    assert commit_count(repo) == 1
    assert status(repo) == [" M ep.md"]


def test_concurrent_writers_each_get_their_commit(repo: Path) -> None:
    def worker(n: int) -> list[str | None]:
        shas = []
        for i in range(5):
            write(repo, f"w{n}/ep{i}.md", f"{n} {i}\n")
            shas.append(commit_paths(repo, [f"w{n}/ep{i}.md"], f"w{n} ep{i}"))
        return shas

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = [sha for shas in pool.map(worker, range(4)) for sha in shas]
    assert None not in results
    assert commit_count(repo) == 20
    assert len(git(repo, "ls-tree", "-r", "--name-only", "HEAD").split()) == 20
    assert status(repo) == []
    git(repo, "fsck", "--strict")
