"""The git index lock, taken so that a dead MemVault process's lock can be told apart.

git takes `index.lock` by creating it exclusively and never removes one it did not make, so
a process killed while holding it stops every later commit. MemVault takes it by
hard-linking a "pin" file of its own into place: the pin's name says who holds it (host,
boot, pid, pid start time) and, being a second name of the very same inode, proves which
`index.lock` is ours (the inode cannot be reused while the pin holds it). A lock is
recovered only when its inode is a pin's and that pin's process is provably dead on this
host; an `index.lock` with no pin is a person's git and is never touched.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import secrets
from dataclasses import dataclass
from types import TracebackType

from vault.files.procs import Owner
from vault.files.regular import BINARY
from vault.files.safewrite import NO_LINKS

log = logging.getLogger(__name__)

PIN_PREFIX = "memvault-index."
_PIN_RE = re.compile(
    r"memvault-index\.(?P<host>[0-9a-f]+)\.(?P<boot>[0-9a-f]+)\.(?P<pid>\d+)\.(?P<start>\d+)"
    r"\.[0-9a-f]+\.pin"
)


class IndexLock:
    """A held `index.lock`: write the new index into it, then close() installs it."""

    def __init__(self, index_path: str, fd: int, pin: str | None) -> None:
        self.index_path = index_path
        self.path = index_path + ".lock"
        self.pin = pin
        self._file = os.fdopen(fd, "wb")
        self._closed = False

    def write(self, data: bytes) -> None:
        self._file.write(data)

    def close(self) -> None:
        """fsync and rename the lock over the index (git's protocol), then drop the pin."""
        if self._closed:
            return
        try:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            os.replace(self.path, self.index_path)
        except BaseException:
            self.abort()
            raise
        self._closed = True
        self._drop_pin()

    def abort(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._file.close()
        # Remove index.lock only while it is still our inode (never someone else's).
        if self.pin is None or _same_file(self.path, self.pin):
            _unlink(self.path)
        self._drop_pin()

    def _drop_pin(self) -> None:
        if self.pin is not None:
            _unlink(self.pin)

    def __enter__(self) -> IndexLock:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


@dataclass(frozen=True)
class Holder:
    """Who holds an index.lock MemVault could not take."""

    path: str
    owner: Owner | None  # None: not MemVault (a person's git, or a lock taken unpinned)

    def message(self) -> str:
        if self.owner is None:
            return (
                f"{self.path} is held by another git process, not MemVault: if no git is "
                "running, delete that file"
            )
        where = "" if self.owner.local else " on another host"
        return f"{self.path} is held by MemVault process {self.owner.pid}{where}: wait for it"


def try_take(index_path: str) -> IndexLock | None:
    """Take `index.lock` now, or None if it is held."""
    me = Owner.me()
    name = f"{PIN_PREFIX}{me.host}.{me.boot}.{me.pid}.{me.start}.{secrets.token_hex(4)}.pin"
    pin = os.path.join(os.path.dirname(index_path), name)
    lock = index_path + ".lock"
    fd = os.open(pin, os.O_RDWR | os.O_CREAT | os.O_EXCL | BINARY, 0o644)
    try:
        os.link(pin, lock)  # atomic, and fails if held: git's O_EXCL, with our inode
    except FileExistsError:
        os.close(fd)
        _unlink(pin)
        return None
    except OSError as exc:
        os.close(fd)
        _unlink(pin)
        if exc.errno not in NO_LINKS:
            raise
        # No hard links here (some FUSE and FAT mounts): take the lock the plain way,
        # unpinned (so it cannot be recovered if this process dies holding it).
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_EXCL | BINARY, 0o644)
        except FileExistsError:
            return None
        return IndexLock(index_path, fd, None)
    except BaseException:
        os.close(fd)
        _unlink(pin)
        raise
    return IndexLock(index_path, fd, pin)


def recover(index_path: str) -> Holder | None:
    """Remove `index.lock` if a dead MemVault process left it (None: try again now).

    Otherwise return who holds it. Pins of dead processes are swept on the way.
    """
    lock = index_path + ".lock"
    try:
        held = os.lstat(lock)
    except FileNotFoundError:
        return None
    owner: Owner | None = None
    for pin, pin_owner in _pins(os.path.dirname(index_path)):
        try:
            st = os.lstat(pin)
        except FileNotFoundError:
            continue
        ours = (st.st_dev, st.st_ino) == (held.st_dev, held.st_ino)
        if pin_owner.running():
            owner = pin_owner if ours else owner
            continue
        if ours and not _remove_if_pinned(lock, pin):
            owner = None
            continue
        if ours:
            log.warning(
                "git=lock_recovered path=%s dead_pid=%d reason=owner_gone", lock, pin_owner.pid
            )
        _unlink(pin)
        if ours:
            return None
    return Holder(lock, owner)


def sweep_pins(git_dir: str) -> int:
    """Drop the pins of dead processes that hold no lock (killed after the rename)."""
    lock = os.path.join(git_dir, "index.lock")
    swept = 0
    for pin, owner in _pins(git_dir):
        if owner.running() or _same_file(lock, pin):
            continue  # a pin that still holds index.lock is recover()'s, under its checks
        _unlink(pin)
        swept += 1
    return swept


def _pins(git_dir: str) -> list[tuple[str, Owner]]:
    try:
        names = os.listdir(git_dir)
    except OSError:
        return []
    found = []
    for name in names:
        match = _PIN_RE.fullmatch(name)
        if match:
            owner = Owner(match["host"], match["boot"], int(match["pid"]), int(match["start"]))
            found.append((os.path.join(git_dir, name), owner))
    return found


def _remove_if_pinned(lock: str, pin: str) -> bool:
    """Move the lock aside, and delete it only if it is still the pinned inode.

    The move closes the gap between checking and deleting: a lock someone made in between
    is put back, not deleted.
    """
    aside = f"{pin}.recovering"
    try:
        os.rename(lock, aside)
    except FileNotFoundError:
        return True  # already gone
    if _same_file(aside, pin):
        _unlink(aside)
        return True
    with contextlib.suppress(FileExistsError):
        os.link(aside, lock)
    _unlink(aside)
    return False


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _unlink(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
