"""The three-way merge `memvault sync` makes of two vault histories (vault.git.gitsync).

Trees are flattened to {path: (mode, blob)} and merged path by path, so two writers adding
memories to the same chat (one file per memory, unique ids) simply keep both. The rules a
person can rely on (docs/GUIDE.md, "Replicas"):
- one side changed a path, the other did not: take the change;
- both changed an append-only log (`*.jsonl`: audit logs) differently: keep every line of
  both, the remote's first (a union: an audit line is never lost);
- both changed any other file differently (or both added it): the REMOTE's version stays at
  the path (what the other replicas already have and index) and ours is kept beside it as
  `<name>.conflict-<8 hex of its blob>`, a name the indexer never reads as a memory (no
  second copy of an episode id) and that `check`, `status` and Health report until a person
  keeps one version and deletes the other;
- one side deleted a path the other changed: keep the changed version, and report it.
Only regular files at safe paths of the vault layout are taken from a remote (`accepted`):
a symbolic link, a submodule, a `.gitmodules`, a `..` or `.git` part, `.memvault/` or a
file outside bots/ is never written; our side of such a path is kept as it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from dulwich.objects import Blob, ObjectID

Entry = tuple[int, ObjectID]  # (mode, blob sha)
Flat = dict[bytes, Entry]

CONFLICT_MARK = ".conflict-"
CONFLICT_RE = re.compile(r"\.conflict-[0-9a-f]{8}\Z")
_ROOT_FILES = frozenset({b"README.md", b".gitignore"})  # what `memvault init` writes
_REGULAR = (0o100644, 0o100755)


def is_conflict_copy(name: str) -> bool:
    """Is this file name a version `sync` kept beside a conflicting one?"""
    return CONFLICT_RE.search(name) is not None


def accepted(path: bytes, mode: int) -> bool:
    """May a remote's entry be written into the vault? Regular files of the layout only."""
    if mode not in _REGULAR:
        return False  # a symlink (0o120000), a submodule (0o160000)
    if path in _ROOT_FILES:
        return True
    parts = path.split(b"/")
    if parts[0] != b"bots" or len(parts) < 3:
        return False
    for part in parts:
        if part in (b"", b".", b"..") or b"\\" in part or b"\0" in part:
            return False
        if part.lower().startswith(b".git"):  # .git, .gitmodules, .gitattributes
            return False
    try:
        path.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@dataclass
class MergeResult:
    tree: Flat  # the merged tree, flattened
    conflicts: list[tuple[str, str]] = field(default_factory=list)  # (path, copy of ours)
    kept_edits: list[str] = field(default_factory=list)  # an edit kept over a delete
    unioned: list[str] = field(default_factory=list)  # logs whose lines of both were kept
    refused: list[str] = field(default_factory=list)  # remote entries not taken

    def notes(self) -> list[str]:
        said = [
            f"{path}: changed on both replicas; the remote's version is at the path, this "
            f"one's is kept as {copy}: keep one, delete the other, then sync"
            for path, copy in self.conflicts
        ]
        said += [
            f"{path}: deleted on one replica and changed on the other; the changed version "
            "was kept (delete it again if it should go)"
            for path in self.kept_edits
        ]
        said += [
            f"{path}: not taken from the remote (not a regular file of the vault layout)"
            for path in self.refused
        ]
        return said


def merge(
    base: Flat,
    ours: Flat,
    theirs: Flat,
    read: Callable[[ObjectID], bytes],
    add: Callable[[Blob], None],
) -> MergeResult:
    """Merge `theirs` (the remote) into `ours` over their common `base` (empty: unrelated)."""
    result = MergeResult(dict(ours))
    tree = result.tree
    for path in sorted(set(base) | set(ours) | set(theirs)):
        b, o, t = base.get(path), ours.get(path), theirs.get(path)
        name = path.decode("utf-8", "replace")
        if t in (o, b):
            continue  # the remote did not change it, or made the same change
        if not accepted(path, t[0] if t is not None else _REGULAR[0]):
            if t is not None:
                result.refused.append(name)
            continue  # ours stays as it is (a remote's delete of it included)
        if o == b:  # only the remote changed it
            _put(tree, path, t)
            continue
        if t is None or o is None:  # deleted on one side, changed on the other
            kept = t if o is None else o
            _put(tree, path, kept)
            result.kept_edits.append(name)
            continue
        if path.endswith(b".jsonl"):
            data = _union(read(t[1]), read(o[1]))
            blob = Blob.from_string(data)
            add(blob)
            tree[path] = (t[0], blob.id)
            result.unioned.append(name)
            continue
        copy = path + CONFLICT_MARK.encode() + o[1][:8]
        tree[path] = t
        tree[copy] = o
        result.conflicts.append((name, copy.decode("utf-8", "replace")))
    _drop_clashes(tree, ours, result)
    return result


def _put(tree: Flat, path: bytes, entry: Entry | None) -> None:
    if entry is None:
        tree.pop(path, None)
    else:
        tree[path] = entry


def _union(theirs: bytes, ours: bytes) -> bytes:
    """Every line of the remote's log, then ours that it lacks, in their order."""
    lines = theirs.splitlines(keepends=True)
    if lines and not lines[-1].endswith(b"\n"):
        lines[-1] += b"\n"
    seen = {line.rstrip(b"\n") for line in lines}
    for line in ours.splitlines(keepends=True):
        key = line.rstrip(b"\n")
        if key and key not in seen:
            seen.add(key)
            lines.append(key + b"\n")
    return b"".join(lines)


def _drop_clashes(tree: Flat, ours: Flat, result: MergeResult) -> None:
    """A path that is a file on one side and a folder on the other: keep ours."""
    folders = {p[:i] for p in tree for i in range(len(p)) if p[i : i + 1] == b"/"}
    for path in [p for p in tree if p in folders]:
        mine = path in ours
        gone = [p for p in tree if p.startswith(path + b"/")] if mine else [path]
        for p in gone:
            if p not in ours:
                tree.pop(p, None)
                result.refused.append(p.decode("utf-8", "replace"))
