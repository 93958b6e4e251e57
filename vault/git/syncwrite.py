"""Writing a pull into the vault's folder (vault.git.gitsync), the way every MemVault write
is made: journaled first, one file at a time by temp + rename, never through a link."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from dulwich.objects import Blob, ObjectID
from dulwich.repo import Repo

from vault.files.safewrite import atomic_write, content_hash
from vault.git import gitstate
from vault.git.gitmerge import Flat
from vault.git.gitremote import SyncError
from vault.layout.links import check_no_link


def write_tree(root: Path, state_dir: Path, repo: Repo, old: Flat, new: Flat) -> list[str]:
    """Make the working tree hold `new` where it held `old`: each file written by temp +
    rename (the watcher sees one complete file), never through a link; a file removed only
    while it still holds the bytes git had (sync refused earlier if a person changed it).

    Journaled first like any MemVault write (vault.git.gitstate): killed before the branch
    moves, the next memory operation commits these files instead of leaving them looking
    like a person's uncommitted edits."""
    paths = [p for p in sorted(set(old) | set(new)) if old.get(p) != new.get(p)]
    planned: dict[str, bytes | None] = {}
    for path in paths:  # every target checked before the first write: all or nothing
        rel = os.fsdecode(path)
        target = check_no_link(root, root / rel)
        if path in new and target.is_dir():
            raise SyncError(f"{rel} is a folder here but a file on the remote: move it, then sync")
        entry = new.get(path)
        planned[rel] = None if entry is None else _bytes(repo, entry[1])
    if not planned:
        return []
    files = {rel: None if data is None else content_hash(data) for rel, data in planned.items()}
    op = f"sync-{secrets.token_hex(6)}"
    gitstate.record_pending(state_dir, op, "sync: files pulled from the remote", files)
    for rel, data in planned.items():
        target = root / rel
        if data is None:
            old_bytes = _bytes(repo, old[os.fsencode(rel)][1])
            if target.is_file() and target.read_bytes() == old_bytes:
                target.unlink()
            continue
        atomic_write(target, data)
    return list(planned)


def _bytes(repo: Repo, sha: ObjectID) -> bytes:
    blob = repo.object_store[sha]
    assert isinstance(blob, Blob)
    return blob.as_raw_string()
