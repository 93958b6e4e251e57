"""No temp file outlives its write: a failed write (a full disk) removes its own, and the temp
files a killed writer left are swept at the next writer's start (never a live writer's).

The full disk is a real 1 MiB tmpfs when this process may mount one (root), else os.write
failing with ENOSPC.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memvault_cli.main import main as cli_main
from tests.cli.test_git_recovery import SCOPE, dead_pid, kill, porcelain, wait_line
from tests.helpers.cli_run import memvault
from vault.files import tempfiles
from vault.files.safewrite import DiskFullError, atomic_write, create_new, rewrite
from vault.files.tempfiles import STALE_AFTER_S, TEMP_RE, sweep_stale_temps
from vault.writes.create import init_vault
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault
from vault.writes.profile_edit import ProfileEdit

FIXTURES = HealthCheck.function_scoped_fixture  # state between examples is reset by hand
# A real `memvault` command that stops (and says so) right after `function` ran, with the
# temp file (or the moved-aside original) on disk, so the SIGKILL lands there.
STALLED_WRITE = r"""
import os, sys, time
from vault.files import safewrite
point = sys.argv[1]
def stall():
    print("stalled", flush=True)
    time.sleep(120)
if point == "temp_written":
    real = safewrite._write_temp
    def wrapped(*args):
        tmp = real(*args)
        stall()
        return tmp
    safewrite._write_temp = wrapped
else:  # "moved_aside": the original renamed to .old.tmp, the new one not linked in yet
    real_rename = os.rename
    def rename(src, dst):
        real_rename(src, dst)
        if str(dst).endswith(".old.tmp"):
            stall()
    os.rename = rename
from memvault_cli.main import main
sys.exit(main(sys.argv[2:]))
"""


def temps(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.tmp") if ".git" not in p.relative_to(root).parts)


def scope_args(root: Path) -> list[str]:
    return ["--vault", str(root), "--session", SCOPE.session]


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


# -- a full disk ----------------------------------------------------------------------------


@pytest.fixture
def full_disk(tmp_path: Path, monkeypatch) -> Iterator[tuple[Path, str]]:
    """(vault, how) with a profile and one memory, on a disk with no room left."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = (
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)], capture_output=True
        ).returncode
        == 0
    )
    root = disk / "memory"
    init_vault(root)
    vault = Vault(root)
    vault.update_profile(ProfileEdit(SCOPE, "name", "set", "Team chat"))
    vault.remember(NewEpisode(SCOPE, "a memory from before the disk filled up"))
    try:
        if mounted:
            fd = os.open(root / ".memvault" / "filler", os.O_WRONLY | os.O_CREAT)  # ignored
            for size in (65536, 4096, 1):  # fill up to the last byte the disk has
                try:
                    while os.write(fd, b"\0" * size):
                        pass
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC
            os.close(fd)
            yield root, "tmpfs"
        else:

            def no_space(fd: int, data: bytes) -> int:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

            monkeypatch.setattr(os, "write", no_space)
            yield root, "monkeypatch"
    finally:
        monkeypatch.undo()
        if mounted:
            (root / ".memvault" / "filler").unlink(missing_ok=True)
            git_status = porcelain(root)  # before the unmount takes the vault away
            subprocess.run(["umount", str(disk)], check=True)
            assert git_status == []


def test_failed_writes_on_a_full_disk_leave_no_temp_and_say_what_to_do(full_disk):
    root, how = full_disk
    before = files(root)
    vault = Vault(root)
    episode = vault.list_episodes(SCOPE).items[0].episode
    attempts = [
        lambda: vault.remember(NewEpisode(SCOPE, "a memory with no room for it")),
        lambda: vault.update_profile(ProfileEdit(SCOPE, "name", "set", "Renamed chat")),
        lambda: vault.archive(SCOPE, episode.id),
        lambda: atomic_write(root / "README.md", b"no room\n"),
    ]
    for attempt in attempts:
        with pytest.raises(DiskFullError) as caught:
            attempt()
        assert caught.value.errno == errno.ENOSPC
        assert "no space left on the device to write " in str(caught.value)
        assert "nothing was changed; free some space and retry" in str(caught.value)
        assert temps(root) == [], how
    after = files(root)
    changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    # only MemVault's own state may differ (the failure journal); no memory file changed
    assert all(k.startswith(".memvault/") for k in changed), changed
    (root / ".memvault" / "filler").unlink(missing_ok=True)  # git itself needs some room
    assert porcelain(root) == []


