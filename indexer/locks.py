"""The one-writer-per-index lock and the id space both index backends share."""

from __future__ import annotations

import errno
import fcntl
import os
import socket
import sys
import time
from pathlib import Path

from indexer.backend import IndexLockedError
from indexer.readonly import index_error
from vault.readonly import is_read_only_error

LOCK_NAME = "writer.lock"
MAX_CHUNK_ID = 2**63 - 1  # FAISS ids are int64: keep both backends on one id space


def check_chunk_id(chunk_id: int) -> int:
    if not 0 <= chunk_id <= MAX_CHUNK_ID:
        raise ValueError(f"chunk_id {chunk_id} is outside 0..2**63-1")
    return chunk_id


class WriterLock:
    """Exclusive, non-blocking flock on `<folder>/writer.lock`, naming its holder inside.

    flock dies with its process, so a crashed writer never leaves a stale lock; the file
    content is only there to tell a second writer who holds it.
    """

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, folder: Path, what: str) -> WriterLock:
        path = folder / LOCK_NAME
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            if not is_read_only_error(exc):
                raise
            # Nobody can write here: say so, and let callers fall back to a read-only handle.
            raise index_error(folder, f"the {what} in {folder} cannot be written") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = os.pread(fd, 512, 0).decode("utf-8", "replace").strip() or "unknown"
            os.close(fd)
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            raise IndexLockedError(
                f"the {what} in {folder} is being written by another process ({holder}); "
                "only one writer is allowed: stop it, or open this index read-only "
                "(writer=False) from a second process"
            ) from exc
        holder = f"pid={os.getpid()} host={socket.gethostname()} cmd={sys.argv[0] or 'python'}"
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{holder} since={int(time.time())}\n".encode(), 0)
        return cls(path, fd)

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def acquire_writer_lock(folder: Path) -> WriterLock:
    """The one-index-writer-per-vault lock, `<folder>/writer.lock` (flock: a crashed
    holder never leaves it stale). Raises IndexLockedError naming the holder's pid."""
    try:
        return WriterLock.acquire(folder, "index")
    except IndexLockedError:
        lock = folder / LOCK_NAME
        try:
            holder = lock.read_text(encoding="utf-8", errors="replace").strip() or "unknown"
        except OSError:
            holder = "unknown"
        raise IndexLockedError(
            f"another MemVault process is already indexing this vault ({holder}; lock "
            f"{lock}): stop it (e.g. its `memvault watch`) or let it keep the index"
        ) from None
