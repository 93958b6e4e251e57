"""Open a file of the vault only when it is a regular file: never through a symbolic link,
never blocking on a FIFO, socket or device someone planted under a name MemVault uses.

A plain `open()` of a FIFO waits for a writer forever (a reader) or for a reader forever (an
append): a `profile.yaml` or `audit.jsonl` made with `mkfifo` would hang every operation
while it holds the vault's writer lock. O_NONBLOCK makes that open return at once, and
fstat() then refuses anything that is not a regular file (O_NONBLOCK has no effect on one).

Windows has neither O_NOFOLLOW nor O_NONBLOCK (nor FIFOs to block on). There a link (or a
junction, any reparse point) is refused by lstat() before the open, and the opened file must
then be the one lstat() finds at the path, so a link swapped in between is refused too, before
a byte is read or written. O_BINARY: without it Windows opens in text mode and turns every
"\n" into "\r\n" (the hashes of the files would no longer match their bytes).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

# Flags only some systems have are 0 elsewhere, so every module imports on all of them.
BINARY = getattr(os, "O_BINARY", 0)
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_FLAGS = getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | BINARY
# Windows reparse tags with this bit redirect to another path (symbolic links, junctions);
# others (OneDrive placeholders, deduplicated files) are plain files and stay readable.
_NAME_SURROGATE = 0x20000000


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
    nofollow = NOFOLLOW
    if not nofollow:
        refuse_link(path)
    fd = os.open(path, flags | _FLAGS | nofollow, mode)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise not_regular(path)
        if not nofollow:
            refuse_link(path, st)
    except BaseException:
        os.close(fd)
        raise
    return fd


def is_link(st: os.stat_result) -> bool:
    """A symbolic link, or (Windows) a junction, which redirects like one."""
    return stat.S_ISLNK(st.st_mode) or bool(getattr(st, "st_reparse_tag", 0) & _NAME_SURROGATE)


def refuse_link(path: Path | str, opened: os.stat_result | None = None) -> None:
    """Raise ELOOP (what O_NOFOLLOW says) if `path` is a link, or is not the file `opened`.

    For systems without O_NOFOLLOW: lstat() before the open, then again after it against
    the opened file's fstat(), which catches a link swapped in between.
    """
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        if opened is None:
            return  # nothing there yet: O_CREAT makes a plain file
        raise
    if is_link(st) or (opened is not None and not os.path.samestat(st, opened)):
        raise OSError(errno.ELOOP, f"{path} is a symbolic link (or was replaced by one): "
                      "MemVault never follows links; replace it with the file itself")  # fmt: skip


def read_regular(path: Path | str, limit: int = -1) -> bytes:
    """The bytes of the regular file `path` (at most `limit` when given)."""
    with os.fdopen(open_regular(path), "rb") as handle:
        return handle.read(limit)


def is_regular_or_missing(path: Path) -> bool:
    """True when nothing is at `path` (a write creates a plain file) or a regular file is."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return True
    return stat.S_ISREG(st.st_mode) and not is_link(st)
