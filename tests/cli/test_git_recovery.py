"""A lock left by a dead MemVault process never stops versioning, one held by a person's git
is never removed, and a commit that keeps failing is visible (exit 1, red status/check/health).

Real git repositories, real `memvault` processes killed with SIGKILL, real lock holders
(subprocesses); the command that comes next runs in-process (tests/helpers/cli_run.py).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from console.context import ConsoleContext
from console.endpoints_health import health
from console.requests import Body
from indexer.health import git_check
from tests.conftest import git
from tests.helpers.cli_run import Ran, run_main
from vault.errors import BadRequestError
from vault.files.procs import Owner, boot_token, host_token, process_start
from vault.git import gitrepo, gitstate
from vault.git.gitlock import PIN_PREFIX
from vault.git.gitlog import GitCommitError, commit_paths
from vault.layout.keys import ScopeId
from vault.layout.layout import STATE_DIR
from vault.writes.create import init_vault
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

_SCRIPT = Path(sys.executable).parent / "memvault"
MEMVAULT = (
    [str(_SCRIPT)]
    if _SCRIPT.exists()
    else [sys.executable, "-c", "import sys; from memvault_cli.main import main; sys.exit(main())"]
)
SCOPE = ScopeId(None, "group_1")
FIXTURES = HealthCheck.function_scoped_fixture  # state between examples is reset by hand
# A real `memvault remember` whose commit stops (and says so) at one step while it holds
# index.lock, so the SIGKILL lands there every time instead of by luck.
STALLED_REMEMBER = r"""
import sys, time
from vault.git import gitrepo
step = sys.argv[1]
real = getattr(gitrepo, step)
def stall(*args, **kwargs):
    print("stalled", flush=True)
    time.sleep(120)
    return real(*args, **kwargs)
