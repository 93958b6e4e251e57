"""Names MemVault itself reads and writes (`audit.jsonl`, `profile.yaml`, `speakers/<id>.yaml`,
a hashed folder's `.id`, the `.memvault/` state folder) planted as something other than a
plain file: a link out of the vault (dangling or not), a FIFO, a socket, a folder.

Through the CLI in-process with a deadline (cli_run's `within`: SIGALRM interrupts a blocked
open), because the old failure was a hang: a FIFO opened for reading or appending blocks
forever, while the writer lock is held. Each
case must answer within the timeout with one line naming the path, write nothing outside
the vault, and `check` must finish and name the path too.
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers.cli_run import Ran, run_main
from vault.layout.names import encode_name
from vault.writes.create import init_vault

TIMEOUT = 20.0
LONG_SESSION = "s" * 130  # past the 120-byte folder cap: a hashed name with a `.id` file
SESSION_DIR = "bots/b1/sessions/group_1"
HASHED_DIR = f"bots/b1/sessions/{encode_name(LONG_SESSION)}"


def run(vault: Path, *args: str) -> Ran:
    return run_main(*args, env_vault=vault, within=TIMEOUT)


def plant_link_out(target: Path, outside: Path) -> None:
    os.symlink(outside / "escaped", target)  # dangling: a plain exists() says False


def plant_link_to_file(target: Path, outside: Path) -> None:
    (outside / "existing").write_text("someone else's file\n", encoding="utf-8")
    os.symlink(outside / "existing", target)


def plant_fifo(target: Path, outside: Path) -> None:
    os.mkfifo(target)


def plant_socket(target: Path, outside: Path) -> None:
    sock = socket.socket(socket.AF_UNIX)
    with contextlib.chdir(target.parent):  # a socket path is at most 107 bytes: bind by name
        sock.bind(target.name)
    sock.close()  # the socket file stays


def plant_folder(target: Path, outside: Path) -> None:
    target.mkdir()


PLANTS: dict[str, Callable[[Path, Path], None]] = {
    "link_out": plant_link_out,
    "link_to_file": plant_link_to_file,
    "fifo": plant_fifo,
    "socket": plant_socket,
    "folder": plant_folder,
}

# (name planted, the write that must use it, its arguments)
TARGETS = {
    "audit": (f"{SESSION_DIR}/audit.jsonl", ["remember", "hello", "--bot", "b1"]),
    "profile": (
        f"{SESSION_DIR}/profile.yaml",
        ["profile", "add", "traits", "calm", "--bot", "b1", "--session", "group_1"],
    ),
    "speaker": (
        f"{SESSION_DIR}/speakers/u1.yaml",
        ["profile", "add", "traits", "calm", "--bot", "b1", "--session", "group_1"]
        + ["--speaker", "u1"],
    ),
    "id_file": (f"{HASHED_DIR}/.id", ["remember", "hello", "--bot", "b1"]),
}


def _session_args(target: str) -> list[str]:
    return ["--session", LONG_SESSION if target == "id_file" else "group_1"]


def _outside_snapshot(outside: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in outside.iterdir() if p.is_file()}


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    init_vault(root, git=True)
    return root


@pytest.mark.parametrize("plant", sorted(PLANTS))
@pytest.mark.parametrize("target", sorted(TARGETS))
def test_planted_name_is_refused_at_once_and_nothing_leaves_the_vault(
    vault: Path, tmp_path: Path, plant: str, target: str
) -> None:
    rel, command = TARGETS[target]
    outside = tmp_path / "outside"
    outside.mkdir()
    path = vault / rel
    path.parent.mkdir(parents=True)
    PLANTS[plant](path, outside)
    before = _outside_snapshot(outside)
    args = [*command, *_session_args(target)] if command[0] == "remember" else command

    result = run(vault, *args)  # the old code hung here for a FIFO (TimeoutExpired)

    assert result.returncode == 2, (result.returncode, result.stderr)
    assert rel in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    # Nothing was written through a link: the outside folder is exactly as planted.
    assert _outside_snapshot(outside) == before
    assert not (outside / "escaped").exists()
    # Refused before anything was saved: no episode file anywhere in the vault.
    assert not [p for p in (vault / "bots").rglob("*.md") if p.is_file()]


@pytest.mark.parametrize("plant", ["fifo", "socket", "link_out"])
@pytest.mark.parametrize("target", sorted(TARGETS))
def test_check_finishes_and_names_the_planted_path(
    vault: Path, tmp_path: Path, plant: str, target: str
) -> None:
    rel, _ = TARGETS[target]
    outside = tmp_path / "outside"
    outside.mkdir()
    path = vault / rel
    path.parent.mkdir(parents=True)
    PLANTS[plant](path, outside)
    if target == "id_file":  # a memory under the hashed folder, so the folder matters
        (path.parent / "episodes").mkdir()
        (path.parent / "episodes" / "a.md").write_text("hello\n", encoding="utf-8")

    result = run(vault, "check")  # the old code hung reading a FIFO `.id`

    assert result.returncode == 1, result
    shown = HASHED_DIR if target == "id_file" else rel
    assert f"{shown}:1:" in result.stdout, result.stdout


def test_an_episode_fifo_is_reported_by_check_not_silently_skipped(vault: Path) -> None:
    episodes = vault / SESSION_DIR / "episodes"
    episodes.mkdir(parents=True)
    os.mkfifo(episodes / "pipe.md")
    result = run(vault, "check")
    assert result.returncode == 1
    assert f"{SESSION_DIR}/episodes/pipe.md:1: not a regular file" in result.stdout


def test_a_hashed_folder_still_gets_its_id_file_and_is_found(vault: Path) -> None:
    """The refusal above must not break the ordinary case: a long id writes a plain `.id`."""
    result = run(vault, "remember", "long chat memory", "--bot", "b1", *_session_args("id_file"))
    assert result.returncode == 0, result.stderr
    marker = vault / HASHED_DIR / ".id"
    assert not marker.is_symlink() and marker.read_text(encoding="utf-8") == LONG_SESSION
    listed = run(vault, "list", "--bot", "b1", *_session_args("id_file"))
    assert "long chat memory" in listed.stdout


@pytest.mark.parametrize("kind", ["link", "file"])
@pytest.mark.parametrize(
    "command",
    [
        ["remember", "x", "--bot", "b1", "--session", "group_1"],
        ["search", "x", "--bot", "b1", "--session", "group_1"],
        ["reindex"],
        ["status"],
        ["check"],
    ],
)
def test_state_folder_that_is_a_link_is_refused(
    vault: Path, tmp_path: Path, kind: str, command: list[str]
) -> None:
    """`.memvault` as a link (it can even be committed: `.memvault/` in .gitignore matches a
    folder only) would put indexes, caches and locks anywhere on the machine."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    state = vault / ".memvault"
    for child in sorted(state.rglob("*"), reverse=True):
        child.rmdir() if child.is_dir() else child.unlink()
    state.rmdir()
    if kind == "link":
        os.symlink(outside, state)
    else:
        state.write_text("not a folder\n", encoding="utf-8")

    result = run(vault, *command)

    assert result.returncode == 2, (result.returncode, result.stderr)
    assert ".memvault is" in result.stderr and "delete it" in result.stderr
    assert list(outside.iterdir()) == []  # nothing written through the link
    assert not [p for p in (vault / "bots").rglob("*.md") if p.is_file()]


@pytest.mark.parametrize(
    "inner", ["git-pending.jsonl", "locks/write.lock", "cache/embeddings.sqlite", "snapshots"]
)
@pytest.mark.parametrize("kind", ["link", "fifo"])
def test_links_and_fifos_inside_the_state_folder_are_refused(
    vault: Path, tmp_path: Path, inner: str, kind: str
) -> None:
    """Files under `.memvault/` can be committed too (`git add -f`), links included: the old
    code appended its git journal to whatever `.memvault/git-pending.jsonl` pointed at."""
    victim = tmp_path / "victim"
    victim.write_text("# a file of the person's\n", encoding="utf-8")
    path = vault / ".memvault" / inner
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_dir():
        path.rmdir()
    path.unlink(missing_ok=True)
    os.symlink(victim, path) if kind == "link" else os.mkfifo(path)

    result = run(vault, "remember", "x", "--bot", "b1", "--session", "group_1")

    assert result.returncode == 2, (result.returncode, result.stderr)
    assert f".memvault/{inner} is" in result.stderr and "delete it" in result.stderr
    assert victim.read_text(encoding="utf-8") == "# a file of the person's\n"
    assert not [p for p in (vault / "bots").rglob("*.md") if p.is_file()]
