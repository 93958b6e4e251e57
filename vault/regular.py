"""Open a file of the vault only when it is a regular file: never through a symbolic link,
never blocking on a FIFO, socket or device someone planted under a name MemVault uses.

A plain `open()` of a FIFO waits for a writer forever (a reader) or for a reader forever (an
append): a `profile.yaml` or `audit.jsonl` made with `mkfifo` would hang every operation
while it holds the vault's writer lock. O_NONBLOCK makes that open return at once, and
fstat() then refuses anything that is not a regular file (O_NONBLOCK has no effect on one).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

_FLAGS = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def not_regular(path: Path | str) -> OSError:
    return OSError(
        errno.EINVAL,
        f"{path} is not a regular file (a link, folder, FIFO, socket or device): "
        "MemVault only reads and writes plain files; replace it with a file or delete it",
    )


def open_regular(path: Path | str, flags: int = os.O_RDONLY, mode: int = 0o644) -> int:
    """A file descriptor of the regular file `path` (created if `flags` has O_CREAT).

    Raises OSError for a symbolic link (ELOOP), a FIFO without a reader (ENXIO) and, from
    not_regular, anything else that is not a regular file.
    """
    fd = os.open(path, flags | _FLAGS, mode)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise not_regular(path)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(path: Path | str, limit: int = -1) -> bytes:
    """The bytes of the regular file `path` (at most `limit` when given)."""
    with os.fdopen(open_regular(path), "rb") as handle:
        return handle.read(limit)


def is_regular_or_missing(path: Path) -> bool:
    """True when nothing is at `path` (a write creates a plain file) or a regular file is."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except FileNotFoundError:
        return True
