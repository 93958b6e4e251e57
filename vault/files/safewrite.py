"""Writes that never lose a file or a person's edit.

Every write goes to a temp file in the same folder (same file system, so the rename is
atomic), is fsynced, then renamed into place. Rewrites of an existing file re-read it just
before the rename and start over on the fresh bytes if a person saved it in the meantime.
A cross-process lock serialises MemVault's own writers per vault.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import logging
import os
import threading
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from pathlib import Path

from filelock import BaseFileLock

from vault.errors import Conflict, Unavailable
from vault.files import filelocks
from vault.files.regular import BINARY, read_regular
from vault.files.tempfiles import temp_path

log = logging.getLogger(__name__)

LOCK_TIMEOUT_S = 30.0
# link() errors that mean "no hard links here", not a failure of this write.
NO_LINKS = (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK)
MAX_REWRITE_ATTEMPTS = 5


class ConflictError(Conflict, RuntimeError):
    """The file changed under us more often than we could re-apply, or since the caller read it."""


class LockTimeoutError(Conflict, RuntimeError):
    """Another MemVault process held the vault's write lock for LOCK_TIMEOUT_S."""


class DiskFullError(Unavailable, OSError):
    """The disk (or quota) had no room for a write; nothing was changed."""

    def __str__(self) -> str:
        return str(self.strerror)


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# Windows cannot open a folder as a file (nor needs to: NTFS journals the rename itself).
_DIRS_SYNC = os.name != "nt"
# What "the disk is full" is called (Windows has no EDQUOT).
_FULL = frozenset({errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)})


def fsync_dir(folder: Path) -> None:
    if not _DIRS_SYNC:
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# Told about every file a write is about to change, before it changes, with the sha256 of
# the bytes it is about to hold (None: it is about to be deleted). The vault's operations
# journal both, so a writer killed mid-operation still gets its files committed, and only
# while they still hold exactly what MemVault wrote (vault.git.gitplan).
Intent = Callable[[Path, str | None], None]
_intent: ContextVar[Intent | None] = ContextVar("memvault_intent", default=None)


@contextlib.contextmanager
def announcing(callback: Intent) -> Iterator[None]:
    """Within this block (this thread/task), call `callback(target, sha256)` before each
    write (`sha256` of the new bytes, None before a delete)."""
    token = _intent.set(callback)
    try:
        yield
    finally:
        _intent.reset(token)


def _announce(target: Path, data: bytes | None) -> None:
    callback = _intent.get()
    if callback is not None:
        callback(target, None if data is None else content_hash(data))


def remove_file(target: Path) -> None:
    """Delete `target`, announced like a write."""
    _announce(target, None)
    target.unlink()


def _write_temp(target: Path, data: bytes) -> Path:
    _inspect(target, data)  # every write's bytes pass here, before anything is written
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path(target)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | BINARY, 0o644)
    try:
        _write_all(fd, data)
        os.fsync(fd)
    except BaseException as exc:
        # A full disk (ENOSPC) fails here on every write: leave no temp file behind.
        os.close(fd)
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.errno in _FULL:
            raise DiskFullError(
                exc.errno,
                f"no space left on the device to write {target}: nothing was changed; "
                "free some space and retry",
            ) from exc
        raise
    os.close(fd)
    return tmp


def _write_all(fd: int, data: bytes) -> None:
    # os.write may write less than asked (a signal, a nearly full disk): loop until done.
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def atomic_write(target: Path, data: bytes) -> None:
    """Replace (or create) `target` with `data` in one rename."""
    _announce(target, data)
    tmp = _write_temp(target, data)
    try:
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(target.parent)


def create_new(target: Path, data: bytes) -> bool:
    """Create `target` only if nothing is there; False if a file already holds the name."""
    if os.path.lexists(target):
        return False  # not announced: the name is someone else's file
    _announce(target, data)
    tmp = _write_temp(target, data)
    try:
        # link() refuses to replace, unlike rename(): a file someone just made there survives.
        os.link(tmp, target)
    except FileExistsError:
        return False
    except OSError as exc:
        if exc.errno not in NO_LINKS:
            raise
        # No hard links on this file system: exclusive create, then the content.
        try:
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | BINARY, 0o644)
        except FileExistsError:
            return False
        try:
            _write_all(fd, data)
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            target.unlink(missing_ok=True)  # ours (made exclusively above) and incomplete
            raise
        os.close(fd)
    finally:
        tmp.unlink(missing_ok=True)
    fsync_dir(target.parent)
    return True


