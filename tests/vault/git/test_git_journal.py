"""Issue 20 item 6: a git journal line never sweeps a person's files into MemVault's commit.

The journal (`.memvault/git-pending.jsonl`) records, per path, the sha256 of what MemVault
wrote (or that it deleted the path); a later commit takes a journal path only while it still
holds exactly that. README.md, a person's notes, another chat's hand-written episode, a file
a killed writer meant to write and a person wrote instead, a memory a person edited after a
failed commit: all stay uncommitted and byte-for-byte as the person left them, are dropped
from the journal and are said. Lines of an older MemVault (paths alone) are never committed.
Real git repositories (read back with the git binary), real SIGKILLed writers.
"""

from __future__ import annotations

import hashlib
import json
import logging
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import git
from vault.git import gitplan, gitstate
from vault.layout.keys import ScopeId
from vault.layout.layout import STATE_DIR
from vault.writes.create import init_vault
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

CHAT = ScopeId("b1", "group_1")
OTHER_CHAT = "bots/b1/sessions/group_2/episodes/2026/11/ep_20261101_hand01.md"
HAND = "---\nid: ep_20261101_hand01\n---\nwritten by hand in another chat\n"
# A real `memvault remember` that stops (and says so) just before it writes its episode,
# after journaling it, so the SIGKILL lands between the intent and the write.
STALLED_WRITE = r"""
import sys, time
from vault.files import safewrite
real = safewrite._write_temp
def stall(target, data):
    if target.name.startswith("ep_"):
        print("stalled", flush=True)
        time.sleep(120)
    return real(target, data)
safewrite._write_temp = stall
from memvault_cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    vault = tmp_path / "memory"
    init_vault(vault)
    Vault(vault).remember(NewEpisode(CHAT, "the first memory"))
    return vault


def head_file(root: Path, rel: str) -> str | None:
    """`rel` as HEAD has it, or None when HEAD has no such file."""
    listed = git(root, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
    return git(root, "show", f"HEAD:{rel}") if rel in listed else None


def journal(root: Path, *lines: dict) -> None:
    path = root / STATE_DIR / gitstate.PENDING_NAME
    with path.open("a", encoding="utf-8") as f:
        f.writelines(json.dumps(line) + "\n" for line in lines)


def person_files(root: Path) -> dict[str, str]:
    """A person's work, all uncommitted: an edit of the committed README.md, an untracked
    notes file, another chat's hand-written episode (committed, then edited again)."""
    (root / "README.md").write_text("our vault\n")
    (root / OTHER_CHAT).parent.mkdir(parents=True)
    (root / OTHER_CHAT).write_text(HAND)
    git(root, "add", "README.md", OTHER_CHAT)
    git(root, "-c", "user.name=P", "-c", "user.email=p@x", "commit", "-q", "-m", "by hand")
    (root / "README.md").write_text("our vault\nmy uncommitted line\n")
    (root / "notes").mkdir()
    (root / "notes" / "todo.md").write_text("private: call the bank\n")
    (root / OTHER_CHAT).write_text(HAND + "an uncommitted edit\n")
    return {p: (root / p).read_text() for p in ("README.md", "notes/todo.md", OTHER_CHAT)}


