"""Applying a sync plan (indexer.sync.plan) in batches: read, chunk, send, then record.

Each batch gives both backends their deletes and upserts and commits them, and only then
commits the manifest (see indexer.sync.syncer for why that order survives a crash). A chunk keeps
its id across edits and renames by ordinal, and a backend is sent only the chunks whose
fingerprint for it changed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from indexer.backends.backend import SearchBackend
from indexer.backends.records import ChunkDoc
from indexer.sync.documents import fingerprints, read_file, trusted_mtime, with_ids
from indexer.sync.manifest import Manifest
from indexer.sync.manifest_schema import FileEntry
from indexer.sync.plan import DiskFile, Plan
from indexer.sync.report import SyncReport

log = logging.getLogger("indexer.sync.syncer")  # one logger for everything a sync says

_Slot = tuple[int, Mapping[str, str]]  # (chunk_id, fingerprint per backend)


@dataclass
class Batch:
    remove: list[str] = field(default_factory=list)
    put: list[FileEntry] = field(default_factory=list)
    delete_ids: list[int] = field(default_factory=list)
    upserts: dict[str, list[ChunkDoc]] = field(default_factory=dict)


class BatchApplier:
    """The Syncer's half that writes a plan into the backends and the manifest."""

    root: Path
    manifest: Manifest
    backends: dict[str, SearchBackend]
    batch_files: int
    on_progress: Callable[[int, int], None] | None
    _fields: dict[str, Sequence[str] | None]

    def _apply(
        self,
        plan: Plan,
        entries: Mapping[str, FileEntry],
        disk: Mapping[str, DiskFile],
        report: SyncReport,
        observed: int,
    ) -> None:
        # The chunk slots each path starts from: its own (kept by ordinal), those a rename
        # brought, or none (new, overwritten, or its content moved away).
        gone = set(plan.deletes) | {r.old for r in plan.renames}
        base: dict[str, list[_Slot]] = {}
        for path in plan.updates:
            base[path] = [] if path in gone else _slots(entries[path])
        for rename in plan.renames:
            base[rename.new] = _slots(entries[rename.old])

        first = Batch(remove=[*plan.deletes, *(r.old for r in plan.renames)])
        first.delete_ids = [cid for p in plan.deletes for cid in entries[p].chunk_ids]
        first.put = [
            replace(
                entries[p], size=disk[p].size, mtime_ns=trusted_mtime(disk[p].mtime_ns, observed)
            )
            for p in plan.touched
        ]
        # Renames share the first batch with the deletes: a swap must land in one step.
        to_index = [r.new for r in plan.renames] + list(plan.adds) + list(plan.updates)
        size = max(self.batch_files, len(plan.renames))
        self._index_files(to_index[:size], base, first)
        self._commit(first, report)
        self._progress(min(size, len(to_index)), len(to_index))
        for start in range(size, len(to_index), self.batch_files):
            batch = Batch()
            self._index_files(to_index[start : start + self.batch_files], base, batch)
            self._commit(batch, report)
            self._progress(min(start + self.batch_files, len(to_index)), len(to_index))

    def _progress(self, done: int, total: int) -> None:
        if self.on_progress is not None and total:
            self.on_progress(done, total)

    def _index_files(
        self, paths: Sequence[str], base: Mapping[str, list[_Slot]], batch: Batch
    ) -> None:
        parsed: list[tuple[FileEntry, list[ChunkDoc], list[_Slot]]] = []
        for rel in paths:
            entry, docs = read_file(self.root, rel)
            if entry is None:  # vanished since planning: its own event tidies up after
                batch.remove.append(rel)
                batch.delete_ids.extend(cid for cid, _ in base.get(rel, ()))
            else:
                parsed.append((entry, docs, base.get(rel, [])))
        wanted = sum(max(0, len(docs) - len(old)) for _, docs, old in parsed)
        fresh = iter(self.manifest.allocate(wanted))
        for entry, docs, old in parsed:
            slots = old[: len(docs)] + [(next(fresh), {}) for _ in range(len(docs) - len(old))]
            batch.delete_ids.extend(cid for cid, _ in old[len(docs) :])
            docs = with_ids(docs, [cid for cid, _ in slots])
            prints = [fingerprints(doc, self._fields) for doc in docs]
            for name in self.backends:
                changed = [d for d, new, (_, was) in zip(docs, prints, slots, strict=True)
                           if new[name] != was.get(name)]  # fmt: skip
                batch.upserts.setdefault(name, []).extend(changed)
            ids = tuple(doc.chunk_id for doc in docs)
            batch.put.append(
                replace(entry, chunk_ids=ids, fingerprints=tuple(prints), docs=tuple(docs))
            )

    def _commit(self, batch: Batch, report: SyncReport) -> None:
        for name, backend in self.backends.items():
            docs = batch.upserts.get(name, [])
            if not (batch.delete_ids or docs):
                continue
            started = time.perf_counter()
            if batch.delete_ids:
                backend.delete(batch.delete_ids)
            if docs:
                backend.upsert(docs)
            backend.commit()
            report.upserted[name] = report.upserted.get(name, 0) + len(docs)
            ms = (time.perf_counter() - started) * 1000
            log.debug("sync=commit backend=%s docs=%d ms=%.1f", name, len(docs), ms)
        self.manifest.apply(remove=batch.remove, put=batch.put)
        report.chunks_deleted += len(batch.delete_ids)


def _slots(entry: FileEntry) -> list[_Slot]:
    prints = entry.fingerprints or tuple({} for _ in entry.chunk_ids)
    return list(zip(entry.chunk_ids, prints, strict=True))
