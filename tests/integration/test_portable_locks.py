"""MemVault on every platform: every module imports where POSIX-only names do not exist
(Windows), and the OS file locks (vault.files.filelocks, through `filelock`) keep their promises
between real processes: a second writer is refused with the holder's pid and start, a
SIGKILLed holder's lock is free at once, a stale or hostile lock file never blocks, a link
at the lock path is refused and never written through, a status probe never refuses a writer.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from indexer.backends.backend import IndexLockedError
from indexer.backends.locks import LOCK_NAME, WriterLock, acquire_writer_lock
from indexer.cli.show import _writer
from tests.helpers.paths import REPO
from vault.files import filelocks
from vault.files.safewrite import LockTimeoutError, VaultLock

ROOT = REPO
SINCE = re.compile(r"since=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
REUSED_TMP = HealthCheck.function_scoped_fixture  # each example rewrites its own files

# -- every module imports without POSIX-only names -----------------------------------------

# Run in a fresh interpreter: hide what Windows lacks, then import each module by name.
IMPORTER = r"""
import importlib, importlib.abc, json, os, signal, sys
mode, names = sys.argv[1], sys.argv[2:]
sys.path[:0] = [os.getcwd(), os.path.join(os.getcwd(), "plugin")]  # plugin/: as the runtime
BLOCKED = {"fcntl"} if mode == "no_fcntl" else {"fcntl", "pwd", "grp", "resource", "termios"}

