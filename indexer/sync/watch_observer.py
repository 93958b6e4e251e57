"""A watchdog observer that says when file system events were lost.

Measured with watchdog 7.1 (tests/indexer/sync/test_watcher_overflow.py): on IN_Q_OVERFLOW
it logs a warning and re-adds its own watches, but tells no event handler, so a watcher that
waits for events misses every file whose events the kernel dropped until its next periodic
reconcile (100,000 files copied in: 37 % of them unseen for 284 s). It also skips
a sub-folder it cannot watch without a word (inotify_add_watch fails with ENOSPC once
fs.inotify.max_user_watches is used up), and a dead reader thread only means silence.

The one class that sees all three is InotifyFD, the reader thread of one inotify instance:
subclassed here, it calls `on_lost(reason, detail)`. On an overflow it also replaces
watchdog's repair, which overflows the queue again for ever on a tree of many folders
(_rewatch). That is watchdog internals, so pyproject.toml pins watchdog below 8 and
tests/indexer/sync/test_watcher_overflow.py fails if a new version changes them. Other
platforms get watchdog's own observer; the watcher's liveness and vault-root checks still
cover them. The reader also re-adds a watch it has quietly (see _add_callback), where watchdog warns
with the whole watch tree in the text: no process-wide warnings filter, which a host or a
test runner drops and which would hide the warning from the host's own watchdog users.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from indexer.sync.watch_limits import (
    LIMIT_ERRNOS,
    QUEUE_LIMIT,
    cannot_watch,
    inotify_limit,
    limits_reached,
    root_gone,
)
from vault.format.findings import Check

log = logging.getLogger("indexer.sync.watcher")  # one logger for everything the watcher says
_watchdog_log = logging.getLogger("watchdog.observers.inotify_c")
# watchdog 7's emitter races its own shutdown: a read that returns after stop() cleared the
# watch group logs this at ERROR (seen at the end of `memvault demo` and `watch`). Nothing
# is lost or wrong (the observer is stopping on purpose; a dead observer while running is
# caught by observer_alive), so a person must not read "ERROR" for it.
_SHUTDOWN_RACE = "InotifyEmitter.queue_events() called when the thread is inactive"


def _not_the_shutdown_race(record: logging.LogRecord) -> bool:
    return record.getMessage() != _SHUTDOWN_RACE


logging.getLogger("watchdog.observers.inotify").addFilter(_not_the_shutdown_race)

LostCallback = Callable[[str, str], None]


if sys.platform.startswith("linux"):
    from watchdog.observers.api import DEFAULT_OBSERVER_TIMEOUT
    from watchdog.observers.inotify import InotifyEmitter, InotifyWatchGroup
    from watchdog.observers.inotify_c import (
        CallbackId,
        InotifyEvent,
        InotifyFD,
        Mask,
        WatchCallback,
        WatchDescriptor,
    )

    class _LossAwareFD(InotifyFD):
        def __init__(self, on_lost: LostCallback) -> None:
            self._on_lost = on_lost
            super().__init__()

        def handle_event(self, event: InotifyEvent) -> None:
            if not event.is_queue_overflow:
                super().handle_event(event)
                return
            # watchdog's own warning, from its logger (bench.sync counts it), then watch
            # again what the lost events would have added (new folders), then ask for the
            # reconcile that finds what they would have said.
            _watchdog_log.warning("Inotify queue overflowed; filesystem events were lost")
            with self._lock:
                groups = {
                    id(cb): cb for w in self._watch_for_wd.values() for cb in w.callbacks.values()
                }
            for group in groups.values():
                if isinstance(group, InotifyWatchGroup):
                    _rewatch(group)
            limit = inotify_limit(QUEUE_LIMIT)
            self._on_lost("queue_overflow", f"fs.inotify.max_queued_events={limit}")

        def _add_callback(
            self, path: bytes, mask: Mask, callback: WatchCallback, id_: CallbackId
        ) -> WatchDescriptor:
            # Under self._lock (add_callback). The same watcher adding a folder it watches
            # (`mkdir -p` racing its IN_CREATE, as the console's isolation probe does each
            # time Health opens; the repair after an overflow) is the intent, not news;
            # watchdog's RuntimeWarning stays for another callback under the same id.
            watch = self._get_or_create_watch(path, mask)
            if watch.callbacks.get(id_) is callback:
                return watch.wd
            return super()._add_callback(path, mask, callback, id_)

        def add_callback(
            self, path: bytes, mask: Mask, callback: WatchCallback, id_: CallbackId
        ) -> WatchDescriptor:
            try:
                return super().add_callback(path, mask, callback, id_)
            except OSError as exc:
                # watchdog drops this error for a sub-folder (it may have just vanished):
                # a limit is not that, it leaves the folder unwatched for good.
                if exc.errno in LIMIT_ERRNOS:
                    self._on_lost("watch_limit", os.fsdecode(path))
                raise

        def run(self) -> None:
            try:
                super().run()
            except BaseException as exc:
                self._on_lost("observer_died", f"{type(exc).__name__}: {exc}")
                raise

    def _rewatch(group: InotifyWatchGroup) -> None:
        """watchdog's repair after an overflow (InotifyWatchGroup.on_queue_overflow), minus
        its first step: it removes every watch before adding them again, and each removal
        queues an IN_IGNORED event, so a tree of more folders than the queue holds
        overflows it again, for ever (measured: 20,000 folders, the default 16,384-event
        queue, 4 overflows a second). Adding a watch that exists queues nothing."""
        with group._lock:
            if not group.is_active:
                return
            group._move_event_grouper.discard_pending_events()
            if not group.is_recursive:
                return
            try:
                group._add_all_callbacks(group.path)
            except OSError:
                log.exception("event=watch_rewatch_failed path=%s", os.fsdecode(group.path))

    class _LossAwareObserver(BaseObserver):
        """watchdog's InotifyObserver, with the reader above instead of a plain InotifyFD."""

        def __init__(self, on_lost: LostCallback) -> None:
            self._inotify_fd = _LossAwareFD(on_lost)
            self._inotify_fd.start()
            super().__init__(
                InotifyEmitter, timeout=DEFAULT_OBSERVER_TIMEOUT, inotify_fd=self._inotify_fd
            )

        def on_thread_stop(self) -> None:
            super().on_thread_stop()
            self._inotify_fd.stop()
            self._inotify_fd.join()

        def threads_alive(self) -> bool:
            return self._inotify_fd.is_alive() and all(e.is_alive() for e in self.emitters)