@pytest.mark.parametrize(
    "shape",
    [
        "old",  # an older MemVault's line: paths alone
        "other_bytes",  # says MemVault wrote bytes these files do not hold
        "head_bytes",  # says MemVault wrote what HEAD holds: the person edited since
        "deleted",  # says MemVault deleted them: they are there
    ],
)
def test_a_journal_line_never_commits_a_persons_uncommitted_files(root: Path, shape: str, caplog):
    edits = person_files(root)
    names = list(edits)
    head_before = {p: head_file(root, p) for p in names}
    if shape == "old":
        journal(root, {"op": "x", "message": "remember", "paths": names, "owner": None})
    else:
        digest = {
            "other_bytes": lambda p: sha(b"something else"),
            "head_bytes": lambda p: sha((head_before[p] or "").encode()),
            "deleted": lambda p: None,
        }[shape]
        files = {p: digest(p) for p in names}
        journal(root, {"op": "x", "message": "remember", "files": files, "owner": None})

    episode = Vault(root).remember(NewEpisode(CHAT, "the next memory"))

    for rel in names:
        assert head_file(root, rel) == head_before[rel], rel  # HEAD has none of the edits
        assert (root / rel).read_text() == edits[rel], rel  # the working files untouched
    assert episode.id in git(root, "show", "--name-only", "--format=", "HEAD")
    assert gitstate.read_pending(root / STATE_DIR) == []  # dropped from the journal
    said = [getattr(r, "plain", "") for r in caplog.records if r.levelno == logging.WARNING]
    assert any("3 files (README.md, notes/todo.md," in s and "is not committed" in s for s in said)
    # The person's work is still theirs to commit: git sees it as uncommitted.
    status = git(root, "status", "--porcelain", "--untracked-files=all")
    assert " M README.md" in status and "?? notes/todo.md" in status


