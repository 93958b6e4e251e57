"""The three trees a sync merges (vault.git.gitsync), read as {path: (mode, blob)} maps of
only the paths either side changed since their common base: a sync of a few new memories
into a 100,000-file vault reads a few dozen tree objects, not 300,000 entries. When a
change could clash with an unchanged path (a file where the other side has a folder), the
whole trees are read instead, so vault.git.gitmerge sees every path it must weigh."""

from __future__ import annotations

import stat

from dulwich.diff_tree import tree_changes
from dulwich.errors import NotTreeError
from dulwich.object_store import BaseObjectStore, commit_tree_changes, tree_lookup_path
from dulwich.objects import ObjectID

from vault.git.gitmerge import Entry, Flat

Trees = tuple[Flat, Flat, Flat]  # base, ours, theirs


def flat(store: BaseObjectStore, tree: ObjectID | None) -> Flat:
    if tree is None:
        return {}
    found = store.iter_tree_contents(tree)
    return {e.path: (e.mode, e.sha) for e in found if e.path is not None}


def _changes(
    store: BaseObjectStore, old: ObjectID | None, new: ObjectID
) -> dict[bytes, Entry | None]:
    """Path -> its entry in `new` (None: gone from it), for every file that differs."""
    found: dict[bytes, Entry | None] = {}
    for change in tree_changes(store, old, new):
        if change.old is not None and change.old.path is not None:
            found.setdefault(change.old.path, None)
        if change.new is not None and change.new.path is not None:
            found[change.new.path] = (change.new.mode, change.new.sha)
    return found


def lookup(store: BaseObjectStore, tree: ObjectID | None, path: bytes) -> Entry | None:
    """The file at `path` in `tree` (None: absent, or a folder there)."""
    if tree is None:
        return None
    try:
        mode, sha = tree_lookup_path(store.__getitem__, tree, path)
    except (KeyError, NotTreeError):
        return None
    return None if stat.S_ISDIR(mode) else (mode, sha)


def changed_only(
    store: BaseObjectStore, base: ObjectID | None, ours: ObjectID, theirs: ObjectID
) -> Trees:
    mine, other = _changes(store, base, ours), _changes(store, base, theirs)
    paths = mine.keys() | other.keys()
    at_base = {p: e for p in paths if (e := lookup(store, base, p)) is not None}

    def side(diff: dict[bytes, Entry | None]) -> Flat:
        picked = {p: diff[p] if p in diff else at_base.get(p) for p in paths}
        return {p: e for p, e in picked.items() if e is not None}

    return at_base, side(mine), side(other)


def clashes(store: BaseObjectStore, ours_tree: ObjectID, ours: Flat, merged: Flat) -> bool:
    """Would a path the merge adds be a file where our tree has a folder, or under a file?"""
    for path in merged.keys() - ours.keys():
        if _is_folder(store, ours_tree, path):
            return True
        parts = path.split(b"/")
        for i in range(1, len(parts)):
            prefix = b"/".join(parts[:i])
            if lookup(store, ours_tree, prefix) is not None and merged.get(prefix) is not None:
                return True
    return False


def _is_folder(store: BaseObjectStore, tree: ObjectID, path: bytes) -> bool:
    try:
        mode, _ = tree_lookup_path(store.__getitem__, tree, path)
    except (KeyError, NotTreeError):
        return False
    return stat.S_ISDIR(mode)


def build(store: BaseObjectStore, ours_tree: ObjectID | None, ours: Flat, merged: Flat) -> ObjectID:
    """Our tree with the merge's changes applied (only the paths that differ)."""
    changes: list[tuple[bytes, int | None, ObjectID | None]] = [
        (p, mode, sha) for p, (mode, sha) in merged.items() if ours.get(p) != (mode, sha)
    ]
    changes += [(p, None, None) for p in ours if p not in merged]
    if ours_tree is None:
        from dulwich.objects import Tree

        return commit_tree_changes(store, Tree(), changes)
    return commit_tree_changes(store, ours_tree, changes)
