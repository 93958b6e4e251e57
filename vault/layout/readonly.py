"""A vault this process cannot write: a read-only mount (EROFS) or another user's folder (EACCES).

Reads keep working from the files (and the indexer's read-only open of its index); every
write fails before it changes anything, with one line that says why and what to do. The
check is `access(2)`: it reports a read-only mount even to root, and honours permissions
for everybody else (root writes whatever the mode bits say, so only a mount stops it).
"""

from __future__ import annotations

import errno
import getpass
import os
from pathlib import Path

from vault.errors import Unavailable
from vault.layout.layout import STATE_DIR

# What the kernel answers when the medium or the permissions refuse a write.
READ_ONLY_ERRNOS = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})


def nearest_existing(path: Path) -> Path:
    """`path`, or its closest ancestor that exists (what a mkdir -p would write into)."""
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return Path(path.anchor or ".")


def can_write(folder: Path) -> bool:
    """Whether this process may create files in `folder` (or where mkdir -p would make it)."""
    return os.access(nearest_existing(folder), os.W_OK)


def is_read_only_error(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in READ_ONLY_ERRNOS


def reason(path: Path) -> str:
    """Why `path` cannot be written, in words a person can act on."""
    where = nearest_existing(path)
    try:
        # POSIX only (no statvfs on Windows, where a read-only medium answers EACCES).
        mounted_ro = hasattr(os, "statvfs") and bool(os.statvfs(where).f_flag & os.ST_RDONLY)
    except OSError:
        mounted_ro = False
    if mounted_ro:
        return "read-only file system"
    return f"user {_user()} may not write {where}"


def _user() -> str:
    """This process's user name (the effective one on POSIX), "uid N" when it has none."""
    if not hasattr(os, "geteuid"):  # Windows: no uids, and no pwd module to import
        try:
            return getpass.getuser()
        except (OSError, KeyError):  # no user name in the environment
            return "of this process"
    import pwd

    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return f"uid {os.geteuid()}"


def read_only_message(root: Path, doing: str, next_step: str, where: Path | None = None) -> str:
    """One line: which vault, why it cannot be written (at `where`), what failed, what next."""
    why = reason(where if where is not None else root / STATE_DIR)
    return f"the vault at {root} is read-only ({why}): {doing}; {next_step}"


class ReadOnlyVaultError(Unavailable, OSError):
    """A write refused by the medium or the permissions, said in one actionable line."""


def explain_write_error(exc: BaseException, root: Path | None, what: str) -> BaseException:
    """The same error in words when a write hit a read-only vault; anything else unchanged."""
    if root is None or not is_read_only_error(exc):
        return exc
    assert isinstance(exc, OSError)
    target = Path(exc.filename) if isinstance(exc.filename, str) else None
    return ReadOnlyVaultError(
        read_only_message(
            root,
            f"{what} cannot write {target or 'there'}",
            "remount it read-write (or fix its permissions) and retry; "
            "reading (search, list, show, status, check, export) still works",
            where=target.parent if target is not None else None,
        )
    )
