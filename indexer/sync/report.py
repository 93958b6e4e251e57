"""What one sync did (SyncReport): counts per kind of change, the chunks sent per backend,
the problems found, and what a `limit` left for later. The syncer fills it (indexer.sync.syncer
and the batch half, indexer.sync.apply); `memvault reindex`, `status` and `watch` print it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vault.format.model import Problem


@dataclass
class SyncReport:
    files: int = 0  # indexable files in scope on disk
    hashed: int = 0
    unchanged: int = 0
    added: int = 0
    updated: int = 0
    renamed: int = 0
    deleted: int = 0
    touched: int = 0
    upserted: dict[str, int] = field(default_factory=dict)  # chunks sent, per backend
    chunks_deleted: int = 0
    healed: int = 0  # chunks fixed because an index disagreed with the manifest
    seconds: float = 0.0
    errors: list[Problem] = field(default_factory=list)
    # Episode files of the synced scopes that state an id another file there states too:
    # both stay indexed (nothing of either is lost), operations by that id are refused.
    duplicates: list[Problem] = field(default_factory=list)
    # What this sync changed in the index (added, updated, renamed to, deleted), sorted:
    # `memvault watch` names them per batch.
    paths: list[str] = field(default_factory=list)
    # Left for a later sync by a `limit` (reconcile): files to add, update or rename, and
    # chunks an index lacks (a lost vector folder, another model's vectors).
    deferred: int = 0
    unhealed: int = 0

    @property
    def changed(self) -> int:
        return self.added + self.updated + self.renamed + self.deleted

    def as_log(self) -> str:
        skip = ("upserted", "errors", "duplicates", "seconds", "paths")
        values = {k: v for k, v in vars(self).items() if k not in skip}
        values |= {f"upserted_{name}": n for name, n in self.upserted.items()}
        values |= {"errors": len(self.errors), "duplicates": len(self.duplicates)}
        values |= {"ms": round(self.seconds * 1000, 1)}
        return " ".join(f"{k}={v}" for k, v in values.items())
