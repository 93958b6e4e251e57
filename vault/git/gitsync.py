"""`memvault sync`: pull and push a vault through a git remote, so replicas converge.

One sync fetches and pushes outside any lock (a slow network never makes a memory operation
time out) and does everything else under the vault's writer lock (no memory operation runs
meanwhile) and git's index lock (vault.git.gitlock: a dead holder's lock is recovered, a
live one reported):
1. commit what MemVault itself still has to commit (the journal, as a write would), and
   refuse if a person has uncommitted edits under bots/ (never merged over);
2. fetch the remote's branch; fast-forward when ours is behind, a merge commit
   (vault.git.gitmerge: both memories kept, a conflicting file kept twice) otherwise;
3. write what changed into the working tree file by file (temp + rename, never through a
   link), so a running `memvault watch` indexes it; in a writer process the vault's
   `on_written` hook indexes it at once;
4. push; if another replica pushed in between, fetch, merge and push once more.
The last outcome is kept for `status` and Health (vault.git.syncstate).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Protocol

from dulwich.graph import find_merge_base
from dulwich.objects import Blob, Commit, ObjectID
from dulwich.repo import Repo

from vault.errors import MemVaultError
from vault.git import (
    gitlog,
    gitmerge,
    gitplan,
    gitremote,
    gitrepo,
    gitstate,
    gittrees,
    syncstate,
    syncwrite,
)
from vault.git.gitmerge import MergeResult
from vault.git.gitremote import Remote, SyncError, SyncRefused
from vault.git.handedits import uncommitted_edits
from vault.layout.layout import Layout

__all__ = ["SyncError", "SyncRefused", "SyncResult", "Synced", "set_remote", "sync"]

log = logging.getLogger(__name__)

SHOWN = 3


class _Lock(Protocol):
    def hold(self) -> AbstractContextManager[None]: ...


class Synced(Protocol):
    """What sync needs of a vault (vault.writes.core.VaultCore is one): its writer lock,
    so no memory operation runs meanwhile, and the hook a writer process indexes through."""

    root: Path
    layout: Layout
    lock: _Lock
    on_written: Callable[[list[str]], None] | None


@dataclass
class SyncResult:
    remote: str
    action: str  # up-to-date | pushed | fast-forward | merged
    head: str
    pulled: list[str] = field(default_factory=list)  # files the pull changed here
    pushed: bool = False
    conflicts: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def as_json(self) -> dict[str, object]:
        return asdict(self)


def sync(vault: Synced, url: str | None = None) -> SyncResult:
    """Sync `vault` with `url` (else its configured origin); raises SyncError/SyncRefused,
    or GitCommitError when git's index lock is held by someone else."""
    root = vault.root
    if not (root / ".git").exists():
        raise SyncRefused(f"{root} has no git history: run `memvault init` there first")
    started = time.perf_counter()
    remote_url = gitremote.shown(url) if url else "?"
    try:
        with Repo(str(root)) as repo:
            branch = _branch(repo)
            remote = gitremote.resolve(repo, url, branch)
            remote_url = remote.shown
            result = _pull_push(vault, repo, remote, branch)
    except MemVaultError as exc:
        syncstate.record(vault.layout.state_dir, remote_url, error=str(exc))
        raise
    result.seconds = round(time.perf_counter() - started, 3)
    syncstate.record(vault.layout.state_dir, result.remote, notes=result.notes)
    log.info(
        "git=sync remote=%s action=%s pulled=%d conflicts=%d pushed=%s s=%.2f",
        result.remote, result.action, len(result.pulled), len(result.conflicts),
        result.pushed, result.seconds,
    )  # fmt: skip
    if vault.on_written is not None and result.pulled:
        try:  # a writer process indexes the pull now; the files are safe on disk already
            vault.on_written(result.pulled)
        except Exception as exc:  # noqa: BLE001 - the watcher or the next reconcile catches up
            log.warning("index=sync_failed paths=%d error=%r", len(result.pulled), str(exc))
    return result


def set_remote(root: Path, url: str) -> None:
    with Repo(str(root)) as repo:
        gitremote.set_default(repo, url)


def _branch(repo: Repo) -> bytes:
    refnames, _ = repo.refs.follow(b"HEAD")
    if not refnames or refnames[-1] == b"HEAD" or len(refnames) < 2:
        raise SyncRefused(
            "HEAD is detached: sync merges onto a branch; `git switch main` first, then sync"
        )
    return refnames[-1]


def _commit_pending(vault: Synced) -> None:
    """What MemVault wrote but could not commit yet goes in first, as the next write would
    commit it (only while each file still holds the bytes MemVault wrote)."""
    state = vault.layout.state_dir
    plan = gitplan.plan(gitstate.read_pending(state), "sync", {})
    if not plan.expected:
        return
    left: list[str] = []
    gitlog.commit_paths(
        vault.root,
        list(plan.expected),
        gitplan.message_with_earlier("sync: commit before merging", plan),
        repair_index=True,
        expected=plan.accepts(),
        left=left,
    )
    gitstate.committed(state)


