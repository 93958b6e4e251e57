"""Low-level dulwich plumbing for vault.git.gitlog: paths, the index lock, index entries, identity.

Kept apart so gitlog.py reads as the commit protocol; nothing here runs the git binary.
"""

from __future__ import annotations

import bisect
import hashlib
import io
import os
import stat
import time
from pathlib import Path

from dulwich.errors import ChecksumMismatch
from dulwich.index import (
    ConflictedIndexEntry,
    IndexChecksumReader,
    IndexEntry,
    index_entry_from_stat,
    read_index_dict_with_version,
    unchanged_entry_flags,
    write_index_dict,
)
from dulwich.objects import Blob
from dulwich.repo import Repo

from vault.errors import Unavailable
from vault.git import gitlock
from vault.git.gitlock import IndexLock

FILE_MODE = 0o100644
DEFAULT_NAME = b"MemVault"
DEFAULT_EMAIL = b"memvault@localhost"
# git holds index.lock for milliseconds; waiting a little longer rides out a person's
# `git add`/`git commit` without hanging a bot reply on a stale lock forever.
LOCK_WAIT_SECONDS = 2.0

Entries = dict[bytes, IndexEntry | ConflictedIndexEntry]
# vault-relative path -> (stat taken before reading, blob), or None when gone from disk
Snapshot = dict[bytes, tuple[os.stat_result, Blob] | None]
# git path -> the sha256s of the contents a commit may take there (None: absent)
Expected = dict[bytes, set[str | None]]


class GitCommitError(Unavailable, RuntimeError):
    """The vault is a repository, but a commit could not be made safely (git's lock held by
    another program, an index or history it cannot write over): unavailable, fix and retry."""


def git_path(path: str) -> bytes:
    """Validate a vault-relative POSIX path and return it as a git tree path."""
    parts = path.split("/")
    if not path or "\\" in path or "\0" in path or any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"not a vault-relative POSIX path: {path!r}")
    if any(p.lower() == ".git" for p in parts):
        raise ValueError(f"path inside .git: {path!r}")
    return os.fsencode(path)


def lock_index(index_path: str) -> IndexLock:
    """Take ``index.lock`` (see vault.git.gitlock), waiting briefly if it is held.

    A lock left by a dead MemVault process is recovered at once; one held by a person's
    git (or a live MemVault) is waited for, then reported with what to do.
    """
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    while True:
        lock = gitlock.try_take(index_path)
        if lock is not None:
            return lock
        holder = gitlock.recover(index_path)
        if holder is None:
            continue  # freed (a dead MemVault's lock, or its holder just finished)
        if time.monotonic() >= deadline:
            raise GitCommitError(holder.message())
        time.sleep(0.02)


def read_index(repo: Repo) -> tuple[Entries, int | None]:
    index_path = repo.index_path()
    if not os.path.exists(index_path):
        return {}, None
    with open(index_path, "rb") as f:
        # One read, then parse from memory: dulwich parses entry by entry in Python and
        # the many small reads on a real file doubled the cost on a 1,000-file vault.
        reader = IndexChecksumReader(io.BytesIO(f.read()), repo.object_format)
    # Extensions are dropped: every optional one (cache-tree, untracked cache, fsmonitor,
    # offset tables) describes the old entries, and git rebuilds them.
    entries, version, _extensions = read_index_dict_with_version(reader, repo.object_format)
    try:
        reader.check_checksum(allow_empty=True)
    except ChecksumMismatch as exc:
        # dulwich stops at a required lowercase extension ("link", "sdir") and then reads
        # it as the checksum; writing such an index back would lose entries.
        raise GitCommitError(
            f"{index_path} could not be read (split or sparse index? see "
            "core.splitIndex / index.sparse); nothing was committed"
        ) from exc
    return entries, version


def write_index(lock: IndexLock, repo: Repo, entries: Entries, version: int | None) -> None:
    """Write ``entries`` into the held lock file; closing the lock installs it."""
    buf = io.BytesIO()
    write_index_dict(buf, entries, version=version, object_format=repo.object_format)
    data = buf.getvalue()
    digest = repo.object_format.new_hash()
    digest.update(data)
    lock.write(data + digest.digest())


def snapshot(
    repo: Repo,
    root: Path,
    paths: list[bytes],
    expected: Expected | None = None,
    left: list[str] | None = None,
) -> Snapshot:
    """Store a blob for every path that exists; None marks a path gone from disk.

    With `expected` (path -> the sha256s MemVault wrote there, None: it deleted it), a path
    is taken only while it holds one of those, hashed on the very bytes that go into the
    blob; any other path goes to `left` and is not committed (a person's edit, a file the
    journal named but MemVault never wrote)."""
    result: Snapshot = {}
    for path in paths:
        want = None if expected is None else expected.get(path, set())
        full = os.path.join(os.fsencode(root), path)
        try:
            # Stat before reading: if the file changes in between, its index entry looks
            # stale and git rehashes it, instead of trusting an old sha for new bytes.
            st = os.lstat(full)
        except (FileNotFoundError, NotADirectoryError):
            if want is None or None in want:
                result[path] = None
            elif left is not None:
                left.append(os.fsdecode(path))  # MemVault wrote it; someone deleted it since
            continue
        if not stat.S_ISREG(st.st_mode):
            if want is None:
                raise GitCommitError(f"not a regular file: {os.fsdecode(path)}")
            if left is not None:
                left.append(os.fsdecode(path))
            continue
        with open(full, "rb") as f:
            data = f.read()
        if want is not None and hashlib.sha256(data).hexdigest() not in want:
            if left is not None:
                left.append(os.fsdecode(path))
            continue
        blob = Blob.from_string(data)
        repo.object_store.add_object(blob)
        result[path] = (st, blob)
    return result


def refresh_entries(entries: Entries, taken: Snapshot) -> None:
    """Make the index match the new commit for these paths only."""
    names: list[bytes] | None = None  # sorted once, for the folders removed: no rescans
    for path, snap in taken.items():
        if snap is None:
            entries.pop(path, None)
            if names is None:
                names = sorted(entries)
            prefix = path + b"/"  # a removed folder takes its entries with it
            at = bisect.bisect_left(names, prefix)
            while at < len(names) and names[at].startswith(prefix):
                entries.pop(names[at], None)
                at += 1
            continue
        st, blob = snap
        # keeps a person's skip-worktree/assume-unchanged bits when the content is the same
        flags, extended = unchanged_entry_flags(entries, path, blob.id, FILE_MODE)
        entries[path] = index_entry_from_stat(st, blob.id, FILE_MODE, flags, extended)


def identity(repo: Repo) -> bytes:
    """``Name <email>`` from repo config, then global/system config, else MemVault's own."""
    config = repo.get_config_stack()

    def read(key: bytes, default: bytes) -> bytes:
        try:
            value = config.get((b"user",), key)
        except KeyError:
            return default
        # "<", ">" or a newline in a config value would corrupt the commit header
        value = bytes(c for c in value if c not in b"<>\n").strip()
        return value or default

    return read(b"name", DEFAULT_NAME) + b" <" + read(b"email", DEFAULT_EMAIL) + b">"
