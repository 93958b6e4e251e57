"""Keep the indexes in sync while people edit the vault: watchdog events, debounced.

Events are hints, never data: a batch is only a list of paths to look at again, and the
Syncer compares them with the manifest. That is what makes the lossy cases safe (an atomic
save seen as `moved tmp -> target`, a folder moved out of the tree seen as one `deleted`,
git rewriting hundreds of files): whatever the events said, the files decide.

One owned thread collects paths and waits for a quiet period (git checkout sends thousands
of events in ~200 ms), bounded so a constant stream still syncs about once a second. A
batch that fails is logged and retried with back-off; the thread never dies from it.

Lost events are a signal, not a silence: an inotify queue overflow, a sub-folder that could
not be watched (the watch limit), a dead observer thread, or the vault folder itself gone
or replaced each log `event=watch_overflow reason=...` and schedule a full reconcile at
once, through the same thread. The observer is restarted when it died; when watches are
missing for good (the limit), the watcher says so in `degraded` (shown by health) and
reconciles every FALLBACK_S instead of every RESYNC_S.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
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

from indexer.sync.syncer import Syncer, SyncReport
from indexer.sync.watch_observer import WatchedRoot
from vault.format.findings import Check
from vault.layout.layout import STATE_DIR, is_ignored
from vault.layout.names import ID_FILE

log = logging.getLogger(__name__)

QUIET_S = 0.2
MAX_DELAY_S = 1.0
RESYNC_S = 300.0  # a full (stat-only fast path) reconcile after this long without events
FALLBACK_S = 30.0  # the same while some folders cannot be watched (degraded)
LOG_EVERY_S = 5.0  # at most one event=watch_overflow line per reason this often
CHECK_S = 1.0  # how often the thread checks the observer lives and the root is the same one
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
        fallback_s: float = FALLBACK_S,
        on_batch: Callable[[SyncReport, float], None] | None = None,
    ) -> None:
        self.root = Path(root).resolve()
        # Called from the sync thread after each applied batch (the first full reconcile
        # included) with its report and seconds: `memvault watch` prints a line per batch.
        self.on_batch = on_batch
        self.syncer = syncer
        self.quiet_s = quiet_s
        self.max_delay_s = max_delay_s
        self.resync_s = resync_s
        self.fallback_s = fallback_s
        self.ready = threading.Event()  # set after the first successful full reconcile
        self.batches = 0
        self.failures = 0
        self.last_report: SyncReport | None = None
        self.last_sync_at: float | None = None  # wall clock of the last successful batch
        self.lost_events = 0  # signals that events were lost (each scheduled a reconcile)
        self._logged: dict[str, float] = {}  # reason -> when it was last logged
        # Only events that can mean "content changed": opens and read-only closes (our own
        # reconcile reads every file) would otherwise flood inotify's queue.
        self._watch = WatchedRoot(
            self.root, _Hints(self), list(_CHANGE_EVENTS), self._lost, fallback_s
        )
        self._activity = time.monotonic()  # time of the last hint or batch (for the resync)
        self._cond = threading.Condition()
        self._pending: set[str] = set()
        self._first = 0.0  # when the oldest pending path arrived
        self._last = 0.0  # when the newest one did
        self._not_before = 0.0  # back-off after a failed batch
        self._stopping = False
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("watcher already started")
        # Observe first, reconcile second: a change made while the reconcile scans is
        # then still seen as an event and synced after it.
        self._watch.start(strict=True)
        with self._cond:
            self._pending.add(_FULL)
            self._first = self._last = float("-inf")  # due now
        self._thread = threading.Thread(target=self._run, name="memvault-watch", daemon=True)
        self._thread.start()
        log.info("watch=start root=%s quiet_ms=%d", self.root, self.quiet_s * 1000)

    def stop(self, timeout: float = 30.0) -> None:
        """Stop watching, sync what is still pending (one attempt), join the thread."""
        self._watch.stop(timeout)  # no restarts from here on; every event dispatched
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
            self._last = self._activity = now
            self._cond.notify_all()

    @property
    def degraded(self) -> str | None:
        """Why some of the vault is not watched (then it is reconciled every fallback_s);
        None while all of it is. Health shows it."""
        return self._watch.degraded

    @property
    def degraded_check(self) -> Check | None:
        """`degraded` as the health line (code and parameters for the console)."""
        return self._watch.degraded_check

    def _lost(self, reason: str, detail: str) -> None:
        """Events were lost (called from watchdog's threads or ours): reconcile everything.

        Through hint(), so a storm of overflows during one big copy coalesces into one
        reconcile within max_delay_s, run by the one sync thread."""
        now = time.monotonic()
        with self._cond:
            self.lost_events += 1
            # One line per reason per LOG_EVERY_S: overflows come in storms (watchdog's own
            # re-adding of watches can overflow a small queue again), each one coalesced.
            quiet = now - self._logged.get(reason, float("-inf")) < LOG_EVERY_S
            if not quiet:
                self._logged[reason] = now
        if not quiet:
            log.warning(
                "event=watch_overflow reason=%s detail=%s action=full_reconcile lost_events=%d",
                reason,
                detail,
                self.lost_events,
            )
        self.hint([str(self.root)])

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
        checked = float("-inf")
        while True:
            if time.monotonic() - checked >= CHECK_S:
                self._watch.check()
                checked = time.monotonic()
            batch = self._next_batch()
            if batch is None:
                return
            if batch:
                self._sync(batch, final=self._stopping)

    def _next_batch(self) -> set[str] | None:
        """The next batch when due; an empty set after CHECK_S (time to check the watch);
        None when stopping with nothing left."""
        with self._cond:
            if self._watch.gone:
                # The vault folder is away: a sync now would drop its files from the index.
                # The reconcile when it is back (or at the next start) covers what waits.
                if self._stopping:
                    return None
                self._cond.wait(CHECK_S)
                return set()
            if self._stopping:
                # Flush: whatever is pending goes now, without waiting for quiet.
                return self._take() if self._pending else None
            now = time.monotonic()
            if self._pending:
                due = max(
                    min(self._last + self.quiet_s, self._first + self.max_delay_s),
                    self._not_before,
                )
                if due <= now:
                    return self._take()
                self._cond.wait(min(due - now, CHECK_S))
                return set()
            period = self.resync_s if self.degraded is None else self.fallback_s
            if now - self._activity >= period:
                # Quiet for a long time: reconcile anyway, the safety net for events lost
                # without a signal (a network file system, a watchdog we do not know).
                self._pending.add(_FULL)
                self._first = self._last = float("-inf")
                return self._take()
            self._cond.wait(min(period - (now - self._activity), CHECK_S))
            return set()

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
        self._activity = time.monotonic()
        self.last_report = report
        self.last_sync_at = time.time()
        if _FULL in batch:
            self.ready.set()
        seconds = time.monotonic() - started
        log.debug(
            "watch=batch paths=%d ms=%.1f changed=%d", len(batch), seconds * 1000, report.changed
        )
        if self.on_batch is not None:
            try:
                self.on_batch(report, seconds)
            except Exception:  # noqa: BLE001 - reporting a batch must never stop the syncing
                log.exception("watch=on_batch_failed paths=%d", len(batch))
