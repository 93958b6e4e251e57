"""Git history of the vault: commit exactly the files MemVault wrote, never a person's work.

Pure dulwich, because LangBot's Docker image has no git binary. A commit is built from
HEAD's tree plus the given paths only, and only those paths' index entries are refreshed,
so whatever a person has staged or left unstaged stays exactly as it was.
"""

from __future__ import annotations

import logging
import os
import stat
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from dulwich.errors import NotTreeError
from dulwich.file import FileLocked
from dulwich.index import IndexEntry
from dulwich.object_store import commit_tree_changes, tree_lookup_path
from dulwich.objects import ZERO_SHA, Commit, ObjectID, ShaFile, Tree
from dulwich.repo import Repo

from vault.git import gitrepo
from vault.git.gitrepo import FILE_MODE, GitCommitError, Snapshot

__all__ = ["CommitInfo", "GitCommitError", "commit_paths", "file_history", "init_repo"]

log = logging.getLogger(__name__)

_CAS_ATTEMPTS = 3
_warned_roots: set[str] = set()
_warned_lock = threading.Lock()

_Change = tuple[bytes, int | None, ObjectID | None]


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    author: str  # "Name <email>"
    timestamp: datetime  # author time, aware UTC
    message: str  # first line only


def init_repo(root: Path) -> None:
    """Make ``root`` a git repository on branch ``main``; no-op when ``root/.git`` exists."""
    root = Path(root)
    if (root / ".git").exists():
        return
    root.mkdir(parents=True, exist_ok=True)
    probe = root / ".probe-permissions"
    had_probe = probe.exists()
    Repo.init(str(root), default_branch=b"main").close()
    # dulwich probes file modes with a scratch file in the work tree and leaves it behind
    # when chmod is refused; init must not leave anything in the vault.
    if not had_probe:
        probe.unlink(missing_ok=True)
    log.info("git=init root=%s branch=main", root)


def commit_paths(
    root: Path,
    paths: Sequence[str],
    message: str,
    *,
    repair_index: bool = False,
    expected: Mapping[str, set[str | None]] | None = None,
    left: list[str] | None = None,
) -> str | None:
    """Commit exactly ``paths`` (vault-relative POSIX) as they are on disk now.

    ``expected`` (path -> sha256s of what MemVault wrote there, None: it deleted the path):
    commit a path only while it holds one of those; the others are appended to ``left``
    and stay uncommitted (vault.git.gitplan). Without it every path is taken as it is.

    Returns the new commit's hex sha, or None when the tree would not change or ``root``
    is not a repository. Raises ValueError for a bad path (a caller's bug) and
    GitCommitError when the index stays locked, HEAD keeps moving underneath us, or the
    files and HEAD disagree on what is a file and what a folder. ``repair_index`` (making up an
    interrupted commit) also re-syncs these paths' index entries when HEAD already has
    them: a process killed between moving HEAD and writing the index left them stale.
    """
    if isinstance(paths, str):
        raise TypeError("paths must be a sequence of paths, not one str")
    root = Path(root)
    if not (root / ".git").exists():
        _warn_not_a_repository(root)
        return None
    git_paths = list(dict.fromkeys(gitrepo.git_path(p) for p in paths))
    if not git_paths:
        return None
    wanted = None if expected is None else {os.fsencode(p): v for p, v in expected.items()}
    started = time.perf_counter()
    with Repo(str(root)) as repo:
        # The index lock is taken first and held to the end, as git does: a person's
        # concurrent `git add` can neither be lost nor slip between our commit and our
        # index update (a stale index entry would make their next commit revert ours).
        lock = gitrepo.lock_index(repo.index_path())
        with lock:
            entries, version = gitrepo.read_index(repo)
            taken = gitrepo.snapshot(repo, root, git_paths, wanted, left)
            sha = _commit(repo, taken, message)
            if sha is None:
                if repair_index and _stale(entries, taken):
                    gitrepo.refresh_entries(entries, taken)
                    gitrepo.write_index(lock, repo, entries, version)
                    log.info("git=index_repaired root=%s paths=%d", root, len(taken))
                    return None
                lock.abort()
                log.debug("git=noop root=%s paths=%d", root, len(git_paths))
                return None
            gitrepo.refresh_entries(entries, taken)
            gitrepo.write_index(lock, repo, entries, version)
    elapsed_ms = (time.perf_counter() - started) * 1000
    log.info("git=commit sha=%s root=%s paths=%d ms=%.1f", sha[:12], root, len(taken), elapsed_ms)
    return sha


def _stale(entries: gitrepo.Entries, taken: Snapshot) -> bool:
    """Does any index entry of these paths not match the file (as HEAD now has it)?"""
    for path, snap in taken.items():
        entry = entries.get(path)
        if snap is None:
            if entry is not None:
                return True
        elif not isinstance(entry, IndexEntry) or entry.sha != snap[1].id:
            return True
    return False


def file_history(root: Path, path: str, limit: int = 20) -> list[CommitInfo]:
    """Commits reachable from HEAD that changed ``path``, newest first."""
    root = Path(root)
    if limit <= 0 or not (root / ".git").exists():
        return []
    tree_path = gitrepo.git_path(path)
    with Repo(str(root)) as repo:
        try:
            head = repo.head()
        except KeyError:  # unborn HEAD: no history yet
            return []
        walker = repo.get_walker(include=[head], paths=[tree_path], max_entries=limit)
        return [_commit_info(entry.commit) for entry in walker]