def rewrite(
    target: Path,
    transform: Callable[[bytes], bytes],
    *,
    expected_hash: str | None = None,
    before_replace: Callable[[], None] | None = None,
) -> bytes:
    """Apply `transform` to the file's current bytes and write the result atomically.

    The swap is a compare-and-swap on the path: move the current file aside, check it is the
    version we transformed, then hard-link the new file in (link, unlike rename, refuses to
    replace). If a person saved the file at any point in between, their version wins the
    path and `transform` runs again on it, so their edit is kept and so is ours.
    `expected_hash` is the version the caller showed a person: if the file no longer has
    it, fail rather than write over what they did not see. `before_replace` lets tests land
    a save at the worst moment.
    """
    for _attempt in range(MAX_REWRITE_ATTEMPTS):
        before = read_regular(target)  # a FIFO swapped in must not hang us (vault.files.regular)
        if expected_hash is not None and content_hash(before) != expected_hash:
            raise ConflictError(
                f"{target} changed on disk since it was read: reload it and apply your change again"
            )
        after = transform(before)
        if after == before:
            return before
        _announce(target, after)
        tmp = _write_temp(target, after)
        try:
            if before_replace is not None:
                before_replace()
            if _swap_if_unchanged(target, before, tmp):
                fsync_dir(target.parent)
                return after
            log.info("rewrite=retry path=%s reason=changed_on_disk", target)
        finally:
            tmp.unlink(missing_ok=True)
    raise ConflictError(
        f"{target} kept changing while MemVault tried to update it: "
        "close the editor or wait, then retry"
    )


def _swap_if_unchanged(target: Path, expected: bytes, new: Path) -> bool:
    aside = temp_path(target, ".old")
    try:
        os.rename(target, aside)
    except FileNotFoundError:
        return False  # moved or deleted meanwhile: the next read says so
    try:
        if read_regular(aside) != expected:
            _link_back(aside, target)
            return False
        try:
            os.link(new, target)
        except FileExistsError:
            return False  # a person saved while the path was free: theirs stays
        except OSError as exc:
            if exc.errno not in NO_LINKS:
                raise
            os.replace(new, target)  # no hard links on this file system: plain rename
        return True
    finally:
        # The moved-aside file may be the only copy (link/rename failed, e.g. ENOSPC):
        # put it back before letting it go.
        if not os.path.lexists(target):
            _link_back(aside, target)
        aside.unlink(missing_ok=True)


def _link_back(aside: Path, target: Path) -> None:
    """Put the moved-aside version back unless a newer one already took the path."""
    try:
        os.link(aside, target)
    except FileExistsError:
        pass
    except OSError:
        if not target.exists():
            os.rename(aside, target)


class VaultLock:
    """One MemVault writer at a time per vault, across processes (an OS lock, see
    vault.files.filelocks: a dead holder never leaves it stale) and threads.

    Re-entrant within a thread so an operation can call another (supersede inside remember).
    """

    def __init__(self, path: Path, timeout: float = LOCK_TIMEOUT_S) -> None:
        self.path = path
        self.timeout = timeout
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._lock: BaseFileLock | None = None

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        with self._thread_lock:
            if self._depth == 0:
                self._acquire()
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self._release()

    def _acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock = filelocks.acquire(self.path, holder=filelocks.holder_text(), timeout=self.timeout)
        if lock is None:
            holder = filelocks.read_holder(self.path) or "unknown"
            raise LockTimeoutError(
                f"another MemVault process ({holder}) has held {self.path} for "
                f"{self.timeout:.0f}s: wait for it to finish or stop it"
            )
        self._lock = lock

    def _release(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None


# Shown the bytes of every write before they are written (an operation refuses bytes it must
# never commit: vault.git.secret_guard.guarding). Its own hook, apart from the journal's.
_inspector: ContextVar[Callable[[Path, bytes], None] | None] = ContextVar(
    "memvault_inspector", default=None
)


@contextlib.contextmanager
def inspecting(callback: Callable[[Path, bytes], None]) -> Iterator[None]:
    """Within this block (this thread/task), call `callback(target, data)` before each
    write of `data` to `target`; an exception it raises stops the write."""
    token = _inspector.set(callback)
    try:
        yield
    finally:
        _inspector.reset(token)


def _inspect(target: Path, data: bytes) -> None:
    callback = _inspector.get()
    if callback is not None:
        callback(target, data)