class NotOnWindows(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ImportError(f"No module named {name!r} (not on Windows)", name=name)
        return None

if mode != "normal":
    for name in BLOCKED:
        sys.modules.pop(name, None)
    sys.meta_path.insert(0, NotOnWindows())
if mode == "windows_names":
    for attr in ("O_NOFOLLOW", "O_DIRECTORY", "O_NONBLOCK", "O_CLOEXEC", "pread", "pwrite",
                 "statvfs", "geteuid", "getuid"):
        if hasattr(os, attr):
            delattr(os, attr)
    for attr in ("SIGKILL", "SIGHUP", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGQUIT"):
        if hasattr(signal, attr):
            delattr(signal, attr)
failed = {}
for name in names:
    try:
        importlib.import_module(name)
    except BaseException as exc:
        failed[name] = f"{type(exc).__name__}: {exc}"
print(json.dumps(failed))
"""


def _modules(tree: Path) -> tuple[list[str], list[str]]:
    """(vault, indexer and console modules; plugin modules by the names LangBot uses)."""
    core = []
    for package in ("vault", "indexer", "console"):
        # rglob: the role sub-packages (vault/writes/, indexer/sync/, ...) are imported too.
        for path in sorted((tree / package).rglob("*.py")):
            parts = list(path.relative_to(tree).with_suffix("").parts)
            core.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    plugin = []
    for path in sorted((tree / "plugin").rglob("*.py")):
        parts = list(path.relative_to(tree / "plugin").with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts:
            plugin.append(".".join(parts))
    return core, plugin


def import_failures(tree: Path, mode: str, names: list[str]) -> dict[str, str]:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    proc = subprocess.run(
        [sys.executable, "-c", IMPORTER, mode, *names],
        cwd=tree, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def importable() -> list[str]:
    """Every module of the tree that imports here, with POSIX as it is (one interpreter for
    both modes below: the slowest step of this file)."""
    core, plugin = _modules(ROOT)
    assert len(core) > 80 and "vault.files.safewrite" in core and "indexer.backends.locks" in core
    assert "memvault_plugin.memory_service" in plugin
    assert "components.event_listener.injector" in plugin
    # Plugin modules that need what the host provides cannot import anywhere: only those
    # that import here at all are held to it.
    failed = import_failures(ROOT, "normal", plugin)  # once: it was run once per module
    plugin_ok = [n for n in plugin if n not in failed]
    assert len(plugin_ok) > len(plugin) // 2, "most plugin modules should import bare"
    return core + plugin_ok


@pytest.mark.parametrize("mode", ["no_fcntl", "windows_names"])
def test_every_module_imports_without_posix_only_names(mode: str, importable: list[str]) -> None:
    """no_fcntl: `import fcntl` fails. windows_names: also pwd, grp, resource and termios,
    and the os flags, functions and signals Windows does not have (O_NOFOLLOW, O_DIRECTORY,
    O_NONBLOCK, O_CLOEXEC, pread, pwrite, statvfs, geteuid, SIGKILL...)."""
    assert import_failures(ROOT, mode, importable) == {}


# -- two processes, one lock ---------------------------------------------------------------

HOLD_INDEX = """
import sys, time
from pathlib import Path
from indexer.backends.locks import acquire_writer_lock
lock = acquire_writer_lock(Path(sys.argv[1]))
print("HELD", flush=True)
time.sleep(600)
"""

HOLD_VAULT = """
import sys, time
from pathlib import Path
from vault.files.safewrite import VaultLock
with VaultLock(Path(sys.argv[1])).hold():
    print("HELD", flush=True)
    time.sleep(600)
"""


@contextmanager
def holder(code: str, path: Path) -> Iterator[subprocess.Popen[str]]:
    """A second process holding the lock at `path` until the block ends (or it is killed)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(path)], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "HELD"
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
        assert proc.stdout is not None
        proc.stdout.close()


def kill(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGKILL)
    assert proc.wait(timeout=30) == -signal.SIGKILL


def test_a_second_process_is_refused_with_the_holder_pid_and_start(tmp_path: Path) -> None:
    folder = tmp_path / "index"
    folder.mkdir()
    with holder(HOLD_INDEX, folder) as proc:
        started = time.monotonic()
        with pytest.raises(IndexLockedError) as refused:
            acquire_writer_lock(folder)
        assert time.monotonic() - started < 1.0  # refused, not waited for
        message = str(refused.value)
        assert f"pid={proc.pid} " in message and SINCE.search(message), message
        assert "stop it" in message and str(folder / LOCK_NAME) in message
        # What `memvault status` shows, from a third party that never becomes the writer.
        writer = _writer(folder / LOCK_NAME)
        assert writer.startswith(f"pid={proc.pid} ") and SINCE.search(writer), writer
        with pytest.raises(IndexLockedError, match=f"pid={proc.pid} "):
            WriterLock.acquire(folder, "text index")  # the probe took nothing away


def test_the_lock_of_a_killed_holder_is_free_at_once(tmp_path: Path) -> None:
    folder = tmp_path / "index"
    folder.mkdir()
    with holder(HOLD_INDEX, folder) as proc:
        kill(proc)
    lock = folder / LOCK_NAME
    assert f"pid={proc.pid} " in filelocks.read_holder(lock)  # its stale file stays behind
    assert _writer(lock) == ""  # status: nobody writes
    started = time.monotonic()
    mine = acquire_writer_lock(folder)
    try:
        assert time.monotonic() - started < 1.0
        assert filelocks.read_holder(lock).startswith(f"pid={os.getpid()} ")
    finally:
        mine.release()


def test_the_vault_write_lock_between_processes(tmp_path: Path) -> None:
    path = tmp_path / ".memvault" / "locks" / "write.lock"
    with holder(HOLD_VAULT, path) as proc:
        waiting = VaultLock(path, timeout=0.3)
        busy = f"pid={proc.pid} .*held {re.escape(str(path))}"
        with pytest.raises(LockTimeoutError, match=busy), waiting.hold():
            pass
        kill(proc)
        with waiting.hold():  # at once: the dead holder's OS lock went with it
            assert filelocks.read_holder(path).startswith(f"pid={os.getpid()} ")


@settings(max_examples=60, deadline=None, suppress_health_check=[REUSED_TMP])
@given(content=st.binary(max_size=4096))
def test_a_stale_lock_file_never_blocks(tmp_path: Path, content: bytes) -> None:
    """Whatever a dead process (or anyone) left in the file: the lock is free."""
    lock = tmp_path / LOCK_NAME
    lock.write_bytes(content)
    assert _writer(lock) == ""
    mine = acquire_writer_lock(tmp_path)
    mine.release()


@settings(max_examples=100, deadline=None, suppress_health_check=[REUSED_TMP])
@given(text=st.text(max_size=700))
def test_the_holder_text_reads_back_as_one_printable_line(tmp_path: Path, text: str) -> None:
    path = tmp_path / "x.lock"
    lock = filelocks.acquire(path, holder=text)
    assert lock is not None
    try:
        # Byte 0 is the one Windows locks (mandatory there): the text starts after it.
        assert path.read_bytes()[:1] == b" "
        shown = filelocks.read_holder(path)
    finally:
        lock.release()
    assert shown.isprintable() and shown == shown.strip()
    assert len(shown.encode()) <= filelocks.HOLDER_LIMIT
    expected = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    if len(expected.encode()) < filelocks.HOLDER_LIMIT - 2:
        assert shown == expected


def test_a_hostile_lock_file_is_shown_bounded_and_without_escapes(tmp_path: Path) -> None:
    lock = tmp_path / LOCK_NAME
    lock.write_bytes(b"\x1b[2J\x1b[31mpid=666\r\nfake line\x07" * 100_000)
    shown = filelocks.read_holder(lock)
    assert shown.startswith("[2J [31mpid=666 fake line") and "\x1b" not in shown
    assert len(shown) <= filelocks.HOLDER_LIMIT


@pytest.mark.parametrize("kind", ["link", "dangling", "fifo", "folder"])
def test_a_planted_lock_path_is_refused_and_never_written_through(
    tmp_path: Path, kind: str
) -> None:
    folder = tmp_path / "index"
    folder.mkdir()
    lock, victim = folder / LOCK_NAME, tmp_path / "victim"
    if kind == "link":
        victim.write_text("precious", encoding="utf-8")
        lock.symlink_to(victim)
    elif kind == "dangling":
        lock.symlink_to(victim)
    elif kind == "fifo":
        os.mkfifo(lock)
    else:
        lock.mkdir()
    with pytest.raises(OSError, match="not a regular file") as refused:
        acquire_writer_lock(folder)
    assert not isinstance(refused.value, IndexLockedError)
    assert "replace it with a file or delete it" in str(refused.value)
    if kind == "link":
        assert victim.read_text(encoding="utf-8") == "precious"
    if kind == "dangling":
        assert not victim.exists()  # a link is not followed even to create its target
    assert _writer(lock).startswith("unknown (")  # status says so, and does not crash


PROBE = """
import json, sys, time
from pathlib import Path
from vault.files.filelocks import is_held
lock, seconds = Path(sys.argv[1]), float(sys.argv[2])
print("READY", flush=True)
seen = {"held": 0, "free": 0}
deadline = time.monotonic() + seconds
while time.monotonic() < deadline:
    seen["held" if is_held(lock) else "free"] += 1
print(json.dumps(seen))
"""


def probes(lock: Path, seconds: float, count: int = 2) -> list[subprocess.Popen[str]]:
    """`count` processes probing `lock` as `memvault status` does, for `seconds`."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", PROBE, str(lock), str(seconds)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for _ in range(count)
    ]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "READY"
    return procs


def tally(procs: list[subprocess.Popen[str]]) -> dict[str, int]:
    total = {"held": 0, "free": 0}
    for proc in procs:
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0
        for key, value in json.loads(out).items():
            total[key] += value
    return total


def test_status_probes_never_refuse_a_writer_nor_each_other(tmp_path: Path) -> None:
    """A probe takes a shared lock for an instant (filelock has no shared lock: POSIX flock
    here): probes never see each other as a writer, and a writer starting while they look
    waits GRACE_S for them instead of being refused."""
    lock = tmp_path / LOCK_NAME
    acquire_writer_lock(tmp_path).release()  # the file exists, nobody holds it
    alone = tally(probes(lock, 0.5))
    assert alone["held"] == 0 and alone["free"] > 100, alone
    looking = probes(lock, 30.0)
    try:
        refused = 0
        for _ in range(100):
            try:
                acquire_writer_lock(tmp_path).release()
            except IndexLockedError:
                refused += 1
        assert refused == 0
    finally:
        for proc in looking:
            proc.kill()
            proc.communicate(timeout=30)
