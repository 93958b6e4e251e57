"""`memvault status` as the files are now, not as they were last indexed.

The index is only as fresh as its last sync, and nothing syncs while no writer runs (no
`memvault watch`, no plugin): a file added, broken or deleted since then must still show
here, as `check` would show it. So status plans the changes between the files on disk and
the manifest (indexer.sync.disk_plan: stat, hash what the stat cannot clear, the pure plan) and
applies none of them: a file whose content is what the manifest indexed keeps its recorded
problem, a file that changed since is parsed again here, a file gone is dropped. That costs
one stat per file plus a parse per changed file, not a parse of the whole vault.

Nothing here writes: the manifest is opened read-only (no lock, no wait on a writer's
transaction; a read-only vault works), files are only stat'ed and read.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from indexer.backends.backend import IndexLockedError
from indexer.sync.disk_plan import hashed_plan, scan_vault
from indexer.sync.disk_scan import role_of
from indexer.sync.documents import parse_file
from indexer.sync.manifest import MANIFEST_NAME, Manifest, index_dir
from indexer.sync.plan import Plan
from vault.format.model import FormatError, Problem
from vault.layout.links import link_problem, read_vault_file
from vault.layout.readonly import can_write
from vault.layout.store import duplicate_problems


@dataclass(frozen=True)
class Pending:
    """Changes on disk the index has not applied yet (the plan a sync would apply)."""

    added: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()
    renamed: tuple[tuple[str, str], ...] = ()  # (old path, new path)
    deleted: tuple[str, ...] = ()

    @classmethod
    def of(cls, plan: Plan) -> Pending:
        renamed = tuple((r.old, r.new) for r in plan.renames)
        return cls(plan.adds, plan.updates, renamed, plan.deletes)

    @property
    def total(self) -> int:
        return len(self.added) + len(self.updated) + len(self.renamed) + len(self.deleted)

    def as_json(self) -> dict[str, Any]:
        moved = [new for _, new in self.renamed]
        return {
            "total": self.total,
            "added": len(self.added),
            "updated": len(self.updated),
            "renamed": len(self.renamed),
            "deleted": len(self.deleted),
            "paths": sorted({*self.added, *self.updated, *moved, *self.deleted}),
        }


@dataclass(frozen=True)
class DiskStatus:
    files: int  # memory files on disk now (what `check` counts as memory files)
    problems: tuple[Problem, ...]  # of those files as they are now, sorted by path and line
    pending: Pending
    indexed: bool  # a manifest exists and could be read
    indexed_files: int = 0  # files the index holds (as last synced)
    chunks: int = 0
    embedding: str | None = None
    unreadable: str = ""  # why an existing index could not be read, if it could not


def disk_status(root: Path) -> DiskStatus:
    links: list[str] = []
    disk = scan_vault(root, links)
    manifest, unreadable = _open(root)
    try:
        known = manifest.known() if manifest is not None else {}
        plan, _ = hashed_plan(root, disk, known)
        same = {*plan.unchanged, *plan.touched}  # content as indexed: its record holds
        fresh = sorted({*plan.adds, *plan.updates, *(r.new for r in plan.renames)})
        parsed = {rel: _parse(root, rel) for rel in fresh}
        problems = [p for p, _ in parsed.values() if p is not None]
        ids = [(rel, eid) for rel, (_, eid) in parsed.items() if eid is not None]
        if manifest is not None:
            problems += [p for p in manifest.errors() if p.path in same]
            # Ids shared among unchanged files, and unchanged files stating a changed one's id.
            indexed = manifest.shared_episode_ids() + manifest.episode_paths(e for _, e in ids)
            ids += [(rel, eid) for rel, eid in indexed if rel in same]
        problems += duplicate_problems(sorted(set(ids)))
        problems += [link_problem(rel) for rel in links]
        return DiskStatus(
            files=len(disk),
            problems=tuple(sorted(problems, key=lambda p: (p.path, p.line))),
            pending=Pending.of(plan),
            indexed=manifest is not None,
            indexed_files=len(known),
            chunks=len(manifest.chunk_ids()) if manifest is not None else 0,
            embedding=manifest.embedding_identity if manifest is not None else None,
            unreadable=unreadable,
        )
    finally:
        if manifest is not None:
            manifest.close()


def _open(root: Path) -> tuple[Manifest | None, str]:
    """(the manifest opened read-only or None, why an existing one could not be read)."""
    if not (index_dir(root) / MANIFEST_NAME).is_file():
        return None, ""
    try:
        return Manifest.for_vault(root, read_only=True), ""
    except IndexLockedError:
        if not can_write(index_dir(root)):
            raise  # a read-only vault's index that cannot be read: its error says what to do
        # Writable: the next writer rebuilds it (an older MemVault's schema, a damaged file),
        # so to status it is an index not built yet, not an error.
        return None, "the index there is an older MemVault's or damaged: the next one rebuilds it"


def _parse(root: Path, rel: str) -> tuple[Problem | None, str | None]:
    """(its problem, its episode id) for a file changed since it was indexed: the same
    parse sync does (indexer.sync.documents), without recording anything."""
    try:
        data, st = read_vault_file(root, rel)  # never through a link
    except OSError:
        return None, None  # gone, or became a link, since the scan: the next status sees it
    role = role_of(root, rel)
    if role is None:
        return None, None
    try:
        docs = parse_file(root, rel, data, st.st_mtime, role).docs
    except FormatError as exc:
        return Problem(rel, exc.line, exc.message), None
    first = docs[0] if docs else None
    return None, first.episode_id if first is not None and first.kind == "episode" else None
