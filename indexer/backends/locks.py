"""The one-writer-per-index lock and the id space both index backends share."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Self

from filelock import BaseFileLock

from indexer.backends.backend import IndexLockedError
from indexer.backends.readonly import index_error
from vault.files import filelocks
from vault.layout.readonly import is_read_only_error

log = logging.getLogger(__name__)

LOCK_NAME = "writer.lock"
MAX_CHUNK_ID = 2**63 - 1  # FAISS ids are int64: keep both backends on one id space


def check_chunk_id(chunk_id: int) -> int:
    if not 0 <= chunk_id <= MAX_CHUNK_ID:
        raise ValueError(f"chunk_id {chunk_id} is outside 0..2**63-1")
    return chunk_id


class WriterLock:
    """Exclusive, non-blocking OS lock on `<folder>/writer.lock` (vault.files.filelocks), naming
    its holder inside.

    The OS lock dies with its process, so a crashed writer never leaves a stale lock; the
    file's text is only there to tell a second writer who holds it.
    """

    def __init__(self, path: Path, lock: BaseFileLock) -> None:
        self.path = path
        self._lock: BaseFileLock | None = lock

    @classmethod
    def acquire(cls, folder: Path, what: str) -> WriterLock:
        path = folder / LOCK_NAME
        try:
            lock = filelocks.acquire(path, holder=filelocks.holder_text())
        except OSError as exc:
            if not is_read_only_error(exc):
                raise
            # Nobody can write here: say so, and let callers fall back to a read-only handle.
            raise index_error(folder, f"the {what} in {folder} cannot be written") from exc
        if lock is None:
            raise IndexLockedError(
                f"the {what} in {folder} is being written by another process "
                f"({filelocks.read_holder(path) or 'unknown'}); only one writer is allowed: "
                "stop it, or open this index read-only (writer=False) from a second process"
            )
        return cls(path, lock)

    def release(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None


def acquire_writer_lock(folder: Path) -> WriterLock:
    """The one-index-writer-per-vault lock, `<folder>/writer.lock` (an OS lock: a crashed
    holder never leaves it stale). Raises IndexLockedError naming the holder's pid."""
    try:
        return WriterLock.acquire(folder, "index")
    except IndexLockedError:
        lock = folder / LOCK_NAME
        holder = filelocks.read_holder(lock) or "unknown"
        raise IndexLockedError(
            f"another MemVault process is already indexing this vault ({holder}; lock "
            f"{lock}): stop it (e.g. its `memvault watch`) or let it keep the index"
        ) from None


class StagedWriter:
    """What a remote vector backend that stages its changes until commit() and holds a
    WriterLock shares (Milvus, the LangBot host's): the read-only refusal, close (staged
    changes dropped and said in the log, the lock released) and the `with` statement."""

    _pending: dict[int, Any]
    _lock: WriterLock | None
    _writable: bool
    backend_name = "vector"

    def _require_writer(self) -> None:
        if not self._writable:
            raise PermissionError(
                f"this {self.backend_name} index was opened read-only (writer=False)"
            )

    def close(self) -> None:
        if self._pending:
            what = "event=vector_close_uncommitted backend=%s n=%d"
            log.warning(what, self.backend_name, len(self._pending))
            self._pending = {}
        if self._lock is not None:
            self._lock.release()
            self._lock = None
            self._writable = False

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
