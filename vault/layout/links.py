"""Symbolic links inside a vault are never followed (README "The files are the only truth").

A link makes a file that lives elsewhere look like memory: `episodes/evil.md -> /etc/passwd`
would become searchable and injected into prompts, and even a link to another vault file
would count that file twice (two ids, two scopes) with a target that can change under us.
So every walk skips links and reports them, and every read by path goes through
`read_vault_file`, which opens each folder below the vault root with O_NOFOLLOW: a folder
swapped for a link after a walk still cannot make us read outside. The vault root itself
may be a link (it is followed once, as the place the vault lives).

Windows has no O_NOFOLLOW, O_DIRECTORY nor opening relative to a folder (dir_fd). There
`read_vault_file` checks each folder with lstat() (links and junctions refused), opens the
file (vault.files.regular refuses a link there), checks the folders again and then proves the file
it opened is the one the path names now: a folder swapped for a link at any point in between
is refused before a byte is used. The same path runs on Linux in tests/vault/test_portable_links.py.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from vault.files import regular
from vault.format.model import Problem
from vault.layout.names import UnsafeNameError

LINK_FIX = "replace the link with the file itself"
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_DIR_FLAGS = os.O_RDONLY | _DIRECTORY | regular.NOFOLLOW | _CLOEXEC
# O_NONBLOCK: a FIFO planted in the vault must not hang a reader (it is refused below).
_FILE_FLAGS = os.O_RDONLY | regular.NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0)


def _opens_at() -> bool:
    """Whether this system opens relative to a folder without following links (not Windows)."""
    return bool(regular.NOFOLLOW and _DIRECTORY) and os.open in os.supports_dir_fd


class VaultLinkError(UnsafeNameError, OSError):
    """A path inside the vault goes through a symbolic link (or leaves the vault).

    Both a ValueError (the existing handlers of unsafe names map it to a clear message and
    exit code) and an OSError (readers treat it like an unreadable file and skip it).
    """


def link_message(rel: str) -> str:
    return (
        f"{rel} is a symbolic link: MemVault never follows links inside a vault, "
        f"so nothing under it is read or written; {LINK_FIX}"
    )


def link_problem(rel: str) -> Problem:
    return Problem(rel, 1, "symbolic link, not followed (never read): " + LINK_FIX)


def vault_rel(root: Path, path: Path) -> str:
    """`path` relative to `root` as POSIX text, refusing anything that is not below it."""
    try:
        rel = path.relative_to(root).as_posix()
    except ValueError as exc:
        raise VaultLinkError(f"{path} is not inside the vault {root}") from exc
    _parts(rel)
    return rel


def _parts(rel: str) -> list[str]:
    parts = rel.split("/")
    if rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise VaultLinkError(f"{rel!r} is not a path inside the vault")
    return parts


def first_link(root: Path, rel: str) -> str | None:
    """The first part of `rel` (itself included) that is a symbolic link, else None.

    Parts that do not exist yet stop the check: a write creates them as real folders.
    """
    parts = _parts(rel)
    current = root
    for n, part in enumerate(parts, start=1):
        current = current / part
        try:
            st = os.lstat(current)
        except OSError:
            return None
        if regular.is_link(st):  # a junction too (Windows)
            return "/".join(parts[:n])
    return None


def check_state_dir(root: Path, name: str = ".memvault") -> None:
    """Refuse a vault whose derived-state folder is, or holds, a link (or is not a folder).

    `.memvault/` is where the indexes, caches, locks and the git journal are written; a
    link there would send those writes anywhere on the machine. `.gitignore`'s `.memvault/`
    matches a folder only, so a link of that name can even be committed and arrive with a
    `git pull`. It is derived state: deleting it loses nothing (`memvault reindex`).
    """
    path = root / name
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(st.st_mode) or regular.is_link(st):
        kind = "a symbolic link" if regular.is_link(st) else "not a folder"
        raise VaultLinkError(_state_message(path, kind))
    # Its files too: `git add -f` can commit `.memvault/git-pending.jsonl -> ~/.bashrc`, and
    # the next write would append to that. scandir's entry types cost no extra stat.
    stack = [str(path)]
    while stack:
        try:
            with os.scandir(stack.pop()) as it:
                entries = list(it)
        except OSError:  # not ours to list (another user's vault): nothing is written there
            continue
        for entry in entries:
            if entry.is_symlink():
                raise VaultLinkError(_state_message(Path(entry.path), "a symbolic link"))
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
            elif not entry.is_file(follow_symlinks=False) and not _writer_socket(path, entry):
                kind = "not a regular file (a FIFO, socket or device)"
                raise VaultLinkError(_state_message(Path(entry.path), kind))


def _writer_socket(state: Path, entry: os.DirEntry[str]) -> bool:
    """The running index writer's Unix socket (`.memvault/run/writer.sock`, indexer.cli.
    writer_link): nothing is ever written through it, so it is no link to refuse."""
    if Path(entry.path) != state / "run" / "writer.sock":
        return False
    try:
        return stat.S_ISSOCK(entry.stat(follow_symlinks=False).st_mode)
    except OSError:
        return False


def _state_message(path: Path, kind: str) -> str:
    return (
        f"{path} is {kind}: MemVault writes its indexes, caches and locks under .memvault and "
        "never through a link; delete it (.memvault is derived state, `memvault reindex` "
        "rebuilds it)"
    )


def check_no_link(root: Path, path: Path) -> Path:
    """`path`, after proving no existing part of it below `root` is a link (for writes)."""
    rel = vault_rel(root, path)
    link = first_link(root, rel)
    if link is not None:
        raise VaultLinkError(link_message(link))
    return path


def read_vault_file(root: Path, rel: str) -> tuple[bytes, os.stat_result]:
    """The bytes and stat of the regular file `root/rel`, never through a link.

    Each folder is opened relative to the one before with O_NOFOLLOW, so the check and
    the read are one step: no window for a folder to be swapped for a link in between.
    Raises VaultLinkError for a link, OSError if the file cannot be read.
    """
    parts = _parts(rel)
    if not _opens_at():
        return _read_by_path(root, rel, parts)
    fd = os.open(root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        for n, part in enumerate(parts[:-1], start=1):
            child = _open_at(fd, part, _DIR_FLAGS, parts[:n])
            os.close(fd)
            fd = child
        file_fd = _open_at(fd, parts[-1], _FILE_FLAGS, parts)
    finally:
        os.close(fd)
    with os.fdopen(file_fd, "rb") as handle:
        st = os.fstat(handle.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, f"{rel} is not a regular file: only files are read")
        return handle.read(), st


def _open_at(dir_fd: int, name: str, flags: int, parts: list[str]) -> int:
    try:
        return os.open(name, flags, dir_fd=dir_fd)
    except OSError as exc:
        # O_NOFOLLOW says ELOOP for a file link, ENOTDIR for a link opened as a folder.
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link_at(dir_fd, name):
            raise VaultLinkError(link_message("/".join(parts))) from exc
        raise


def _is_link_at(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _read_by_path(root: Path, rel: str, parts: list[str]) -> tuple[bytes, os.stat_result]:
    """read_vault_file where folders cannot be opened (Windows): check, open, check again."""
    folders = _folder_chain(root, parts)
    path = root.joinpath(*parts)
    try:
        fd = regular.open_regular(path)  # a link there: ELOOP; a FIFO, a folder: EINVAL
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise VaultLinkError(link_message(rel)) from exc
        raise
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(handle.fileno())
        if _folder_chain(root, parts) != folders:
            raise VaultLinkError(link_message(rel))  # a folder was swapped while we opened
        try:
            regular.refuse_link(path, st)  # still the file the path names, after that check
        except OSError as exc:
            raise VaultLinkError(link_message(rel)) from exc
        return handle.read(), st


def _folder_chain(root: Path, parts: list[str]) -> list[tuple[int, int]]:
    """(st_dev, st_ino) of each folder on the way to `parts`; a link among them raises."""
    chain = []
    current = root
    for n, part in enumerate(parts[:-1], start=1):
        current = current / part
        st = os.lstat(current)
        if regular.is_link(st):
            raise VaultLinkError(link_message("/".join(parts[:n])))
        if not stat.S_ISDIR(st.st_mode):
            raise OSError(errno.ENOTDIR, f"{'/'.join(parts[:n])} is not a folder")
        chain.append((st.st_dev, st.st_ino))
    return chain
