"""Keep the indexes in sync while people edit the vault: watchdog events, debounced.

Events are hints, never data: a batch is only a list of paths to look at again, and the
Syncer compares them with the manifest. That is what makes the lossy cases safe (an atomic
save seen as `moved tmp -> target`, a folder moved out of the tree seen as one `deleted`,
git rewriting hundreds of files): whatever the events said, the files decide.

One owned thread collects paths and waits for a quiet period (git checkout sends thousands
of events in ~200 ms), bounded so a constant stream still syncs about once a second. A
batch that fails is logged and retried with back-off; the thread never dies from it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from pathlib import Path

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from indexer.sync import Syncer, SyncReport
from vault.layout import STATE_DIR, is_ignored
from vault.names import ID_FILE

log = logging.getLogger(__name__)

QUIET_S = 0.2
MAX_DELAY_S = 1.0
RESYNC_S = 300.0  # a full (stat-only fast path) reconcile after this long without events
_CHANGE_EVENTS = (
    FileCreatedEvent,
    FileModifiedEvent,
    FileDeletedEvent,
    FileMovedEvent,
    FileClosedEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
)
RETRY_S = (0.5, 1.0, 2.0, 5.0, 15.0, 30.0)
# Reads (ours included: the Syncer opens files) must not look like changes, or every sync
# would schedule another one; a directory's own "modified" only repeats its children's news.
_HINT_TYPES = frozenset({"created", "modified", "deleted", "moved", "closed"})
_SKIPPED_ROOTS = frozenset({".git", STATE_DIR})
_FULL = ""  # the vault root: a full reconcile


class _Hints(FileSystemEventHandler):
    def __init__(self, watcher: VaultWatcher) -> None:
        self._watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type not in _HINT_TYPES:
            return
        if event.is_directory and event.event_type == "modified":
            return
        paths = [event.src_path]
        if event.event_type == "moved":
            paths.append(event.dest_path)  # a temp name moved onto a real file counts
        self._watcher.hint(str(p) for p in paths)


class VaultWatcher:
    """Watch `root` and feed changed paths to `syncer.sync_paths`, debounced.

    The syncer stays the caller's: stop() the watcher before closing it. Other threads may
    call `syncer.sync_paths` directly meanwhile (read-your-writes); the Syncer serialises.
    """

    def __init__(
        self,
        root: Path,
        syncer: Syncer,
        *,
        quiet_s: float = QUIET_S,
        max_delay_s: float = MAX_DELAY_S,
        resync_s: float = RESYNC_S,
    ) -> None:
        self.root = Path(root).resolve()
        self.syncer = syncer
        self.quiet_s = quiet_s
        self.max_delay_s = max_delay_s
        self.resync_s = resync_s
        self.ready = threading.Event()  # set after the first successful full reconcile
        self.batches = 0
        self.failures = 0
        self.last_report: SyncReport | None = None
        self.last_sync_at: float | None = None  # wall clock of the last successful batch
        self._cond = threading.Condition()
        self._pending: set[str] = set()
        self._first = 0.0  # when the oldest pending path arrived
        self._last = 0.0  # when the newest one did
        self._not_before = 0.0  # back-off after a failed batch
        self._stopping = False
        self._observer: BaseObserver | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("watcher already started")
        # Observe first, reconcile second: a change made while the reconcile scans is
        # then still seen as an event and synced after it.
        observer = Observer()
        # Only events that can mean "content changed": opens and read-only closes (our own
        # reconcile reads every file) otherwise flood inotify's queue, and an overflow is
        # silently dropped by watchdog, losing edits until the next reconcile.
        observer.schedule(
            _Hints(self), str(self.root), recursive=True, event_filter=list(_CHANGE_EVENTS)
        )
        observer.daemon = True
        observer.start()
        self._observer = observer
        with self._cond:
            self._pending.add(_FULL)
            self._first = self._last = float("-inf")  # due now
        self._thread = threading.Thread(target=self._run, name="memvault-watch", daemon=True)
        self._thread.start()
        log.info("watch=start root=%s quiet_ms=%d", self.root, self.quiet_s * 1000)

    def stop(self, timeout: float = 30.0) -> None:
        """Stop watching, sync what is still pending (one attempt), join the thread."""
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout)
            self._observer = None
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                log.error("watch=stop_timeout seconds=%.0f", timeout)
            self._thread = None
        log.info("watch=stop batches=%d failures=%d", self.batches, self.failures)

    def __enter__(self) -> VaultWatcher:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ events in

    def hint(self, paths: Iterable[str]) -> None:
        """Note paths that may have changed (absolute, or relative to the vault)."""
        rels = [r for r in (self._relative(p) for p in paths) if r is not None]
        if not rels:
            return
        now = time.monotonic()
        with self._cond:
            if not self._pending:
                self._first = now
            self._pending.update(rels)
            self._last = now
            self._cond.notify_all()

    def _relative(self, path: str) -> str | None:
        # No resolve(): it costs syscalls per event (thousands during a checkout), and the
        # observer reports paths under the resolved root we gave it anyway.
        candidate = Path(path)
        try:
            rel = candidate.relative_to(self.root) if candidate.is_absolute() else candidate
        except ValueError:
            return None
        rel = rel.as_posix()
        parts = [] if rel == "." else rel.split("/")
        if parts and parts[-1] == ID_FILE:
            # A hashed folder name only classifies once its .id file exists: recheck the
            # folder when that (ignored, dot-named) file appears.
            parts = parts[:-1]
        if parts and (parts[0] in _SKIPPED_ROOTS or any(is_ignored(p) for p in parts)):
            return None
        return "/".join(parts)

    # ------------------------------------------------------------------ the thread

    def _run(self) -> None:
        while True:
            batch = self._next_batch()
            if batch is None:
                return
            self._sync(batch, final=self._stopping)

    def _next_batch(self) -> set[str] | None:
        with self._cond:
            while True:
                if self._stopping:
                    # Flush: whatever is pending goes now, without waiting for quiet.
                    return self._take() if self._pending else None
                if self._pending:
                    due = max(
                        min(self._last + self.quiet_s, self._first + self.max_delay_s),
                        self._not_before,
                    )
                    wait = due - time.monotonic()
                    if wait <= 0:
                        return self._take()
                    self._cond.wait(wait)
                elif not self._cond.wait(self.resync_s):
                    # Quiet for a long time: reconcile anyway, the safety net for events the
                    # kernel or watchdog dropped (queue overflow, a network file system).
                    self._pending.add(_FULL)
                    self._first = self._last = float("-inf")

    def backlog(self) -> tuple[int, float]:
        """(paths waiting to be indexed, seconds the oldest has waited; 0 when none)."""
        with self._cond:
            if not self._pending:
                return 0, 0.0
            age = time.monotonic() - self._first if self._first != float("-inf") else 0.0
            return len(self._pending), max(0.0, age)

    def _take(self) -> set[str]:
        batch, self._pending = self._pending, set()
        return batch

    def _sync(self, batch: set[str], *, final: bool) -> None:
        started = time.monotonic()
        try:
            report = self.syncer.sync_paths(sorted(batch))
        except Exception:
            self.failures += 1
            delay = RETRY_S[min(self.failures - 1, len(RETRY_S) - 1)]
            log.exception(
                "watch=batch_failed paths=%d sample=%s failures=%d retry_s=%s",
                len(batch),
                sorted(batch)[:3],
                self.failures,
                "none (stopping)" if final else delay,
            )
            if not final:
                with self._cond:
                    if not self._pending:
                        self._first = self._last = started
                    self._pending |= batch
                    self._not_before = time.monotonic() + delay
            return
        self.failures = 0
        self.batches += 1
        self.last_report = report
        self.last_sync_at = time.time()
        if _FULL in batch:
            self.ready.set()
        log.debug(
            "watch=batch paths=%d ms=%.1f changed=%d",
            len(batch),
            (time.monotonic() - started) * 1000,
            report.changed,
        )
