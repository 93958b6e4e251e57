"""Keep the text and vector indexes equal to the vault files (DESIGN.md 1).

Files are the truth; the manifest records what the indexes were built from. A sync scans
(stat only), hashes what the stat cannot clear, plans (indexer.sync.plan, pure), then applies
per batch: both backends get their deletes and upserts and commit, and only then does the
manifest commit. A crash in between leaves the manifest behind the indexes, so the next
run redoes the batch (upsert by id is idempotent) instead of trusting stale entries.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from indexer.backends.backend import SearchBackend
from indexer.backends.heap import trim
from indexer.backends.locks import acquire_writer_lock
from indexer.backends.records import ChunkDoc
from indexer.sync.apply import Batch, BatchApplier
from indexer.sync.disk_plan import hashed_plan, scan_vault
from indexer.sync.disk_scan import scan
from indexer.sync.documents import normalise_paths, read_file, with_ids
from indexer.sync.id_sets import EMPTY, held_ids, missing, top_id
from indexer.sync.manifest import Manifest, index_dir
from indexer.sync.manifest_schema import FileEntry
from indexer.sync.plan import DiskFile
from indexer.sync.report import SyncReport
from vault.layout.links import link_problem
from vault.layout.store import duplicate_problems

log = logging.getLogger(__name__)

BATCH_FILES = 256
# What a vector backend needs to answer SearchBackend.search: the text it embeds and the
# filter fields. A chunk whose values here are unchanged (a rename inside its scope, an
# importance or tag edit) is not sent to it again, so it is not re-embedded.
VECTOR_FIELDS: tuple[str, ...] = ("text", "index_key", "status", "kind", "expires_at")


class Syncer(BatchApplier):
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

    def reconcile(self, *, limit: int | None = None) -> SyncReport:
        """Bring the indexes in line with every file of the vault.

        `limit`: at most this many files to (re)index and chunks to re-send, for a caller
        that must answer soon (`memvault search`, indexer.cli.catch_up). Past it only deletions
        are applied (a forgotten memory stops answering at once: they cost no embedding)
        and the rest is counted in `deferred` / `unhealed`, left for a writer to index."""
        with self._mutex:
            return self._reconcile(limit)

    def _reconcile(self, limit: int | None) -> SyncReport:
        started = time.perf_counter()
        self._reserve_backend_ids()
        observed, links = time.time_ns(), []
        disk = scan_vault(self.root, links)
        report = self._sync(disk, None, observed, limit)
        if not report.deferred:
            report.healed = self._heal(report, limit)
        trim()  # a whole-vault scan and heal free id sets and entries of every file at once
        return self._finish(report, None, started, "reconcile", links)

    def sync_paths(self, paths: Iterable[str | os.PathLike[str]]) -> SyncReport:
        """Sync only these paths (files or folders, existing or gone; absolute or relative)."""
        roots = normalise_paths(self.root, paths)
        if "" in roots:
            return self.reconcile()
        with self._mutex:
            return self._sync_roots(roots)

    def try_sync_paths(
        self, paths: Iterable[str | os.PathLike[str]], wait: float
    ) -> SyncReport | None:
        """sync_paths, unless another sync (a watcher's start-up catch-up of thousands of
        files) still holds the indexes after `wait` seconds: None then, nothing done."""
        roots = normalise_paths(self.root, paths)
        if not self._mutex.acquire(timeout=wait):
            return None
        try:
            return self._reconcile(None) if "" in roots else self._sync_roots(roots)
        finally:
            self._mutex.release()

    def _sync_roots(self, roots: list[str]) -> SyncReport:
        started = time.perf_counter()
        observed, disk, links = time.time_ns(), {}, []
        for rel in roots:
            disk.update(scan(self.root, self.root / rel, links))
        report = self._sync(disk, roots, observed)
        return self._finish(report, roots, started, "paths", links)

    # ------------------------------------------------------------------ planning + applying

    def _sync(
        self,
        disk: dict[str, DiskFile],
        roots: list[str] | None,
        observed: int,
        limit: int | None = None,
    ) -> SyncReport:
        # Stat, size and hash only: the full entries (chunk ids, fingerprints) are loaded
        # only when there is something to apply.
        known = self.manifest.known(roots)
        files = len(disk)
        plan, hashed = hashed_plan(self.root, disk, known)
        report = SyncReport(files=files, hashed=hashed)
        to_index = len(plan.renames) + len(plan.adds) + len(plan.updates)
        if limit is not None and to_index > limit:
            # Deletions alone are a consistent step: a rename left out is seen again as one
            # (its old entry, its content at the new path) by the next full sync.
            report.deferred = to_index
            plan = replace(plan, renames=(), adds=(), updates=())
        report.unchanged, report.touched = len(plan.unchanged), len(plan.touched)
        report.added, report.updated = len(plan.adds), len(plan.updates)
        report.renamed, report.deleted = len(plan.renames), len(plan.deletes)
        moved = (r.new for r in plan.renames)
        report.paths = sorted({*plan.adds, *plan.updates, *moved, *plan.deletes})
        if not plan.is_noop:
            log.debug("sync=plan roots=%s plan=%s", roots, plan)
            self._apply(plan, self.manifest.entries(roots), disk, report, observed)
        return report

    # ------------------------------------------------------------------ self-healing

    def _reserve_backend_ids(self) -> None:
        # A lost or rebuilt manifest must not hand out ids an index still holds.
        top = max((top_id(held_ids(b)) for b in self.backends.values()), default=0)
        if top:
            self.manifest.reserve_above(top)

    def _heal(self, report: SyncReport, limit: int | None = None) -> int:
        """Make each index hold exactly the manifest's chunks (after a crash, a lost index
        folder or a new embedding model): drop strays, re-send what is missing; nothing,
        counted in `report.unhealed`, when more than `limit` chunks would be re-sent."""
        owned = self.manifest.owned_chunk_ids()
        entries: dict[str, FileEntry] = {}  # loaded only if some chunk is missing
        stored = self.manifest.embedding_identity
        # Only a known identity can say the stored vectors are of another model.
        new_model = (
            None not in (stored, self.embedding_identity) and stored != self.embedding_identity
        )
        held = {name: held_ids(b) for name, b in self.backends.items()}
        if limit is not None:
            resend = sum(
                len(owned) if name == "vector" and new_model else len(missing(owned, held[name]))
                for name in self.backends
            )
            if resend > limit:
                report.unhealed = resend
                return 0
        redo: set[str] = set()
        healed = 0
        for name, backend in self.backends.items():
            if name == "vector" and new_model:
                log.warning("sync=reembed old=%s new=%s", stored, self.embedding_identity)
                backend.delete(held[name].tolist())  # vectors of another model: none kept
                held[name] = EMPTY
            strays = missing(held[name], owned).tolist()
            lost = missing(owned, held[name])
            missing_files = sorted(self.manifest.owners_of(lost.tolist())) if len(lost) else []
            del lost
            if not strays and not missing_files and not (name == "vector" and new_model):
                continue
            docs: list[ChunkDoc] = []
            if missing_files and not entries:
                entries = self.manifest.entries()
            for rel in missing_files:
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
            batch = Batch()
            forget_fps = {p: [(cid, {}) for cid in entries[p].chunk_ids] for p in redo}
            self._index_files(sorted(redo), forget_fps, batch)
            self._commit(batch, report)
            healed += sum(len(d) for d in batch.upserts.values())
        if self.embedding_identity is not None and self.embedding_identity != stored:
            self.manifest.set_embedding_identity(self.embedding_identity)
        return healed

    def _finish(
        self,
        report: SyncReport,
        roots: list[str] | None,
        started: float,
        what: str,
        links: Sequence[str] = (),
    ) -> SyncReport:
        report.errors = self.manifest.errors(roots)
        # Ids the synced files share with another file of their scope (all, on a reconcile).
        report.duplicates = duplicate_problems(self.manifest.shared_episode_ids(roots))
        if links:
            # Skipped, never read (vault.layout.links); reported like a file that does not parse.
            more = f" (+{len(links) - 1} more)" if len(links) > 1 else ""
            plain = (
                f"{links[0]}{more}: symbolic link, not followed (never read) (skipped; "
                "`memvault check` lists every problem)"
            )
            log.warning(
                "sync=links_skipped count=%d first=%s",
                len(links),
                links[0],
                extra={"plain": plain},
            )
            report.errors += [link_problem(rel) for rel in links]
        report.seconds = time.perf_counter() - started
        level = logging.INFO if report.changed or report.healed else logging.DEBUG
        log.log(level, "sync=%s %s", what, report.as_log())
        return report