def _warn_not_a_repository(root: Path) -> None:
    key = str(root.resolve())
    with _warned_lock:
        if key in _warned_roots:
            return
        _warned_roots.add(key)
    log.warning('git=off reason=not_a_repository root=%s hint="run memvault init"', root)


_DETACHED = (
    "HEAD is detached (a bisect or `git checkout <commit>`) and MemVault commits only onto a "
    "branch: `git bisect reset` or `git switch` back to your branch"
)


def _rebasing(repo: Repo) -> bool:
    control = Path(repo.controldir())
    return (control / "rebase-merge").is_dir() or (control / "rebase-apply").is_dir()


def _commit(repo: Repo, taken: Snapshot, message: str) -> str | None:
    author = gitrepo.identity(repo)
    text = message.encode("utf-8")
    body = text if text.endswith(b"\n") else text + b"\n"
    for _ in range(_CAS_ATTEMPTS):
        refnames, head = repo.refs.follow(b"HEAD")
        if head is not None and refnames and refnames[-1] == b"HEAD" and not _rebasing(repo):
            # A detached HEAD (a bisect, `git checkout <commit>`): a commit there belongs to
            # no branch, and the person's next `git switch` or `git bisect reset` would delete
            # the memory files from disk with it. Left uncommitted (journaled, shown red), the
            # files survive the switch and the next operation commits them onto the branch.
            # During a rebase a commit on HEAD is what the rebase builds the branch from
            # (like a `git commit` at an `edit` stop), so it is kept there.
            raise GitCommitError(_DETACHED)
        base_id: ObjectID | None = None
        if head is not None:
            head_commit = repo[head]
            assert isinstance(head_commit, Commit)
            base_id = head_commit.tree
        changes = _tree_changes(repo, base_id, taken)
        if not changes:
            return None
        # Hand over the id, not a loaded Tree: commit_tree_changes mutates the Tree it gets.
        tree_id = commit_tree_changes(repo.object_store, base_id or Tree(), changes)
        if tree_id == (base_id or Tree().id):
            return None
        now = int(time.time())
        tz = time.localtime(now).tm_gmtoff
        commit = Commit()
        commit.tree = tree_id
        commit.parents = [head] if head is not None else []
        commit.author = commit.committer = author
        commit.author_time = commit.commit_time = now
        commit.author_timezone = commit.commit_timezone = tz
        commit.message = body
        repo.object_store.add_object(commit)
        # An unborn HEAD with no symref chain: HEAD itself is the ref to set.
        target = refnames[-1] if refnames else b"HEAD"
        kind = b"commit" if head is not None else b"commit (initial)"
        try:
            moved = repo.refs.set_if_equals(
                target,
                head if head is not None else ZERO_SHA,  # None: "set unconditionally"
                commit.id,
                committer=author,
                timestamp=now,
                timezone=tz,
                message=kind + b": " + body.split(b"\n", 1)[0],
            )
        except FileLocked as exc:
            lockfile = os.fsdecode(exc.lockfilename)
            raise GitCommitError(
                f"{lockfile} is held by another git process: if no git is running, delete that file"
            ) from exc
        if moved:
            return commit.id.decode("ascii")
        log.info("git=retry reason=head_moved ref=%s", target.decode(errors="replace"))
    raise GitCommitError(f"HEAD kept moving during {_CAS_ATTEMPTS} commit attempts")


def _tree_changes(repo: Repo, base_id: ObjectID | None, taken: Snapshot) -> list[_Change]:
    changes: list[_Change] = []
    # Every lookup walks from the root tree: each tree is read and parsed once, not once per
    # path (a made-up commit of 200,000 journaled paths shares a few dozen folders).
    trees: dict[bytes, ShaFile] = {}

    def load(sha: bytes) -> ShaFile:
        found = trees.get(sha)
        if found is None:
            found = trees[sha] = repo.object_store[sha]
        return found

    for path, snap in taken.items():
        mode: int | None = None
        if base_id is not None:
            try:
                mode, _ = tree_lookup_path(load, base_id, path)
            except KeyError:
                mode = None
            except NotTreeError:
                if snap is None:
                    continue  # a parent is a file in HEAD, so the path is not there
                name = path.decode(errors="replace")
                raise GitCommitError(f"a parent of {name} is a file in HEAD") from None
        if snap is None:
            if mode is not None:  # commit_tree_changes raises on deleting what is absent
                changes.append((path, None, None))
        elif mode is not None and stat.S_ISDIR(mode):
            raise GitCommitError(f"{path.decode(errors='replace')} is a folder in HEAD")
        else:
            changes.append((path, FILE_MODE, snap[1].id))
    return changes


def _commit_info(commit: Commit) -> CommitInfo:
    encoding = (commit.encoding or b"utf-8").decode("ascii", errors="replace")
    try:
        message = commit.message.decode(encoding, errors="replace")
        author = commit.author.decode(encoding, errors="replace")
    except LookupError:  # an encoding header Python does not know
        message = commit.message.decode("utf-8", errors="replace")
        author = commit.author.decode("utf-8", errors="replace")
    return CommitInfo(
        sha=commit.id.decode("ascii"),
        author=author,
        timestamp=datetime.fromtimestamp(commit.author_time, UTC),
        message=message.split("\n", 1)[0],
    )
