"""What a command does about the files the index is behind on, when it is the index writer
only for a moment (`memvault search`, the supersede check of a correction's `remember`,
`candidates extract`).

Nobody keeps the index in sync while no writer runs (no `memvault watch`, console or
plugin). Reconciling the whole vault before answering would mean minutes of embedding
without a word after a watcher stopped half-way or an import of thousands of files. So:

- a few changes (at most CATCH_UP_FILES files: the hand edit, the `remember` just made) are
  indexed first, as before, so the next search finds them;
- more are left to a writer: deletions are still applied (a forgotten memory stops
  answering; they embed nothing), the command answers from what is indexed and says so on
  stderr in one line, with how many changes wait and the command that indexes them;
- with no index at all there is nothing to answer from: everything is indexed first; past
  CATCH_UP_FILES files with a line saying so, then one on stderr every PROGRESS_S seconds
  (files done of all, seconds). Ctrl-C stops it and keeps what was indexed (the manifest
  commits per batch, indexer.sync.syncer).

Most searches find nothing to catch up. `behind` says so from a read-only engine (the same
scan, plan and self-heal count the writer's reconcile makes, nothing written), so a search
answers read-only: no writer lock, no index writer, no syncer and its imports (issue 23
item 4). When it is behind, the search opens as writer and catches up as above.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

import numpy as np

from indexer import engine as engine_module
from indexer.engine import Engine
from indexer.sync.disk_plan import hashed_plan, scan_vault
from indexer.sync.id_sets import held_ids
from indexer.sync.report import SyncReport

CATCH_UP_FILES = 64  # files (re)indexed before answering; more are left to a writer
PROGRESS_S = 2.0  # at most one progress line this often (and one when done)
FIRST_BATCH_FILES = 32  # smaller batches while indexing from nothing: a line comes sooner
HOW = (
    "run `memvault reindex --keep` to index them, or start an index writer such as `memvault watch`"
)


class ProgressLines:
    """Syncer.on_progress as plain lines on stderr (a pipe or a log too, not only a tty)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.started = self.said = time.monotonic()

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - self.said < PROGRESS_S:
            return
        self.said = now
        print(
            f"memvault: indexed {done:,} of {total:,} file(s) ({now - self.started:.0f} s)",
            file=self.out,
            flush=True,
        )


def catch_up(engine: Engine, *, limit: int | None = None, out: TextIO | None = None) -> SyncReport:
    """Bring the index as far as the module says before a command answers; the one-line
    warning on `out` (stderr) when it stays behind."""
    out = out or sys.stderr
    limit = CATCH_UP_FILES if limit is None else limit
    if not engine.manifest.known() and len(scan_vault(engine.root, [])) > limit:
        report = index_all(engine, out)
    else:  # a few files to index from nothing are as quick as a few changes: said nothing
        report = engine.reconcile(limit=limit)
    note = behind_note(report)
    if note:
        print(note, file=out, flush=True)
    if engine.rebuild_skipped:
        print(
            f"warning: the vectors of {engine.rebuild_skipped} are not built yet, so this "
            f"answer ranks with those of {engine.embedder.identity.key}: {HOW} (builds them)",
            file=out,
            flush=True,
        )
    return report


def index_all(engine: Engine, out: TextIO) -> SyncReport:
    """Index every file (there is no index to answer from), saying how far it got."""
    syncer = engine.syncer
    assert syncer is not None  # only a writer gets here
    print(
        f"memvault: no index yet: indexing {len(scan_vault(engine.root, [])):,} memory "
        "file(s) before answering (Ctrl-C stops; what is indexed by then is kept)",
        file=out,
        flush=True,
    )
    saved = syncer.on_progress, syncer.batch_files
    syncer.on_progress = ProgressLines(out)
    syncer.batch_files = min(syncer.batch_files, FIRST_BATCH_FILES)
    try:
        return engine.reconcile()
    finally:
        syncer.on_progress, syncer.batch_files = saved


def behind_note(report: SyncReport) -> str:
    """`warning: not indexed yet: N changed memory file(s); ...`, or "" if none was left."""
    parts = []
    if report.deferred:
        parts.append(f"{report.deferred:,} changed memory file(s)")
    if report.unhealed:
        parts.append(f"{report.unhealed:,} chunk(s) missing from an index")
    if not parts:
        return ""
    return (
        f"warning: not indexed yet: {' and '.join(parts)}; this answer comes from the index "
        f"as built: {HOW}"
    )


def behind(engine: Engine) -> bool:
    """Whether catch_up on a writer would change or say anything: a file to (re)index or
    forget, a chunk an index lacks or holds astray, vectors of another model than the one
    configured, a symbolic link its reconcile warns about, or no index yet. Reads only, so
    `engine` may be read-only."""
    stored = engine.manifest.embedding_identity
    configured = engine_module.embedder_from_settings()  # the model Engine.open would pick
    if stored is None or stored != configured.identity.key:
        return True  # no index yet, or another model's: the writer rebuilds or says so
    links: list[str] = []
    disk = scan_vault(engine.root, links)
    if links:
        return True
    plan, _ = hashed_plan(engine.root, disk, engine.manifest.known())
    if not plan.is_noop:
        return True
    owned = engine.manifest.owned_chunk_ids()  # sorted unique, as held_ids
    return any(not np.array_equal(held_ids(index), owned) for index in (engine.text, engine.vector))