def _refuse_hand_edits(root: Path) -> None:
    """Refuse while a person has uncommitted work under bots/; a conflict copy they deleted
    (the way to keep the remote's version) is the one change sync commits for them: it made
    that file, and git history keeps it."""
    edits = uncommitted_edits(root)
    resolved = [
        rel
        for rel in edits
        if gitmerge.is_conflict_copy(rel.rsplit("/", 1)[-1]) and not os.path.lexists(root / rel)
    ]
    if resolved:
        message = (
            f"sync: {len(resolved)} conflict cop{'y' if len(resolved) == 1 else 'ies'} resolved"
        )
        gitlog.commit_paths(root, resolved, message, expected={p: {None} for p in resolved})
        edits = uncommitted_edits(root)
    if edits:
        shown = ", ".join(edits[:SHOWN]) + (
            f" (+{len(edits) - SHOWN})" if len(edits) > SHOWN else ""
        )
        raise SyncRefused(
            f"{len(edits)} file(s) under bots/ have changes git does not hold ({shown}); sync "
            f"never merges over a person's work: commit them (`git -C {root} add -A bots && "
            f'git -C {root} commit -m "hand edits"`) or undo them, then sync again'
        )


def _pull_push(vault: Synced, repo: Repo, remote: Remote, branch: bytes) -> SyncResult:
    """Fetch and push outside the writer lock (a slow network must not make a memory
    operation time out waiting); commit, merge and write the files under it."""
    result = SyncResult(remote.shown, "up-to-date", "")
    for attempt in (1, 2):
        theirs = gitremote.fetch(repo, remote, branch)
        with vault.lock.hold():
            _commit_pending(vault)
            _refuse_hand_edits(vault.root)
            head = _merge_in(vault, repo, branch, _head(repo), theirs, result)
        result.head = head.decode() if head else ""
        if head is None or head == theirs:
            return result
        if gitremote.push(repo, remote, branch, head, theirs):
            result.pushed = True
            if result.action == "up-to-date":
                result.action = "pushed"
            return result
        log.info("git=sync_retry reason=remote_moved attempt=%d", attempt)
    raise SyncRefused(
        f"{remote.shown} changed again while this sync pushed (another replica is syncing): "
        "your memories are merged and committed here; run `memvault sync` again"
    )


def _head(repo: Repo) -> ObjectID | None:
    try:
        return repo.head()
    except KeyError:
        return None


def _merge_in(
    vault: Synced,
    repo: Repo,
    branch: bytes,
    ours: ObjectID | None,
    theirs: ObjectID | None,
    result: SyncResult,
) -> ObjectID | None:
    """Bring `theirs` into our branch and working tree; the head to push (None: empty)."""
    if theirs is None or theirs == ours:
        return ours
    bases = find_merge_base(repo, [ours, theirs]) if ours is not None else []
    if theirs in bases:
        return ours  # the remote is behind us: only a push
    store = repo.object_store
    base_tree = _tree(repo, bases[0]) if bases else None
    ours_tree, theirs_tree = _tree(repo, ours), _tree(repo, theirs)

    def read(sha: ObjectID) -> bytes:
        blob = store[sha]
        assert isinstance(blob, Blob)
        return blob.as_raw_string()

    if ours_tree is None:  # an unborn branch: everything is the remote's
        trees = gittrees.flat(store, base_tree), {}, gittrees.flat(store, theirs_tree)
    else:
        trees = gittrees.changed_only(store, base_tree, ours_tree, theirs_tree)
    merged = gitmerge.merge(*trees, read, store.add_object)
    if ours_tree is not None and gittrees.clashes(store, ours_tree, trees[1], merged.tree):
        trees = tuple(gittrees.flat(store, t) for t in (base_tree, ours_tree, theirs_tree))
        merged = gitmerge.merge(*trees, read, store.add_object)
    ours_flat = trees[1]
    tree = gittrees.build(store, ours_tree, ours_flat, merged.tree)
    lock = gitrepo.lock_index(repo.index_path())
    with lock:
        changed = syncwrite.write_tree(
            vault.root, vault.layout.state_dir, repo, ours_flat, merged.tree
        )
        fast = tree == theirs_tree and (ours is None or bool(bases) and bases[0] == ours)
        new = theirs if fast else _merge_commit(repo, tree, merged, ours, theirs)
        if not repo.refs.set_if_equals(branch, ours, new, message=b"memvault sync"):
            raise SyncRefused("the branch moved during sync (a git command ran): sync again")
        entries, version = gitrepo.read_index(repo)
        paths = [os.fsencode(p) for p in changed]
        gitrepo.refresh_entries(entries, gitrepo.snapshot(repo, vault.root, paths))
        gitrepo.write_index(lock, repo, entries, version)
    gitstate.committed(vault.layout.state_dir)  # under the writer lock: only our lines
    result.action = "fast-forward" if fast else "merged"
    result.pulled = sorted(set(result.pulled) | set(changed))
    result.conflicts += merged.conflicts
    result.notes += merged.notes()
    return new


def _tree(repo: Repo, commit_id: ObjectID | None) -> ObjectID | None:
    if commit_id is None:
        return None
    commit = repo[commit_id]
    assert isinstance(commit, Commit)
    return commit.tree


def _merge_commit(
    repo: Repo, tree: ObjectID, merged: MergeResult, ours: ObjectID | None, theirs: ObjectID
) -> ObjectID:
    author = gitrepo.identity(repo)
    now = int(time.time())
    commit = Commit()
    commit.tree = tree
    commit.parents = [c for c in (ours, theirs) if c is not None]
    commit.author = commit.committer = author
    commit.author_time = commit.commit_time = now
    commit.author_timezone = commit.commit_timezone = time.localtime(now).tm_gmtoff
    lines = [f"sync: merge {theirs.decode()[:12]}", ""] + merged.notes()
    commit.message = ("\n".join(lines).rstrip() + "\n").encode("utf-8")
    repo.object_store.add_object(commit)
    return commit.id