def new_observer(on_lost: LostCallback) -> BaseObserver:
    """An observer that calls `on_lost` when it knows events were lost (inotify only)."""
    if sys.platform.startswith("linux"):
        return _LossAwareObserver(on_lost)
    return Observer()


def observer_alive(observer: BaseObserver) -> bool:
    """The dispatcher, every emitter and (inotify) the reader thread are all running."""
    if not observer.is_alive() or not all(e.is_alive() for e in observer.emitters):
        return False
    check = getattr(observer, "threads_alive", None)
    return bool(check()) if check is not None else True


class WatchedRoot:
    """The observer of one vault folder, kept alive: `check()` restarts it when one of its
    threads died or the folder was replaced, and every lost-events signal goes to `on_lost`.

    `degraded` says why some of the vault is not watched (the watch limit, the folder gone);
    the watcher then reconciles more often. Called from the watcher's one thread, except
    stop() (any thread) and on_lost (also watchdog's threads).
    """

    def __init__(
        self,
        root: Path,
        handler: FileSystemEventHandler,
        event_filter: list[type[FileSystemEvent]],
        on_lost: LostCallback,
        fallback_s: float,
    ) -> None:
        self.root = root
        self.degraded: str | None = None
        self.degraded_check: Check | None = None  # the same, as a health line
        self.unwatched = 0  # folders the watch limit left unwatched
        self._handler, self._filter = handler, event_filter
        self._on_lost, self._fallback_s = on_lost, fallback_s
        self._observer: BaseObserver | None = None
        self._root_id: tuple[int, int] | None = None  # (st_dev, st_ino) being watched
        self._lock = threading.Lock()  # start, restart and stop of the observer
        self._closed = False
        self._retry_at = 0.0  # when to try again to watch a folder that could not be

    @property
    def gone(self) -> bool:
        """The vault folder was seen missing (moved away, deleted) and is not back yet."""
        return self._root_id is None and self._observer is None

    def start(self, *, strict: bool) -> bool:
        """Watch the folder; False when it cannot be (then degraded). Errors other than
        the system's inotify limits raise when `strict` (start-up)."""
        self._root_id = _identity(self.root)
        self.unwatched = 0
        self._retry_at = time.monotonic() + self._fallback_s
        observer = None
        try:
            observer = new_observer(self._signal)  # EMFILE: the instance limit
            observer.schedule(self._handler, str(self.root), recursive=True,
                              event_filter=self._filter)  # fmt: skip
            observer.daemon = True
            observer.start()
        except OSError as exc:
            if observer is not None:
                observer.stop()  # the inotify reader thread runs from construction on
            if exc.errno in LIMIT_ERRNOS:
                self._signal("watch_limit", f"{self.root} ({exc.strerror})")
                return False
            if strict:
                raise
            self._degrade(cannot_watch(self.root, exc))
            return False
        self._observer = observer
        if self.unwatched == 0:
            self.degraded = self.degraded_check = None
        return True

    def stop(self, timeout: float) -> None:
        with self._lock:
            self._closed = True
            self._stop(timeout)

    def _stop(self, timeout: float) -> None:
        if self._observer is not None:
            self._observer.stop()
            if self._observer.is_alive():
                self._observer.join(timeout)
            self._observer = None

    def check(self) -> None:
        """Cheap when all is well (one stat, a few is_alive); otherwise repair and signal."""
        with self._lock:
            if self._closed:
                return
            identity = _identity(self.root)
            if identity is None:
                # Moved away or deleted: nothing to watch, and nothing to reconcile (that
                # would empty the index). Checked again until it is back.
                if self._root_id is not None:
                    self._stop(1.0)
                    self._root_id = None
                    self._degrade(root_gone(self.root))
                    log.warning("event=watch_overflow reason=root_gone detail=%s", self.root)
                return
            if self._observer is not None and identity == self._root_id:
                if observer_alive(self._observer):
                    return
                reason = "observer_died"
            elif self._root_id is None:
                reason = "root_back"
            elif self._observer is None:
                # Could not watch at all (the limits): the fallback reconcile covers it
                # meanwhile; try again now and then, the limit may have been raised.
                if time.monotonic() < self._retry_at:
                    return
                reason = "watch_retry"
            else:
                reason = "root_replaced"
            self._stop(1.0)
            self.start(strict=False)
        self._on_lost(reason, str(self.root))

    def _signal(self, reason: str, detail: str) -> None:
        if reason == "watch_limit":
            self.unwatched += 1
            self._degrade(limits_reached(self._fallback_s))
            if self.unwatched > 1:  # one line per folder would flood the log
                log.debug("event=watch_overflow reason=watch_limit detail=%s", detail)
                return
        self._on_lost(reason, detail)

    def _degrade(self, check: Check) -> None:
        why = check.message
        if self.degraded != why:
            log.error("event=watch_degraded fallback_s=%.0f why=%s", self._fallback_s, why)
        self.degraded = why
        # "watcher: ...", as `!memory health` and `memvault status` have always said it.
        self.degraded_check = Check("WARN", f"watcher: {why}", check.code, check.params)


def _identity(root: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(root)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)
