"""Locks between processes on Linux, macOS and Windows: OS file locks, through `filelock`.

An OS lock (flock on POSIX, LockFileEx on Windows) dies with its process, so a crashed
holder never leaves a stale lock: the lock FILE stays, and its text only tells a second
process who holds it. Measured with filelock 4.3.1 (tests/integration/test_portable_locks.py): a
second
process is refused in under 1 ms with the holder's text intact; the lock of a SIGKILLed
holder is free at once; a file left with any content does not block; a symbolic link at
the lock path is refused (ELOOP), never followed nor written through; a second handle in
the same process is refused too (one writer per index, even in one process).

The options say why: `fallback_to_soft=False`, because where a file system has no flock
filelock would use a marker file whose mere presence is the lock, and a dead process leaves
that behind (a stale file must never disable a feature: such a file system gets an error
that says so instead); `preserve_lock_file=True`, so Windows keeps the file on release like
POSIX does (the text stays readable, nothing races a delete). Windows locks byte 0 (the
lock is mandatory there: other processes cannot read that byte), so the holder's text is
written from byte 1 on.

filelock has no shared lock, and `memvault status` must look without taking the lock a
second status would then see as a writer (an exclusive probe did, under load, in
tests/integration/test_portable_locks.py): is_held uses a shared flock on POSIX and, on Windows, a
read of that locked byte.
"""

from __future__ import annotations

import errno
import os
import socket
import stat
import sys
from datetime import UTC, datetime
from pathlib import Path

import filelock

from vault.files.regular import is_regular_or_missing, not_regular, open_regular

HOLDER_LIMIT = 512  # bytes of holder text read back: a planted huge file costs nothing
# A status probe (is_held) holds a shared lock for microseconds; a writer waits this long
# before it calls the lock taken, so that a probe at the wrong instant never refuses it.
GRACE_S = 0.05
POLL_S = 0.005


def holder_text() -> str:
    """Who takes a lock now: pid, host, command and start (UTC), as one line."""
    since = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    cmd = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "python"
    return f"pid={os.getpid()} host={socket.gethostname()} cmd={cmd} since={since}"


def acquire(path: Path, *, holder: str, timeout: float = GRACE_S) -> filelock.BaseFileLock | None:
    """The exclusive lock on `path` (created if missing), or None if another holder keeps
    it for `timeout` seconds. `holder` is written into the file for a refused process.

    Raises OSError for a path that is not a regular file (a link, folder, FIFO) and for a
    file system without file locks, each with what to do.
    """
    if not is_regular_or_missing(path):
        raise not_regular(path)  # a link, FIFO or folder there: said before anything opens
    line = f" {_printable(holder)}\n".encode()  # byte 0 is the one Windows locks

    def write_holder(fd: int) -> None:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped for a FIFO after the check
            raise not_regular(path)
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, line)

    lock = filelock.FileLock(
        str(path),
        timeout=timeout,
        poll_interval=POLL_S,
        mode=0o644,
        thread_local=False,
        fallback_to_soft=False,
        preserve_lock_file=True,
        on_acquired=write_holder,
    )
    try:
        lock.acquire()
    except filelock.Timeout:  # an OSError too: caught first
        return None
    except OSError as exc:
        if exc.errno == errno.ENOSYS:
            raise OSError(
                exc.errno,
                f"{path}: this file system has no file locks, so MemVault cannot keep two "
                "writers apart there; put the vault on a local disk",
            ) from exc
        raise
    return lock


def read_holder(path: Path) -> str:
    """The holder's text in the lock file `path`, "" when there is none to read."""
    try:
        fd = open_regular(path)  # never through a link, never blocking on a FIFO
    except OSError:
        return ""
    try:
        try:
            raw = os.read(fd, HOLDER_LIMIT)
        except OSError:  # Windows: byte 0 is under the holder's (mandatory) lock
            os.lseek(fd, 1, os.SEEK_SET)
            raw = os.read(fd, HOLDER_LIMIT)
    except OSError:
        return ""
    finally:
        os.close(fd)
    return _printable(raw.decode("utf-8", "replace"))


def is_held(path: Path) -> bool:
    """Whether a process holds the lock on `path` now, without becoming its holder.

    Never creates or writes the file (works on a read-only vault) and takes no lock that
    another probe could see: two `memvault status` at the same instant never report each
    other as the writer (a writer starting meanwhile waits GRACE_S for a POSIX probe).
    """
    try:
        fd = open_regular(path)
    except FileNotFoundError:
        return False
    try:
        return _held(fd)
    finally:
        os.close(fd)


if os.name == "nt":

    def _held(fd: int) -> bool:
        # The holder's LockFileEx covers byte 0 and is mandatory: reading that byte fails
        # while it is held. A read takes no lock at all.
        try:
            os.read(fd, 1)
        except PermissionError:
            return True
        return False

else:

    def _held(fd: int) -> bool:
        # A shared flock, the primitive filelock's own lock contends with (flock too):
        # shared locks never refuse each other, and a read-only descriptor may take one.
        import fcntl  # POSIX only: here, not at import time (Windows has no fcntl)

        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                return True
            raise
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False


def _printable(text: str) -> str:
    """One line of printable text: the file is on disk, anyone may have written into it."""
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())
