"""Read-only views of a vault's git history for the console: the commits that touched a
scope's folders (or one file) and the diff a commit made there.

Everything is limited to the paths asked for: a commit that also touched another chat's
files shows only this scope's part, so history never leaks another scope's memory.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from dulwich.diff_tree import tree_changes
from dulwich.objects import Commit
from dulwich.patch import write_object_diff
from dulwich.repo import Repo

from vault.errors import NotFoundError
from vault.git import gitrepo
from vault.git.gitlog import CommitInfo, _commit_info

MAX_DIFF_BYTES = 400_000


@dataclass(frozen=True)
class ScopedCommit:
    info: CommitInfo
    files: tuple[str, ...]  # vault-relative paths inside the asked-for prefixes


@dataclass(frozen=True)
class ScopedDiff:
    info: CommitInfo
    files: tuple[str, ...]
    diff: str
    truncated: bool


def _inside(path: bytes, prefixes: Sequence[bytes]) -> bool:
    return any(path == p or path.startswith(p.rstrip(b"/") + b"/") for p in prefixes)


def _changes(repo: Repo, commit: Commit, prefixes: Sequence[bytes]) -> list[tuple]:
    parent = repo[commit.parents[0]].tree if commit.parents else None  # type: ignore[attr-defined]
    found = []
    for change in tree_changes(repo.object_store, parent, commit.tree):
        old, new = change.old, change.new
        paths = [p for p in (old.path if old else None, new.path if new else None) if p]
        if any(_inside(p, prefixes) for p in paths):
            found.append((old, new))
    return found


def _path_of(old: object, new: object) -> str:
    entry = new if new is not None and new.path else old  # type: ignore[union-attr]
    return entry.path.decode("utf-8", errors="replace")  # type: ignore[union-attr]


def scope_history(root: Path, prefixes: Sequence[str], limit: int = 50) -> list[ScopedCommit]:
    """Commits reachable from HEAD that changed anything under `prefixes`, newest first."""
    if limit <= 0 or not (Path(root) / ".git").exists():
        return []
    wanted = [gitrepo.git_path(p) for p in prefixes]
    with Repo(str(root)) as repo:
        try:
            head = repo.head()
        except KeyError:  # unborn HEAD: no commits yet
            return []
        walker = repo.get_walker(include=[head], paths=wanted, max_entries=limit)
        out = []
        for entry in walker:
            files = sorted({_path_of(o, n) for o, n in _changes(repo, entry.commit, wanted)})
            out.append(ScopedCommit(_commit_info(entry.commit), tuple(files)))
        return out


def commit_diff(root: Path, sha: str, prefixes: Sequence[str]) -> ScopedDiff:
    """The unified diff of commit `sha`, limited to files under `prefixes`."""
    if len(sha) != 40 or any(c not in "0123456789abcdef" for c in sha):
        raise NotFoundError(f"{sha[:50]!r} is not a commit id: pick one from the history list")
    if not (Path(root) / ".git").exists():
        raise NotFoundError("this vault is not a git repository: it has no history")
    wanted = [gitrepo.git_path(p) for p in prefixes]
    with Repo(str(root)) as repo:
        try:
            commit = repo[sha.encode("ascii")]
        except KeyError as exc:
            raise NotFoundError(f"no commit {sha} in this vault's history") from exc
        if not isinstance(commit, Commit):
            raise NotFoundError(f"{sha} is not a commit")
        changes = _changes(repo, commit, wanted)
        if not changes:
            raise NotFoundError(f"commit {sha[:10]} did not change this chat's files")
        buffer = io.BytesIO()
        for old, new in changes:
            write_object_diff(
                buffer,
                repo.object_store,
                (old.path, old.mode, old.sha) if old and old.path else (None, None, None),
                (new.path, new.mode, new.sha) if new and new.path else (None, None, None),
            )
        raw = buffer.getvalue()
        files = tuple(sorted({_path_of(o, n) for o, n in changes}))
        text = raw[:MAX_DIFF_BYTES].decode("utf-8", errors="replace")
        return ScopedDiff(_commit_info(commit), files, text, len(raw) > MAX_DIFF_BYTES)