def test_memvault_remember_on_a_full_disk_exits_4_with_one_clear_line(full_disk, capsys):
    root, how = full_disk
    code = cli_main(["remember", *scope_args(root), "no room for this one"])
    assert code == 4, how  # unavailable (vault.errors): the disk refused, not the input
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("memvault: error: no space left on the device to write ")
    assert last.endswith("nothing was changed; free some space and retry")
    assert temps(root) == []
    assert len(list((root / "bots").rglob("ep_*.md"))) == 1


@settings(max_examples=40, deadline=None, suppress_health_check=[FIXTURES])
@given(
    path=st.sampled_from(["create", "create_no_links", "rewrite", "atomic", "swap"]),
    fail_at=st.integers(min_value=1, max_value=3),
)
def test_every_write_path_cleans_up_when_the_disk_fills(tmp_path, monkeypatch, path, fail_at):
    """Whichever write fails (the temp, the copy on a file system without hard links, the
    swap of a rewrite), no temp stays and the file is either its old or its new self."""
    folder = tmp_path / f"{path}-{fail_at}-{time.time_ns()}"
    folder.mkdir()
    target = folder / "profile.yaml"
    old = b"name: before\n"
    if path in ("rewrite", "atomic", "swap"):
        target.write_bytes(old)
    real_write, real_link, real_replace = os.write, os.link, os.replace
    calls = {"write": 0}

    def write(fd: int, data: bytes) -> int:
        calls["write"] += 1
        if calls["write"] >= fail_at:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    def link(src, dst, **kw):
        if path == "create_no_links":
            raise OSError(errno.EPERM, "no hard links here")
        if path == "swap":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_link(src, dst, **kw)

    def replace(src, dst):
        if path == "swap":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_replace(src, dst)

    if path != "swap":
        monkeypatch.setattr(os, "write", write)
    monkeypatch.setattr(os, "link", link)
    monkeypatch.setattr(os, "replace", replace)
    try:
        if path in ("create", "create_no_links"):
            create_new(target, b"name: new\n")
        elif path == "atomic":
            atomic_write(target, b"name: new\n")
        else:
            rewrite(target, lambda data: data + b"notes: more\n")
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        monkeypatch.undo()
    assert temps(folder) == []
    left = target.read_bytes() if target.exists() else None
    if path in ("create", "create_no_links"):
        assert left in (None, b"name: new\n")  # never an empty or partial file
    else:
        assert left in (old, b"name: new\n", old + b"notes: more\n")  # never lost


# -- the sweep at start-up ------------------------------------------------------------------


def _temp(folder: Path, name: str, pid: int, *, old: bool = False, data: bytes = b"x") -> Path:
    path = folder / f".{name}.{pid}.0badf00d{'.old' if old else ''}.tmp"
    path.write_bytes(data)
    return path


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    root = tmp_path / "memory"
    init_vault(root)
    v = Vault(root)
    v.remember(NewEpisode(SCOPE, "the first memory"))
    return v


def _episodes_dir(vault: Vault) -> Path:
    return next((vault.root / "bots").rglob("ep_*.md")).parent


def test_dead_writers_temps_are_swept_at_start_up_and_git_status_is_clean(vault: Vault):
    folder = _episodes_dir(vault)
    vault.update_profile(ProfileEdit(SCOPE, "name", "set", "Team chat"))
    profile = vault.layout.profile_path(SCOPE)
    kept = profile.read_bytes()
    (newer,) = folder.glob("ep_*.md")
    gone = dead_pid()
    dropped = [
        _temp(folder, "ep_20261201_aaaaaa.md", gone),  # a create killed before its link
        _temp(folder, newer.name, gone, old=True),  # moved aside, the new version in place
    ]
    # killed mid-swap: the original moved aside is the only copy, its name is free
    only_copy = profile.with_name(f".profile.yaml.{gone}.0badf00d.old.tmp")
    os.rename(profile, only_copy)
    assert len(porcelain(vault.root)) == 4

    Vault(vault.root).remember(NewEpisode(SCOPE, "the first write of a new process"))

    assert not any(p.exists() for p in [*dropped, only_copy])
    assert profile.read_bytes() == kept  # the only copy is put back, never lost
    assert newer.exists()
    assert temps(vault.root) == []
    assert porcelain(vault.root) == []


