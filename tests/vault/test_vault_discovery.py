"""`cd memory && memvault list ...` works (issue 15 follow-up): a command finds the vault
the current folder is in, like git finds its repository, but never a folder that is not a
MemVault vault, never another user's, and never over an explicit --vault or
$MEMVAULT_VAULT. The command in-process (tests/helpers/cli_run.py); real folders, git, clones."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import git
from tests.helpers.cli_run import SCOPE, memvault
from vault.layout.discovery import enclosing_vault, is_vault, locate

TEXT = "Alice is going to Beijing"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    memvault("init", "memory", cwd=tmp_path)
    memvault("remember", TEXT, *SCOPE, cwd=tmp_path)
    return tmp_path / "memory"


def test_a_command_run_inside_the_vault_uses_that_vault(root: Path):
    deep = root / "bots" / "b1" / "sessions" / "group_123"
    for cwd in (root, root / "bots", deep):
        assert TEXT in memvault("list", *SCOPE, cwd=cwd).stdout, cwd
    assert memvault("check", cwd=deep).stdout.startswith("checked 1 memory file")
    new = memvault("remember", "Bob prefers tea", *SCOPE, cwd=deep).stdout.strip()
    # Written into the vault above, not into a new ./memory below the current folder.
    assert not (deep / "memory").exists()
    assert [p.stem for p in root.rglob(f"{new}.md")] == [new]
    assert "Bob prefers tea" in memvault("show", new, *SCOPE, cwd=root.parent).stdout


def test_a_fresh_clone_of_a_vault_is_found_without_its_state_folder(root: Path, tmp_path: Path):
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(root), str(clone))
    assert not (clone / ".memvault").exists()  # git-ignored: a clone never has it
    assert TEXT in memvault("list", *SCOPE, cwd=clone / "bots").stdout


def test_an_explicit_vault_always_wins_over_the_folder_it_is_run_in(root: Path, tmp_path: Path):
    other = tmp_path / "other"
    memvault("init", str(other), cwd=tmp_path)
    memvault("remember", "only in the other vault", *SCOPE, "--vault", str(other), cwd=root)
    listed = memvault("list", *SCOPE, "--vault", str(other), cwd=root).stdout
    assert "only in the other vault" in listed and TEXT not in listed
    by_env = memvault("list", *SCOPE, cwd=root, env_vault=str(other)).stdout
    assert "only in the other vault" in by_env and TEXT not in by_env
    # A missing one is an error naming where it came from, never a fallback to this vault.
    err = memvault("list", *SCOPE, cwd=root, env_vault=str(tmp_path / "gone"), code=2).stderr
    assert f"no vault at {tmp_path / 'gone'} (from $MEMVAULT_VAULT)" in err
    err = memvault("list", *SCOPE, "--vault", "nope", cwd=root, code=2).stderr
    assert f"no vault at {root / 'nope'} (from --vault)" in err


def test_memory_below_the_current_folder_is_still_the_default(root: Path):
    # root.parent is no vault: ./memory is, as before.
    assert TEXT in memvault("list", *SCOPE, cwd=root.parent).stdout


@pytest.mark.parametrize(
    "marks",
    [
        ("bots/",),  # a LangBot project's own bots folder is no vault
        (".memvault/",),
        (".gitignore",),
        ("bots/", ".gitignore"),  # a .gitignore that does not list .memvault/
        ("bots/", "link:.memvault"),  # the state folder as a link is refused anyway
    ],
)
def test_a_folder_without_the_marks_init_makes_is_never_used(tmp_path: Path, marks):
    here = tmp_path / "project"
    here.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for mark in marks:
        if mark.endswith("/"):
            (here / mark).mkdir()
        elif mark.startswith("link:"):
            (here / mark[5:]).symlink_to(elsewhere, target_is_directory=True)
        else:
            (here / mark).write_text("node_modules/\n", encoding="utf-8")
    err = memvault("list", *SCOPE, cwd=here, code=2).stderr
    assert err.startswith(f"memvault: error: no vault at {here / 'memory'} (the default ./memory)")
    assert f"neither {here} nor a folder above it is a MemVault vault" in err
    assert "`memvault init memory`" in err
    assert not list(elsewhere.iterdir())  # nothing was written anywhere


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown needs root")
def test_a_vault_of_another_user_above_the_current_folder_is_refused(root: Path):
    inside = root / "bots"
    os.chown(root, 4242, 4242)
    try:
        err = memvault("list", *SCOPE, cwd=inside, code=2).stderr
        assert f"{root} (found above the current folder) belongs to uid 4242, not to you" in err
        assert f"--vault {root}" in err
        # Trusted explicitly, it is used.
        assert TEXT in memvault("list", *SCOPE, "--vault", str(root), cwd=inside).stdout
    finally:
        os.chown(root, 0, 0)


def test_init_never_adopts_the_vault_it_is_run_in(root: Path, monkeypatch):
    monkeypatch.chdir(root / "bots")
    monkeypatch.delenv("MEMVAULT_VAULT", raising=False)
    path, located = locate(None, search=False)
    assert path == Path("memory") and not located.explicit
    found, how = locate(None)
    assert found == root and how.how == "found above the current folder"


KINDS = ("absent", "dir", "file", "link")


def _make(path: Path, kind: str, target: Path, text: str = "") -> None:
    if kind == "dir":
        path.mkdir()
    elif kind == "file":
        path.write_text(text, encoding="utf-8")
    elif kind == "link":
        path.symlink_to(target, target_is_directory=target.is_dir())


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    bots=st.sampled_from(KINDS),
    state=st.sampled_from(KINDS),
    ignore=st.sampled_from(("absent", "lists", "lists-no-slash", "other", "link")),
)
def test_is_vault_is_exactly_the_marks_init_leaves(tmp_path: Path, bots, state, ignore):
    folder = tmp_path / f"f{len(list(tmp_path.iterdir()))}"
    folder.mkdir()
    real_dir = tmp_path / "target_dir"
    real_dir.mkdir(exist_ok=True)
    listing = tmp_path / "target.gitignore"
    listing.write_text(".memvault/\n", encoding="utf-8")
    _make(folder / "bots", bots, real_dir)
    _make(folder / ".memvault", state, real_dir)
    lines = {"lists": "# x\n.memvault/\n", "lists-no-slash": ".memvault\n", "other": "*.tmp\n"}
    if ignore == "link":
        (folder / ".gitignore").symlink_to(listing)
    elif ignore in lines:
        (folder / ".gitignore").write_text(lines[ignore], encoding="utf-8")
    expected = bots == "dir" and (state == "dir" or ignore in ("lists", "lists-no-slash"))
    assert is_vault(folder) == expected
    # Searching from a folder inside finds it exactly when it is a vault.
    inner = folder / "inner"
    inner.mkdir()
    found = enclosing_vault(inner)
    assert (found == folder) == expected and (found is None or is_vault(found))