def test_a_killed_writers_intent_for_a_file_a_person_wrote_later_is_not_committed(root: Path):
    child = subprocess.Popen(
        [sys.executable, "-c", STALLED_WRITE, "remember", "--vault", str(root)]
        + ["--bot", "b1", "--session", "group_1", "the memory that was never written"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stdout.readline().strip() == "stalled"
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    (intent,) = [
        p for op in gitstate.read_pending(root / STATE_DIR) for p in op.paths if "/episodes/" in p
    ]
    assert not (root / intent).exists()  # killed before the write
    (root / intent).parent.mkdir(parents=True, exist_ok=True)
    (root / intent).write_text("a person's own file under the name MemVault meant\n")

    Vault(root).remember(NewEpisode(CHAT, "the next memory"))

    assert head_file(root, intent) is None
    assert (root / intent).read_text() == "a person's own file under the name MemVault meant\n"
    assert gitstate.read_pending(root / STATE_DIR) == []


def test_a_memory_a_person_edits_after_a_failed_commit_is_left_with_their_edit(root: Path):
    """The commit fails (detached HEAD); a person edits the memory MemVault wrote; once the
    branch is back, the next operation commits the rest of the failed one's files, not it."""
    vault = Vault(root)
    git(root, "checkout", "-q", "--detach")
    stuck = vault.remember(NewEpisode(CHAT, "saved while the commit failed"))
    assert vault.commit_failure is not None
    path = next((root / "bots").rglob(f"{stuck.id}.md"))
    rel = path.relative_to(root).as_posix()
    path.write_text(path.read_text() + "a person's uncommitted note\n")
    edited = path.read_text()
    git(root, "checkout", "-q", "main")

    vault.remember(NewEpisode(CHAT, "the next memory"))

    assert vault.commit_failure is None
    assert head_file(root, rel) is None and path.read_text() == edited
    audit = "bots/b1/sessions/group_1/audit.jsonl"
    assert head_file(root, audit) == (root / audit).read_text()  # its audit line is in
    assert gitstate.read_pending(root / STATE_DIR) == []


def test_what_a_killed_writer_did_write_is_still_made_up(root: Path):
    """The control: a journaled file that holds exactly what MemVault wrote is committed
    by the next operation (and a path MemVault deleted, still absent, is removed)."""
    gone = next((root / "bots").rglob("ep_*.md"))  # the first memory, committed
    gone_rel = gone.relative_to(root).as_posix()
    gone.unlink()
    written = root / "bots/b1/sessions/group_1/episodes/2026/11/ep_20261101_made01.md"
    written.parent.mkdir(parents=True, exist_ok=True)
    written.write_bytes(b"---\nid: ep_20261101_made01\n---\nwritten, then killed\n")
    files = {written.relative_to(root).as_posix(): sha(written.read_bytes()), gone_rel: None}
    journal(root, {"op": "k", "message": "remember b1/group_1 (interrupted)", "files": files})

    Vault(root).remember(NewEpisode(CHAT, "the next memory"))

    assert head_file(root, written.relative_to(root).as_posix()) == written.read_text()
    assert head_file(root, gone_rel) is None
    assert "remember b1/group_1 (interrupted)" in git(root, "log", "-1", "--format=%B")


def test_a_long_journal_left_by_failing_commits_is_compacted(root: Path, monkeypatch):
    """Commits that keep failing leave lines behind; past COMPACT_LINES a failed commit
    rewrites the journal to what is still pending, and the next commit makes all of it up."""
    monkeypatch.setattr(gitplan, "COMPACT_LINES", 10)
    vault = Vault(root)
    git(root, "checkout", "-q", "--detach")
    stuck = [
        vault.remember(NewEpisode(CHAT, f"memory {i} while the commit fails")).id for i in range(6)
    ]
    state = root / STATE_DIR
    lines = (state / gitstate.PENDING_NAME).read_text().splitlines()
    # Without compaction: 3 lines per operation (18); with it, never past the threshold
    # by more than one operation's lines.
    assert len(lines) <= 10 + 3
    assert "journal compacted" in lines[0]
    assert set(gitstate.pending_paths(gitstate.read_pending(state))) >= {
        p.relative_to(root).as_posix() for i in stuck for p in (root / "bots").rglob(f"{i}.md")
    }
    git(root, "checkout", "-q", "main")

    vault.remember(NewEpisode(CHAT, "the next memory"))

    assert vault.commit_failure is None
    committed = git(root, "ls-tree", "-r", "--name-only", "HEAD")
    assert all(i in committed for i in stuck)
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""
    assert gitstate.read_pending(state) == []


def test_an_old_journal_line_is_not_counted_as_pending_by_status(root: Path):
    journal(root, {"op": "x", "message": "m", "paths": ["README.md"], "owner": None})
    assert gitstate.pending_paths(gitstate.read_pending(root / STATE_DIR)) == []
    assert gitstate.problem(root / STATE_DIR) is None


def test_a_long_journal_makes_up_one_readable_commit(root: Path):
    """5,000 interrupted operations: one made-up commit whose message lists 20 of them and
    counts the rest (not 5,000 lines), and every file they really wrote is in it."""
    folder = root / "bots/b1/sessions/group_1/episodes/2026/11"
    lines = []
    for n in range(5_000):
        rel = f"{folder.relative_to(root).as_posix()}/ep_20261101_{n % 50:06d}.md"
        data = f"memory {n % 50}\n".encode()
        if n < 50:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(data)
        lines.append({"op": f"op{n}", "message": f"remember op{n}", "files": {rel: sha(data)}})
    journal(root, *lines)

    Vault(root).remember(NewEpisode(CHAT, "the next memory"))

    body = git(root, "log", "-1", "--format=%B").splitlines()
    listed = [line for line in body if line.startswith("- remember op")]
    assert len(listed) == gitplan.MESSAGES_SHOWN and "- and 4980 more" in body
    tracked = git(root, "ls-files").splitlines()
    assert sum(1 for p in tracked if "/ep_20261101_0000" in p) == 50
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""


def test_a_journal_line_nested_thousands_deep_is_a_damaged_line_not_a_crash(root: Path):
    # RecursionError is no ValueError: such a line used to stop every later write.
    state = root / STATE_DIR
    with (state / gitstate.PENDING_NAME).open("a", encoding="utf-8") as out:
        out.write("[" * 5000 + "]" * 5000 + "\n")
    (state / gitstate.FAILURE_NAME).write_text("{" * 3000 + "\n", encoding="utf-8")

    Vault(root).remember(NewEpisode(CHAT, "the next memory"))

    assert "remember" in git(root, "log", "-1", "--format=%B")
    assert "the next memory" in git(root, "show", "HEAD", "--format=")