@pytest.mark.subprocess
def test_a_live_writers_temps_are_kept(vault: Vault):
    folder = _episodes_dir(vault)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        mine = _temp(folder, "ep_20261201_bbbbbb.md", os.getpid())
        theirs = _temp(folder, "ep_20261201_cccccc.md", sleeper.pid)
        aside = _temp(folder, "ep_gone.md", sleeper.pid, old=True)
        stale = time.time() - 10 * STALE_AFTER_S
        for path in (mine, theirs, aside):
            os.utime(path, (stale, stale))  # old, yet alive: still kept
        Vault(vault.root).remember(NewEpisode(SCOPE, "a write while others write"))
        assert mine.exists() and theirs.exists() and aside.exists()
        assert not (folder / "ep_gone.md").exists()
    finally:
        sleeper.kill()
        sleeper.wait()


def test_outside_the_memory_tree_only_old_temps_are_swept(tmp_path: Path):
    """Temps outside bots/ (init's .gitignore, snapshots) are not written under the writer
    lock: a dead pid is swept only once its temp is older than any write could take."""
    root = tmp_path / "memory"
    root.mkdir()
    gone = dead_pid()
    fresh = _temp(root, "README.md", gone)
    old = _temp(root, ".gitignore", gone)
    stale = time.time() - 2 * STALE_AFTER_S
    os.utime(old, (stale, stale))
    assert sweep_stale_temps(root, locked=True) == [old]
    assert fresh.exists() and not old.exists()


def test_a_temp_name_holds_the_pid_the_sweep_reads(tmp_path: Path):
    for kind in ("", ".old"):
        match = TEMP_RE.fullmatch(tempfiles.temp_path(tmp_path / "ep_1.md", kind).name)
        assert match is not None and int(match["pid"]) == os.getpid()
        assert match["name"] == "ep_1.md" and bool(match["old"]) == (kind == ".old")


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("point", "command"),
    [
        ("temp_written", ["remember", "killed after writing its temp"]),
        ("moved_aside", ["profile", "set", "name", "killed mid-swap"]),
    ],
)
def test_a_sigkilled_write_leaves_nothing_after_the_next_start(vault: Vault, point, command):
    root = vault.root
    vault.update_profile(ProfileEdit(SCOPE, "name", "set", "Team chat"))
    profile = vault.layout.profile_path(SCOPE).read_bytes()
    child = subprocess.Popen(
        [sys.executable, "-c", STALLED_WRITE, point, command[0], *scope_args(root), *command[1:]],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_line(child, "stalled")
    kill(child)
    assert temps(root) != []  # what the kill leaves
    assert porcelain(root) != []

    memvault("remember", *scope_args(root), "the next process")  # in-process: exit 0
    assert temps(root) == []
    assert porcelain(root) == []
    assert vault.layout.profile_path(SCOPE).read_bytes() == profile  # never lost


_NAME = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="/\0"), min_size=1
).filter(lambda n: n not in (".", "..") and len(n.encode()) < 200)


@settings(max_examples=60, deadline=None, suppress_health_check=[FIXTURES])
@given(names=st.lists(_NAME, min_size=1, max_size=8, unique=True), pid=st.integers(0, 10**30))
def test_the_sweep_removes_only_dead_temps_whatever_the_names(tmp_path, names, pid):
    """Hostile names (huge pids, temp-like names of other files) never crash the sweep, and
    it removes nothing but temp files whose pid is not running."""
    folder = tmp_path / f"bots-{time.time_ns()}" / "bots" / "b"
    folder.mkdir(parents=True)
    candidates = [*names, f".{names[0]}.{pid}.0badf00d.tmp"]
    made = []
    for name in dict.fromkeys(candidates):
        (folder / name).write_bytes(b"x")
        made.append(name)
    swept = {p.name for p in sweep_stale_temps(folder.parent.parent, locked=True)}
    for name in made:
        match = TEMP_RE.fullmatch(name)
        owner = int(match["pid"]) if match else 0
        alive = 0 < owner < 2**22 and Path(f"/proc/{owner}").exists()
        expected = match is not None and not alive
        assert (name in swept) == expected, name
        assert (folder / name).exists() == (not expected), name