setattr(gitrepo, step, stall)
from memvault_cli.main import main
sys.exit(main(sys.argv[2:]))
"""
# Holds index.lock the way git does (O_CREAT|O_EXCL) until told to finish, then removes it.
FOREIGN_GIT = r"""
import os, sys
fd = os.open(sys.argv[1], os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
print("held", flush=True)
sys.stdin.readline()
os.close(fd)
os.unlink(sys.argv[1])
"""
# Takes index.lock through MemVault's own function, then sleeps until killed.
MEMVAULT_HOLDER = r"""
import sys, time
from vault.git.gitlock import try_take
lock = try_take(sys.argv[1])
assert lock is not None
print("held", flush=True)
time.sleep(120)
"""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    vault = tmp_path / "memory"
    init_vault(vault)
    return vault


def remember(root: Path, text: str) -> Ran:
    """The next `memvault remember`, in this process (the killed ones are real processes)."""
    return run_main("remember", "--vault", root, "--session", SCOPE.session, text)


def wait_line(proc: subprocess.Popen[str], expected: str) -> None:
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    assert line == expected, f"child said {line!r}; stderr: {proc.stderr and proc.stderr.read()}"


def episodes(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in (root / "bots").rglob("ep_*.md"))


def porcelain(root: Path) -> list[str]:
    return git(root, "status", "--porcelain", "--untracked-files=all").splitlines()


def tracked(root: Path) -> set[str]:
    return set(git(root, "ls-files").splitlines())


def pins(root: Path) -> list[str]:
    return [p.name for p in (root / ".git").iterdir() if p.name.startswith(PIN_PREFIX)]


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def kill(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


@pytest.mark.subprocess
@pytest.mark.parametrize(
    "step",
    [
        "read_index",  # index.lock taken, HEAD not moved yet
        "refresh_entries",  # HEAD moved to the new commit, the index not written yet
    ],
)
def test_remember_killed_holding_index_lock_is_made_up_by_the_next(root: Path, step: str):
    commits_before = int(git(root, "rev-list", "--count", "HEAD"))
    child = subprocess.Popen(
        [sys.executable, "-c", STALLED_REMEMBER, step, "remember", "--vault", str(root)]
        + ["--session", SCOPE.session, "the memory whose commit was killed"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_line(child, "stalled")
    kill(child)
    assert (root / ".git" / "index.lock").exists()  # what the kill leaves behind
    (missed,) = episodes(root)
    assert porcelain(root) != []  # its file (and audit line) are not in the index

    result = remember(root, "the next memory")

    assert result.returncode == 0, result.stderr
    assert "error" not in result.stderr
    if step == "read_index":  # the recovery is said, not silent
        assert f"git=lock_recovered path={root}/.git/index.lock dead_pid={child.pid}" in (
            result.stderr
        )
    assert porcelain(root) == []
    assert not (root / ".git" / "index.lock").exists()
    assert pins(root) == []
    (new,) = set(episodes(root)) - {missed}
    assert {missed, new} <= tracked(root)
    audit = root / "bots/_nobot/sessions/group_1/audit.jsonl"
    assert len(audit.read_text().splitlines()) == 2
    assert git(root, "show", "HEAD:bots/_nobot/sessions/group_1/audit.jsonl") == audit.read_text()
    head = git(root, "log", "-1", "--format=%B")
    assert head.startswith("remember group_1 ")
    if step == "read_index":  # the killed operation never committed: made up now
        assert "Also commits what earlier operations saved" in head
        assert "remember group_1 (interrupted)" in head
        assert int(git(root, "rev-list", "--count", "HEAD")) == commits_before + 1
    else:  # its commit was made; only its index entries were missing
        assert int(git(root, "rev-list", "--count", "HEAD")) == commits_before + 2
    assert gitstate.read_pending(root / STATE_DIR) == []
    assert run_main("check", "--vault", root).returncode == 0


@pytest.mark.subprocess
def test_random_sigkills_of_remember_never_stop_versioning(root: Path):
    """Kill `memvault remember` at random moments (before, in, after the write and the
    commit): the next remember commits everything those left, and nothing is left over."""
    rng = random.Random(20261201)
    for i in range(12):
        proc = subprocess.Popen(
            [*MEMVAULT, "remember", "--vault", str(root), "--session", SCOPE.session]
            + [f"memory number {i}"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        time.sleep(rng.uniform(0.05, 0.6))
        kill(proc)

    result = remember(root, "the memory after the kills")

    assert result.returncode == 0, result.stderr
    assert porcelain(root) == []  # no stale lock, no temp, no uncommitted file
    assert not (root / ".git" / "index.lock").exists()
    assert set(episodes(root)) <= tracked(root)
    assert pins(root) == []
    assert gitstate.problem(root / STATE_DIR) is None


@pytest.mark.subprocess
def test_a_live_foreign_lock_is_never_removed_and_the_failure_is_red(root: Path):
    lock = root / ".git" / "index.lock"
    holder = subprocess.Popen(
        [sys.executable, "-c", FOREIGN_GIT, str(lock)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        wait_line(holder, "held")
        inode = lock.stat().st_ino

        first = remember(root, "saved while git was busy")

        assert first.returncode == 1
        (saved,) = episodes(root)
        assert first.stdout.strip() == Path(saved).stem  # the id is still printed
        message = first.stderr.strip().splitlines()[-1]  # after the logged warning
        assert message.startswith(f"memvault: error: memory saved in {saved}, but not committed")
        assert f"{lock} is held by another git process, not MemVault" in message
        assert "if no git is running, delete that file" in message
        assert lock.stat().st_ino == inode  # the person's lock is untouched
        assert saved not in tracked(root)

        status = run_main("status", "--vault", root, "--json")
        assert status.returncode == 1
        assert json.loads(status.stdout)["git"]["level"] == "ERROR"
        check = run_main("check", "--vault", root)
        assert check.returncode == 1
        assert "ERROR: git: 2 file(s) saved but not committed" in check.stdout
        vault = Vault(root)
        level, detail = git_check(vault, True)
        assert level == "ERROR" and str(lock) in detail
        cards = {c["id"]: c for c in health(ConsoleContext(vault, None), Body({}))["cards"]}
        assert cards["git"]["level"] == "red"

        second = remember(root, "also saved while git was busy")
        assert second.returncode == 1
        assert lock.stat().st_ino == inode
        failure = gitstate.read_failure(root / STATE_DIR)
        assert failure is not None and len(failure.paths) == 3  # two episodes + the audit
    finally:
        assert holder.stdin is not None
        holder.stdin.write("done\n")
        holder.stdin.close()
        holder.wait(timeout=30)
    assert not lock.exists()  # the person's git finished and removed its own lock

    third = remember(root, "saved once git was free")

    assert third.returncode == 0, third.stderr
    assert porcelain(root) == []
    assert set(episodes(root)) <= tracked(root) and len(episodes(root)) == 3
    head = git(root, "log", "-1", "--format=%B")
    assert head.startswith(f"remember group_1 {third.stdout.strip()}\n")
    made_up = [Path(p).stem for p in episodes(root) if Path(p).stem != third.stdout.strip()]
    assert all(f"\n- remember group_1 {ep_id}\n" in head for ep_id in made_up)
    assert run_main("check", "--vault", root).returncode == 0
    assert run_main("status", "--vault", root).returncode == 0
    assert git_check(Vault(root), True)[0] == "OK"
    cards = {c["id"]: c for c in health(ConsoleContext(Vault(root), None), Body({}))["cards"]}
    assert cards["git"]["level"] == "green"


@pytest.mark.subprocess
def test_a_live_memvault_lock_is_waited_for_then_recovered_once_its_owner_is_killed(
    root: Path, monkeypatch
):
    monkeypatch.setattr(gitrepo, "LOCK_WAIT_SECONDS", 0.2)
    index = str(root / ".git" / "index")
    child = subprocess.Popen(
        [sys.executable, "-c", MEMVAULT_HOLDER, index], stdout=subprocess.PIPE, text=True
    )
    (root / "ep.md").write_text("x\n")
    try:
        wait_line(child, "held")
        with pytest.raises(GitCommitError, match=f"held by MemVault process {child.pid}"):
            commit_paths(root, ["ep.md"], "while held")
        assert (root / ".git" / "index.lock").exists()
    finally:
        kill(child)
    sha = commit_paths(root, ["ep.md"], "after the kill")
    assert sha is not None and git(root, "rev-parse", "HEAD").strip() == sha
    assert porcelain(root) == []
    assert pins(root) == []


_OWNER_CASES = st.fixed_dictionaries(
    {
        "host": st.booleans(),  # same host?
        "boot": st.booleans(),  # same boot?
        "alive": st.booleans(),  # is the pid running?
        "start": st.booleans(),  # does the start time match?
        "pinned": st.booleans(),  # is index.lock the pin's inode?
    }
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=_OWNER_CASES)
def test_a_lock_is_removed_only_when_provably_a_dead_memvaults(root: Path, case, monkeypatch):
    """Every combination of owner facts: removed iff pinned, same host, and the owner gone
    (another boot, a dead pid, or the pid reused by a process started at another time)."""
    monkeypatch.setattr(gitrepo, "LOCK_WAIT_SECONDS", 0.05)
    git_dir = root / ".git"
    for leftover in [*git_dir.glob(PIN_PREFIX + "*"), git_dir / "index.lock"]:
        leftover.unlink(missing_ok=True)
    pid = os.getpid() if case["alive"] else dead_pid()
    start = process_start(pid) if case["alive"] else 1
    me = Owner.me()
    owner = Owner(
        me.host if case["host"] else "0badc0ffee00",
        me.boot if case["boot"] else "0000deadbeef",
        pid,
        start if case["start"] else start + 7,
    )
    pin = git_dir / f"{PIN_PREFIX}{owner.host}.{owner.boot}.{owner.pid}.{owner.start}.ab12.pin"
    pin.write_bytes(b"")
    lock = git_dir / "index.lock"
    if case["pinned"]:
        os.link(pin, lock)
    else:
        lock.write_bytes(b"")  # a person's git lock, next to a stale pin
    gone = not case["boot"] or not case["alive"] or not case["start"]
    recoverable = case["pinned"] and case["host"] and gone
    (root / "ep.md").write_text(f"{json.dumps(case)} {time.time_ns()}\n")

    if recoverable:
        assert commit_paths(root, ["ep.md"], "recovered") is not None
        assert not lock.exists() and not pin.exists()
    else:
        with pytest.raises(GitCommitError, match="index.lock is held"):
            commit_paths(root, ["ep.md"], "refused")
        assert lock.exists()
        assert not case["pinned"] or os.path.samefile(lock, pin)
    assert owner.local == case["host"]
    assert (host_token(), boot_token()) == (me.host, me.boot)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    lines=st.lists(st.text(max_size=80), max_size=6),
    paths=st.lists(st.text(max_size=30)),
    # an older MemVault's line (paths alone), or this one's (a sha256 or null per path)
    digest=st.sampled_from(["old", None, "0" * 64]),
)
def test_a_damaged_journal_never_blocks_a_commit(root: Path, lines, paths, digest):
    """Junk lines and hostile paths (outside the vault, into .git or .memvault, a symlink)
    in the journal are dropped: the operation still commits, and only vault files get in."""
    state = root / STATE_DIR
    (root / "link.md").unlink(missing_ok=True)
    (root / "link.md").symlink_to("/etc/passwd")
    hostile = ["../outside.md", ".git/config", ".memvault/x", "link.md", "/etc/passwd", *paths]
    record: dict[str, object] = {"op": "x", "message": "m", "owner": None}
    if digest == "old":
        record["paths"] = hostile
    else:
        record["files"] = dict.fromkeys(hostile, digest)
    (state / gitstate.PENDING_NAME).write_text(
        "\n".join([*lines, json.dumps(record)]) + "\n", encoding="utf-8"
    )
    vault = Vault(root)
    episode = vault.remember(NewEpisode(SCOPE, "a memory despite the junk"))
    assert vault.commit_failure is None
    changed = git(root, "show", "--name-only", "--format=", "HEAD").split()
    assert any(episode.id in p for p in changed)
    assert all(p.startswith("bots/") for p in changed)
    assert gitstate.read_pending(state) == []


def test_an_id_already_taken_by_a_persons_file_is_never_made_up(root: Path):
    """An operation that failed on a name a person's file holds leaves nothing of that
    file in the journal: the next commit does not sweep the person's file into history."""
    vault = Vault(root)
    first = vault.remember(NewEpisode(SCOPE, "the first memory"))
    person = next((root / "bots").rglob(f"{first.id}.md")).with_name("ep_person.md")
    person.write_text("---\nid: ep_person\n---\na person's draft\n")
    with pytest.raises(BadRequestError, match="already exists"):
        vault.remember(NewEpisode(SCOPE, "import with a taken id", episode_id="ep_person"))
    vault.remember(NewEpisode(SCOPE, "the next memory"))
    assert person.relative_to(root).as_posix() not in tracked(root)


def test_a_commit_made_but_not_indexed_is_repaired_when_made_up(root: Path):
    """HEAD already has the files (the killed process moved it) but the index lacks them:
    the make-up commit has nothing to add, and still brings the index in line."""
    (root / "ep.md").write_text("committed, then the index update was killed\n")
    assert commit_paths(root, ["ep.md"], "one") is not None
    git(root, "rm", "-q", "--cached", "ep.md")  # the index as the kill left it
    assert commit_paths(root, ["ep.md"], "made up") is None
    assert porcelain(root) != []  # an ordinary commit leaves a person's index alone
    assert commit_paths(root, ["ep.md"], "made up", repair_index=True) is None
    assert porcelain(root) == []
