"""Keep the text and vector indexes equal to the vault files (DESIGN.md 1).

Files are the truth; the manifest records what the indexes were built from. A sync scans
(stat only), hashes what the stat cannot clear, plans (indexer.plan, pure), then applies
per batch: both backends get their deletes and upserts and commit, and only then does the
manifest commit. A crash in between leaves the manifest behind the indexes, so the next
run redoes the batch (upsert by id is idempotent) instead of trusting stale entries.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from indexer.backend import SearchBackend
from indexer.documents import (
    fingerprints,
    normalise_paths,
    read_file,
    scan,
    scan_tree,
    trusted_mtime,
    with_ids,
)
from indexer.manifest import FileEntry, Manifest, acquire_writer_lock, index_dir
from indexer.plan import DiskFile, Plan, plan_changes
from indexer.records import ChunkDoc
from vault.model import Problem
from vault.safewrite import content_hash

log = logging.getLogger(__name__)

BATCH_FILES = 256
# What a vector backend needs to answer SearchBackend.search: the text it embeds and the
# filter fields. A chunk whose values here are unchanged (a rename inside its scope, an
# importance or tag edit) is not sent to it again, so it is not re-embedded.
VECTOR_FIELDS: tuple[str, ...] = ("text", "user_key", "status", "kind", "expires_at")
_Slot = tuple[int, Mapping[str, str]]  # (chunk_id, fingerprint per backend)


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

    @property
    def changed(self) -> int:
        return self.added + self.updated + self.renamed + self.deleted

    def as_log(self) -> str:
        skip = ("upserted", "errors", "seconds")
        values = {k: v for k, v in vars(self).items() if k not in skip}
        values |= {f"upserted_{name}": n for name, n in self.upserted.items()}
        values |= {"errors": len(self.errors), "ms": round(self.seconds * 1000, 1)}
        return " ".join(f"{k}={v}" for k, v in values.items())


@dataclass
class _Batch:
    remove: list[str] = field(default_factory=list)
    put: list[FileEntry] = field(default_factory=list)
    delete_ids: list[int] = field(default_factory=list)
    upserts: dict[str, list[ChunkDoc]] = field(default_factory=dict)


class Syncer:
    """The single writer of a vault's indexes. Thread-safe: calls are serialised."""

    def __init__(
        self,
        root: Path,
        text: SearchBackend,
        vector: SearchBackend,
        manifest: Manifest | None = None,
        *,
        embedding_identity: str | None = None,
        batch_files: int = BATCH_FILES,
    ) -> None:
        self.root = Path(root)
        folder = index_dir(self.root)
        folder.mkdir(parents=True, exist_ok=True)
        self._lock = acquire_writer_lock(folder)
        try:
            self.manifest = manifest if manifest is not None else Manifest.for_vault(self.root)
        except BaseException:
            self._lock.release()
            raise
        self.backends: dict[str, SearchBackend] = {"text": text, "vector": vector}
        self._fields: dict[str, Sequence[str] | None] = {"text": None, "vector": VECTOR_FIELDS}
        self.embedding_identity = embedding_identity
        self.batch_files = batch_files
        # (files indexed, files to index) after each batch: drives `reindex`'s progress bar.
        self.on_progress: Callable[[int, int], None] | None = None
        self._mutex = threading.Lock()

    @property
    def mutex(self) -> threading.Lock:
        """Held while the indexes change; hold it to swap a backend between batches."""
        return self._mutex

    def close(self) -> None:
        with self._mutex:
            for backend in self.backends.values():
                backend.close()
            self.manifest.close()
            self._lock.release()

    def __enter__(self) -> Syncer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ entry points

    def reconcile(self) -> SyncReport:
        """Bring the indexes in line with every file of the vault."""
        with self._mutex:
            started = time.perf_counter()
            self._reserve_backend_ids()
            observed, disk = time.time_ns(), {}
            bots = self.root / "bots"
            if bots.is_dir():
                disk.update(scan_tree(self.root, bots))
            report = self._sync(disk, None, observed)
            report.healed = self._heal(report)
            return self._finish(report, None, started, "reconcile")

    def sync_paths(self, paths: Iterable[str | os.PathLike[str]]) -> SyncReport:
        """Sync only these paths (files or folders, existing or gone; absolute or relative)."""
        roots = normalise_paths(self.root, paths)
        if "" in roots:
            return self.reconcile()
        with self._mutex:
            started = time.perf_counter()
            observed, disk = time.time_ns(), {}
            for rel in roots:
                disk.update(scan(self.root, self.root / rel))
            report = self._sync(disk, roots, observed)
            return self._finish(report, roots, started, "paths")

    # ------------------------------------------------------------------ planning + applying

    def _sync(
        self, disk: dict[str, DiskFile], roots: list[str] | None, observed: int
    ) -> SyncReport:
        # Stat, size and hash only: the full entries (chunk ids, fingerprints) are loaded
        # only when there is something to apply.
        known = self.manifest.known(roots)
        plan = plan_changes(disk, known)
        report = SyncReport(files=len(disk))
        if plan.needs_hash:
            for rel in plan.needs_hash:
                try:
                    disk[rel] = replace(disk[rel], sha=content_hash((self.root / rel).read_bytes()))
                except OSError:
                    del disk[rel]  # gone since the scan: plan it as deleted
            report.hashed = len(plan.needs_hash)
            plan = plan_changes(disk, known)
        report.unchanged, report.touched = len(plan.unchanged), len(plan.touched)
        report.added, report.updated = len(plan.adds), len(plan.updates)
        report.renamed, report.deleted = len(plan.renames), len(plan.deletes)
        if not plan.is_noop:
            log.debug("sync=plan roots=%s plan=%s", roots, plan)
            self._apply(plan, self.manifest.entries(roots), disk, report, observed)
        return report

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

        first = _Batch(remove=[*plan.deletes, *(r.old for r in plan.renames)])
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
            batch = _Batch()
            self._index_files(to_index[start : start + self.batch_files], base, batch)
            self._commit(batch, report)
            self._progress(min(start + self.batch_files, len(to_index)), len(to_index))

    def _progress(self, done: int, total: int) -> None:
        if self.on_progress is not None and total:
            self.on_progress(done, total)

    def _index_files(
        self, paths: Sequence[str], base: Mapping[str, list[_Slot]], batch: _Batch
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

    def _commit(self, batch: _Batch, report: SyncReport) -> None:
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

    # ------------------------------------------------------------------ self-healing

    def _reserve_backend_ids(self) -> None:
        # A lost or rebuilt manifest must not hand out ids an index still holds.
        top = max((max(b.ids(), default=0) for b in self.backends.values()), default=0)
        if top:
            self.manifest.reserve_above(top)

    def _heal(self, report: SyncReport) -> int:
        """Make each index hold exactly the manifest's chunks (after a crash, a lost index
        folder or a new embedding model): drop strays, re-send what is missing."""
        owner = self.manifest.chunk_owners()
        entries: dict[str, FileEntry] = {}  # loaded only if some chunk is missing
        stored = self.manifest.embedding_identity
        # Only a known identity can say the stored vectors are of another model.
        new_model = (
            None not in (stored, self.embedding_identity) and stored != self.embedding_identity
        )
        redo: set[str] = set()
        healed = 0
        for name, backend in self.backends.items():
            held = backend.ids()
            if name == "vector" and new_model:
                log.warning("sync=reembed old=%s new=%s", stored, self.embedding_identity)
                backend.delete(held)  # vectors of another model: none can be kept
                held = set()
            strays = held - owner.keys()
            missing = sorted({owner[cid] for cid in owner.keys() - held})
            if not strays and not missing and not (name == "vector" and new_model):
                continue
            docs: list[ChunkDoc] = []
            if missing and not entries:
                entries = self.manifest.entries()
            for rel in missing:
                entry, file_docs = read_file(self.root, rel)
                if entry is None or entry.sha != entries[rel].sha:
                    continue  # changed meanwhile: its event or the next reconcile handles it
                if len(file_docs) == len(entries[rel].chunk_ids):
                    docs.extend(with_ids(file_docs, entries[rel].chunk_ids))
                else:  # chunking changed since it was indexed: index it afresh everywhere
                    redo.add(rel)
            backend.delete(strays)
            backend.upsert(docs)
            backend.commit()
            healed += len(strays) + len(docs)
            log.warning("sync=heal backend=%s strays=%d docs=%d", name, len(strays), len(docs))
        if redo:
            batch = _Batch()
            forget_fps = {p: [(cid, {}) for cid in entries[p].chunk_ids] for p in redo}
            self._index_files(sorted(redo), forget_fps, batch)
            self._commit(batch, report)
            healed += sum(len(d) for d in batch.upserts.values())
        if self.embedding_identity is not None and self.embedding_identity != stored:
            self.manifest.set_embedding_identity(self.embedding_identity)
        return healed

    def _finish(
        self, report: SyncReport, roots: list[str] | None, started: float, what: str
    ) -> SyncReport:
        report.errors = self.manifest.errors(roots)
        report.seconds = time.perf_counter() - started
        level = logging.INFO if report.changed or report.healed else logging.DEBUG
        log.log(level, "sync=%s %s", what, report.as_log())
        return report


def _slots(entry: FileEntry) -> list[_Slot]:
    prints = entry.fingerprints or tuple({} for _ in entry.chunk_ids)
    return list(zip(entry.chunk_ids, prints, strict=True))
