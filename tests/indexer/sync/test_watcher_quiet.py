"""The watcher adds inotify watches without warnings: watchdog warns (RuntimeWarning
"Callback with id ... already exists", with the whole watch tree in the text) whenever a
folder it watches is registered again, which `mkdir -p` under the watched vault races it
into (the console's isolation probe does that each time Health opens) and which the repair
after a queue overflow does on purpose. Nothing may reach the terminal, whatever warning
filters the process has: here every warning is shown ("always"), as a host or a test runner
that sets its own filters would.

A real observer on a real folder, real inotify events.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from watchdog.events import FileCreatedEvent, FileSystemEvent, FileSystemEventHandler

from indexer.sync.watch_observer import WatchedRoot

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="inotify (the warning's source) is Linux-only"
)


class Seen(FileSystemEventHandler):
    def __init__(self) -> None:
        self.paths: set[str] = set()
        self.lock = threading.Lock()

    def on_any_event(self, event: FileSystemEvent) -> None:
        with self.lock:
            self.paths.add(os.fsdecode(event.src_path))


def watching(root: Path) -> tuple[WatchedRoot, Seen]:
    seen = Seen()
    watched = WatchedRoot(root, seen, [FileCreatedEvent], lambda *_: None, fallback_s=30.0)
    assert watched.start(strict=True)
    return watched, seen


def wait_for(check, what: str, timeout: float = 10.0) -> None:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def runtime_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message)[:200] for w in caught if issubclass(w.category, RuntimeWarning)]


# A tree like the probe's: bots/<bot>/sessions/<chat>/episodes/<yyyy>/<mm>/<file>.md
trees = st.lists(
    st.tuples(st.integers(1, 4), st.integers(1, 3)), min_size=1, max_size=6
)  # (depth of the new folders, files in the deepest)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(trees=trees)
def test_new_folder_trees_are_watched_without_a_warning(tmp_path_factory, trees):
    root = tmp_path_factory.mktemp("vault")
    (root / "bots").mkdir()
    watched, seen = watching(root)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            wanted = set()
            for n, (depth, files) in enumerate(trees):
                # Again and again, as the probe does each time Health opens: the repeat
                # (and the race of mkdir -p with the IN_CREATE of each new level) is the point.
                for repeat in range(5):
                    deepest = root / "bots" / f"__probe_{n}_{repeat}"
                    for level in range(depth):
                        deepest = deepest / f"d{level}"
                    deepest.mkdir(parents=True)
                    for i in range(files):
                        (deepest / f"e{i}.md").write_text("x", encoding="utf-8")
                        wanted.add(str(deepest / f"e{i}.md"))
            # Still watched (no warning because nothing was watched would prove nothing).
            wait_for(lambda: wanted <= seen.paths, f"the {len(wanted)} new files seen")
        assert runtime_warnings(caught) == []
    finally:
        watched.stop(2.0)


@pytest.mark.skipif(sys.platform != "linux", reason="the repair is the inotify reader's")
def test_the_repair_after_an_overflow_re_adds_every_watch_quietly(tmp_path):
    """_rewatch adds each folder's watch again (it is there already): one warning per folder
    before, none now; and the folders are still watched afterwards."""
    from indexer.sync.watch_observer import _rewatch

    root = tmp_path / "vault"
    for chat in range(5):
        (root / "bots" / "b" / "sessions" / f"g{chat}" / "episodes").mkdir(parents=True)
    watched, seen = watching(root)
    try:
        observer = watched._observer
        assert observer is not None
        emitters = list(observer.emitters)
        wait_for(lambda: all(e._inotify is not None for e in emitters), "the watches added")
        groups = [e._inotify for e in emitters]  # type: ignore[attr-defined]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for group in groups:
                _rewatch(group)
        assert runtime_warnings(caught) == []
        after = root / "bots" / "b" / "sessions" / "g3" / "episodes" / "after.md"
        after.write_text("x", encoding="utf-8")
        wait_for(lambda: str(after) in seen.paths, "a file created after the repair")
    finally:
        watched.stop(2.0)
