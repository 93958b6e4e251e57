"""Lost events make the watcher reconcile at once, never wait for the periodic resync.

Real watchdog, real files, real indexes and model. An inotify queue overflow is forced for
real: fs.inotify.max_queued_events is global and only read when an inotify instance is
created, so it is lowered to 64 just around the watcher's start (restored in a finally, a
window of about a millisecond) and that one watcher gets a 64-event queue. The watch limit
is per user namespace (/proc/sys/user/max_inotify_watches), so that test runs its watcher
in a child process under `unshare --user` with a tiny limit, touching nobody else's.
Every test sets resync_s to an hour: whatever gets indexed was not the periodic resync.
"""

import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from indexer.sync.watcher import VaultWatcher
from tests.helpers.paths import REPO
from tests.indexer.sync.test_sync import EPISODES, episode, open_syncer, write
from tests.indexer.sync.test_watcher import text_paths, wait_for

QUEUE = Path("/proc/sys/fs/inotify/max_queued_events")
HOUR = 3600.0
TIMEOUT_S = 60.0  # 2,000 files embedded on 2 shared cores: ~10 s when the box is quiet


def chunk_text(syncer, rel: str) -> str:
    """The indexed text of one file ("" when it is not in the manifest)."""
    entry = syncer.manifest.get(rel)
    docs = [syncer.manifest.doc(cid) for cid in entry.chunk_ids] if entry else []
    return " ".join(d.text for d in docs if d is not None)


def lost_lines(caplog, reason: str) -> list[str]:
    needle = f"event=watch_overflow reason={reason}"
    return [r.getMessage() for r in caplog.records if needle in r.getMessage()]


def start_with_small_queue(watcher: VaultWatcher, events: int = 64) -> None:
    try:
        old = QUEUE.read_text()
        QUEUE.write_text(str(events))
    except OSError as exc:
        pytest.skip(f"forcing an inotify overflow needs root to write {QUEUE}: {exc}")
    try:
        watcher.start()  # the observer's inotify instance is created in here
    finally:
        QUEUE.write_text(old)


@pytest.fixture
def small_queue(vault, embedder, caplog):
    """A ready watcher whose inotify queue holds 64 events; resync_s an hour."""
    caplog.set_level(logging.WARNING)
    root = vault.root
    write(root, f"{EPISODES}/seed.md", episode("The seed memory."))
    for path_of in LAYOUTS.values():
        for i in range(40):
            (root / path_of(i)).parent.mkdir(parents=True, exist_ok=True)
    syncer, _ = open_syncer(root, embedder)
    watcher = VaultWatcher(root, syncer, resync_s=HOUR)
    start_with_small_queue(watcher)
    assert watcher.ready.wait(TIMEOUT_S)
    yield root, syncer, watcher
    watcher.stop()
    syncer.close()


# tests/indexer/conftest.py: the real model, as the watcher runs with it. With the tiny fake
# (pure Python, holding the GIL while it embeds 2,000 files) the overflow line came late
# under load (two of two runs beside a browser test under -n 2).
EMBEDDER = "model"

LAYOUTS = {
    # 2,000 files in one folder (the case, scaled down with the queue).
    "one folder": lambda i: f"{EPISODES}/ep{i:05d}.md",
    # Spread over 20 chat folders that exist (are watched) before. New folders are not the
    # case: watchdog lists a new folder's files itself when it adds the folder's watch.
    "watched folders": lambda i: f"bots/bot-{i % 4}/sessions/group_{i % 10}/episodes/e{i}.md",
}


