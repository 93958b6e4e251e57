"""Stopping the watcher prints no ERROR: watchdog 7's inotify emitter logs "queue_events()
called when the thread is inactive" when a read returns after its own stop() (seen at the
end of `memvault demo`); that one message is dropped, any other watchdog error still shows."""

from __future__ import annotations

import logging

import pytest

import indexer.sync.watch_observer  # noqa: F401 - installs the filter, as the watcher does

WATCHDOG = logging.getLogger("watchdog.observers.inotify")


def test_the_shutdown_race_message_is_dropped(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="watchdog.observers.inotify"):
        WATCHDOG.error("InotifyEmitter.queue_events() called when the thread is inactive")
        WATCHDOG.error("Unhandled exception in InotifyEmitter: disk gone")
    assert [r.getMessage() for r in caplog.records] == [
        "Unhandled exception in InotifyEmitter: disk gone"
    ]
