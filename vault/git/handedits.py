"""Files under bots/ whose bytes the vault's git history does not hold: a person's edits,
added or deleted files, never committed. MemVault commits only what its own operations
wrote (vault.git.gitlog), so these stay out of the history until the person commits them.
"""

from __future__ import annotations

import os
from pathlib import Path

from dulwich import porcelain

from vault.git import gitstate
from vault.layout.layout import STATE_DIR

MEMORY_DIR = "bots/"


def uncommitted_edits(root: Path) -> list[str]:
    """Vault-relative paths under bots/ that differ from HEAD (staged or not) or that git
    does not track, sorted; without the files MemVault itself still has to commit (the
    git journal: `gitstate.problem` reports those). Raises OSError / dulwich errors when
    the repository cannot be read."""
    # optional_locks=False: a read must never take index.lock from a person's `git add`.
    status = porcelain.status(str(root), untracked_files="all", optional_locks=False)
    found: set[str] = set()
    for paths in (*status.staged.values(), status.unstaged, status.untracked):
        for path in paths:
            rel = os.fsdecode(path) if isinstance(path, bytes) else str(path)
            if rel.startswith(MEMORY_DIR):
                found.add(rel)
    state = root / STATE_DIR
    ours = set(gitstate.pending_paths(gitstate.read_pending(state)))
    failure = gitstate.read_failure(state)
    if failure is not None:
        ours |= set(failure.paths)
    return sorted(found - ours)