# watchdog warns when it re-adds a folder's watch after the overflow (it was already there).
@pytest.mark.filterwarnings("ignore:Callback with id")
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_queue_overflow_reconciles_at_once(small_queue, caplog, layout, capsys, tmp_path):
    root, syncer, watcher = small_queue
    path_of = LAYOUTS[layout]
    files = 2000
    staged = tmp_path / "staged"
    for i in range(files):
        write(staged, path_of(i), episode(f"Memory number tok{i}x."))
    # One `cp` (another process, no GIL shared with the reader): 6,000 events in ~0.1 s.
    started = time.monotonic()
    subprocess.run(["cp", "-r", f"{staged}/.", str(root)], check=True)
    # The kernel queues its overflow event behind the 64 it kept: seen once those are read.
    wait_for(
        lambda: any("queue overflowed" in r.getMessage() for r in caplog.records),
        10.0,
        "watchdog to report the forced overflow (a 64-event queue, 2,000 files copied in)",
    )
    rels = {path_of(i) for i in range(files)}

    def all_indexed() -> bool:
        return rels <= set(syncer.manifest.known())

    waited = wait_for(all_indexed, TIMEOUT_S, f"all {files} files in the manifest")
    with capsys.disabled():
        print(
            f"\n[overflow] {files} files ({layout}): fully indexed "
            f"{time.monotonic() - started:.1f} s after the first write ({waited:.1f} s after "
            f"the last), {watcher.lost_events} overflow(s) signalled"
        )
    assert lost_lines(caplog, "queue_overflow"), "the reconcile was not triggered by the overflow"
    assert watcher.lost_events >= 1
    # And it settles: watchdog's own repair (drop every watch, add it again) queues one
    # event per folder, overflowing a queue smaller than the tree again, for ever.
    settled = watcher.lost_events
    time.sleep(2.0)  # a window with no writes: any overflow in it is the repair's own
    assert watcher.lost_events == settled, "the repair after an overflow overflows again"
    for i in (0, files // 2, files - 1):  # the content, not only the name
        assert f"tok{i}x" in chunk_text(syncer, path_of(i))
    # Still watching afterwards: a single edit shows by its own event, quickly.
    write(root, path_of(7), episode("Memory number seven was rewritten as tokafterx."))
    wait_for(lambda: "tokafterx" in chunk_text(syncer, path_of(7)), 10.0, "an edit after")
    if layout == "one folder":  # searchable in its scope
        assert text_paths(syncer, "tok1999x") == {path_of(1999)}


def test_dead_observer_thread_is_restarted_and_reconciled(vault, embedder, caplog, monkeypatch):
    """A watchdog thread that dies (here: its handler raises on one event) would leave the
    watcher deaf for good: it is noticed within a second, restarted, and a reconcile finds
    what happened meanwhile."""
    caplog.set_level(logging.WARNING)
    root = vault.root
    write(root, f"{EPISODES}/seed.md", episode("The seed memory."))
    syncer, _ = open_syncer(root, embedder)
    watcher = VaultWatcher(root, syncer, quiet_s=0.15, resync_s=HOUR)
    watcher.start()
    try:
        assert watcher.ready.wait(TIMEOUT_S)
        from indexer.sync import watcher as module

        real = module._Hints.on_any_event

        def dies_on_boom(self, event):
            if str(event.src_path).endswith("boom.md"):
                raise RuntimeError("a bug in an event handler")
            real(self, event)

        monkeypatch.setattr(module._Hints, "on_any_event", dies_on_boom)
        monkeypatch.setattr("threading.excepthook", lambda args: None)  # expected death
        write(root, f"{EPISODES}/boom.md", episode("The boom memory tokboomx."))
        wait_for(lambda: lost_lines(caplog, "observer_died"), 10.0, "the death noticed")
        monkeypatch.setattr(module._Hints, "on_any_event", real)
        wait_for(lambda: text_paths(syncer, "tokboomx") == {f"{EPISODES}/boom.md"}, 20.0, "boom")
        # The restarted observer delivers events again.
        write(root, f"{EPISODES}/later.md", episode("Written after the restart toklaterx."))
        wait_for(lambda: text_paths(syncer, "toklaterx") == {f"{EPISODES}/later.md"}, 10.0, "later")
        assert watcher.degraded is None
    finally:
        watcher.stop()
        syncer.close()


def test_vault_moved_away_and_back_is_reconciled(vault, embedder, caplog, tmp_path):
    """Moving the vault folder away stops events (its watches follow the moved folder, under
    the old names); an edit made meanwhile is found once the folder is back."""
    caplog.set_level(logging.WARNING)
    root = vault.root
    rel = f"{EPISODES}/trip.md"
    write(root, rel, episode("Alice is going to Beijing next week."))
    syncer, _ = open_syncer(root, embedder)
    watcher = VaultWatcher(root, syncer, quiet_s=0.15, resync_s=HOUR)
    watcher.start()
    away = tmp_path / "away"
    try:
        assert watcher.ready.wait(TIMEOUT_S)
        os.rename(root, away)
        wait_for(lambda: watcher.degraded is not None, 10.0, "the move noticed")
        assert "does not exist" in watcher.degraded
        write(away, rel, episode("Alice is going to Lisbon instead."))
        os.rename(away, root)
        wait_for(lambda: text_paths(syncer, "Lisbon") == {rel}, 20.0, "the edit made while away")
        assert lost_lines(caplog, "root_back")
        assert watcher.degraded is None
        write(root, rel, episode("Alice is going to Chengdu after all."))
        wait_for(lambda: text_paths(syncer, "Chengdu") == {rel}, 10.0, "an edit after")
    finally:
        if away.exists() and not root.exists():
            os.rename(away, root)
        watcher.stop()
        syncer.close()


def test_folder_moved_in_from_outside_is_indexed(vault, embedder, tmp_path):
    """A chat folder moved in gets one event for the folder, none for its files."""
    root = vault.root
    syncer, _ = open_syncer(root, embedder)
    watcher = VaultWatcher(root, syncer, quiet_s=0.15, resync_s=HOUR)
    watcher.start()
    try:
        assert watcher.ready.wait(TIMEOUT_S)
        outside = tmp_path / "export" / "group_77"
        for i in range(30):
            write(outside, f"episodes/2026/0{1 + i % 9}/m{i}.md", episode(f"Moved tokmv{i}x."))
        (root / "bots/bot-1/sessions").mkdir(parents=True, exist_ok=True)
        os.rename(outside, root / "bots/bot-1/sessions/group_77")
        folder = "bots/bot-1/sessions/group_77"
        wait_for(lambda: len(syncer.manifest.known([folder])) == 30, 20.0, "30 moved-in files")
        for i in (0, 29):
            rel = f"{folder}/episodes/2026/0{1 + i % 9}/m{i}.md"
            assert f"tokmv{i}x" in chunk_text(syncer, rel)
    finally:
        watcher.stop()
        syncer.close()


# ---------------------------------------------------------------------- the watch limit

LIMIT_CHILD = """
import json, sys, time
from pathlib import Path
Path("/proc/sys/user/max_inotify_watches").write_text(sys.argv[2])
from tests.indexer.sync.test_watcher_overflow import limit_child
print(json.dumps(limit_child(Path(sys.argv[1]))))
"""


def limit_child(root: Path) -> dict:
    """In the child (a user namespace with a tiny watch limit): start the engine's watcher,
    then edit a file in a folder made afterwards (that folder cannot be watched)."""
    from indexer.engine import Engine
    from indexer.health import index_checks

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    engine = Engine.open(root)
    engine.watcher = VaultWatcher(root, engine.syncer, quiet_s=0.15, resync_s=HOUR, fallback_s=1)
    engine.watcher.start()
    try:
        assert engine.watcher.ready.wait(TIMEOUT_S)
        rel = "bots/bot-1/sessions/group_5/episodes/n.md"
        write(root, rel, episode("First version tokfirstx."))
        deadline = time.monotonic() + 30
        while engine.manifest.get(rel) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        started = time.monotonic()
        write(root, rel, episode("Second version toksecondx."))
        found = None
        while time.monotonic() - started < 30:
            if "toksecondx" in chunk_text(engine, rel):
                found = time.monotonic() - started
                break
            time.sleep(0.05)
        return {
            "degraded": engine.watcher.degraded,
            "health": index_checks(engine),
            "edit_indexed_s": found,
        }
    finally:
        engine.close()


def test_watch_limit_is_loud_and_falls_back_to_periodic_reconcile(vault, tmp_path):
    probe = subprocess.run(["unshare", "--user", "--map-root-user", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"user namespaces are not available here: {probe.stderr.decode().strip()}")
    done = subprocess.run(
        ["unshare", "--user", "--map-root-user", sys.executable, "-c", LIMIT_CHILD,
         str(vault.root), "6"],
        capture_output=True, text=True, cwd=REPO, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert "event=watch_overflow reason=watch_limit" in done.stderr
    assert "max_user_watches" in (result["degraded"] or "")
    assert any(level == "WARN" and "max_user_watches" in d for level, d in result["health"])
    # The folder has no watch: only the fallback reconcile (every 1 s here) finds the edit.
    assert result["edit_indexed_s"] is not None and result["edit_indexed_s"] < 15
