"""Decide what an index sync must do, from file stats and hashes alone (no I/O here).

Two steps, both pure: `plan_changes` first clears every file whose size and mtime match
the manifest (the fast path: no read, no hash). If some file needs its content hash to
decide (new file, or stat changed), the plan comes back incomplete with `needs_hash`; the
caller hashes exactly those and plans again with the hashes filled in.

A path whose old content is gone from it (deleted, or rewritten) is a *source*; a path
holding content the manifest does not have there (new, or rewritten) is a *target*. A
target whose hash equals a source's old hash is a rename: its chunks (and embeddings)
move instead of being rebuilt. That also catches swapped names and `cp a b; edit a`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class DiskFile:
    size: int
    mtime_ns: int
    sha: str | None = None  # None = not hashed yet


@dataclass(frozen=True)
class Known:
    """What the manifest says a path held when it was last indexed."""

    size: int
    mtime_ns: int
    sha: str


@dataclass(frozen=True)
class Rename:
    old: str
    new: str
    sha: str


@dataclass(frozen=True)
class Plan:
    """Apply in this order: deletes, renames, then adds and updates.

    - deletes: forget the path's entry and remove its chunks (file gone, or overwritten by
      a rename, and the old content did not move elsewhere).
    - renames: move old's manifest entry and chunk ids to new. All renames of a plan are
      one step: a swap (a->b, b->a) only works if every source is detached first.
    - adds / updates: parse the file and (re)index it; an update keeps its chunk ids by
      ordinal. A path can be both a rename source and an update (`cp a b; edit a`).
    - touched: content unchanged, only the stat moved on: store the new stat, nothing else.
    """

    needs_hash: tuple[str, ...] = ()
    deletes: tuple[str, ...] = ()
    renames: tuple[Rename, ...] = ()
    adds: tuple[str, ...] = ()
    updates: tuple[str, ...] = ()
    touched: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = field(default=(), repr=False)

    @property
    def complete(self) -> bool:
        return not self.needs_hash

    @property
    def is_noop(self) -> bool:
        return self.complete and not (
            self.deletes or self.renames or self.adds or self.updates or self.touched
        )


def plan_changes(files_on_disk: Mapping[str, DiskFile], manifest: Mapping[str, Known]) -> Plan:
    """Compare a set of paths on disk with the manifest's view of the same paths.

    Paths present in only one mapping are new (disk) or gone (manifest): pass both
    mappings for the same scope (the whole vault, or a batch of changed paths).
    """
    unchanged: list[str] = []
    needs_hash: list[str] = []
    for path in sorted(files_on_disk):
        disk, known = files_on_disk[path], manifest.get(path)
        if known is not None and disk.size == known.size and disk.mtime_ns == known.mtime_ns:
            unchanged.append(path)
        elif disk.sha is None:
            needs_hash.append(path)
    if needs_hash:
        return Plan(needs_hash=tuple(needs_hash))

    unchanged_set = set(unchanged)
    touched: list[str] = []
    targets: list[str] = []  # content new at this path
    sources: list[str] = []  # old content no longer at this path
    for path in sorted(set(files_on_disk) | set(manifest)):
        disk, known = files_on_disk.get(path), manifest.get(path)
        if disk is None:
            sources.append(path)
        elif path in unchanged_set:
            continue
        elif known is None:
            targets.append(path)
        elif disk.sha == known.sha:
            touched.append(path)
        else:
            sources.append(path)
            targets.append(path)

    by_sha: dict[str, list[str]] = {}
    for path in sources:
        by_sha.setdefault(manifest[path].sha, []).append(path)
    renames: list[Rename] = []
    moved_from: set[str] = set()
    moved_to: set[str] = set()
    for path in targets:
        sha = files_on_disk[path].sha
        assert sha is not None  # all hashed above
        # Prefer a source that is really gone (a pure rename) over one still on disk.
        candidates = sorted(by_sha.get(sha, ()), key=lambda p: (p in files_on_disk, p))
        candidates = [c for c in candidates if c != path and c not in moved_from]
        if candidates:
            renames.append(Rename(candidates[0], path, sha))
            moved_from.add(candidates[0])
            moved_to.add(path)

    # A path that received another file's content (`mv b a` over an existing a) loses its
    # own old chunks unless they moved elsewhere: that is a delete too, applied first.
    deletes = [
        p for p in sources if p not in moved_from and (p not in files_on_disk or p in moved_to)
    ]
    adds = [p for p in targets if p not in manifest and p not in moved_to]
    updates = [p for p in targets if p in manifest and p not in moved_to]
    return Plan(
        deletes=tuple(deletes),
        renames=tuple(renames),
        adds=tuple(adds),
        updates=tuple(updates),
        touched=tuple(touched),
        unchanged=tuple(unchanged),
    )
