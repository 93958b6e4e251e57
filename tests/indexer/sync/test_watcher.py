"""VaultWatcher end to end: a running watchdog observer, real files, real git, real indexes.

Every wait polls the index until it shows the expected state (never a fixed sleep used as
an assertion); latencies from the write to searchable are measured and printed.
"""

import os
import shutil
import statistics
import subprocess
import threading
import time
from pathlib import Path

import pytest

from indexer.sync.watcher import VaultWatcher
from tests.indexer.sync.test_sync import (
    EPISODES,
    KEY,
    OTHER_KEY,
    SESSION,
    episode,
    open_syncer,
    write,
)
from vault.layout.keys import ScopeId

TIMEOUT_S = 10.0
RENAMED_KEY = ScopeId("bot-1", "group_998").index_key

EMBEDDER = "model"  # tests/indexer/conftest.py: the subject is what the model finds


def wait_for(predicate, timeout: float = TIMEOUT_S, what: str = "condition") -> float:
    """Seconds until predicate() held; fails the test after `timeout`."""
    started = time.monotonic()
    while True:
        if predicate():
            return time.monotonic() - started
        if time.monotonic() - started > timeout:
            pytest.fail(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.005)


def text_paths(syncer, query: str, user_key: str = KEY) -> set[str]:
    owner = {cid: e.path for e in syncer.manifest.entries().values() for cid in e.chunk_ids}
    return {
        owner.get(h.chunk_id, "<stray>")
        for h in syncer.backends["text"].search(query, user_key, 50)
    }


def git(root: Path, *args: str) -> str:
    env = os.environ | {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    done = subprocess.run(
        ["git", "-C", str(root), *args], check=True, capture_output=True, text=True, env=env
    )
    return done.stdout


@pytest.fixture
def watched(vault, embedder):
    root = vault.root
    write(root, f"{EPISODES}/trip.md", episode("Alice is going to Beijing next week."))
    write(root, f"{EPISODES}/tea.md", episode("Bob prefers green tea.", speaker="Bob"))
    syncer, counter = open_syncer(root, embedder)
    watcher = VaultWatcher(root, syncer, quiet_s=0.15)
    watcher.start()
    assert watcher.ready.wait(TIMEOUT_S)
    yield root, syncer, counter, watcher
    watcher.stop()
    syncer.close()


def test_atomic_saves_swap_files_delete_and_rename(watched, capsys):
    root, syncer, counter, watcher = watched
    rel = f"{EPISODES}/trip.md"
    latencies = []
    for i in range(5):
        # An editor's atomic save: a temp file next to the target, renamed over it.
        tmp = root / f"{EPISODES}/.trip.md.{i}.tmp"
        tmp.write_text(episode(f"Alice moved her trip to city{i}."), encoding="utf-8")
        started = time.monotonic()
        os.replace(tmp, root / rel)
        wait_for(lambda i=i: text_paths(syncer, f"city{i}") == {rel}, what=f"save {i}")
        latencies.append(time.monotonic() - started)
    with capsys.disabled():
        p50, worst = statistics.median(latencies) * 1000, max(latencies) * 1000
        print(
            f"\n[watcher] atomic save -> searchable: p50 {p50:.0f} ms, max {worst:.0f} ms"
            " (quiet period 150 ms)"
        )
    assert text_paths(syncer, "Beijing") == set()

    # Vim droppings (swap file, backup, its 4913 write test) are never indexed. The real
    # save made after them is a barrier: once it is searchable, they were seen too.
    write(root, f"{EPISODES}/.tea.md.swp", "volcano swap")
    write(root, f"{EPISODES}/tea.md~", "volcano backup")
    write(root, f"{EPISODES}/4913", "volcano")
    (root / f"{EPISODES}/4913").unlink()
    write(root, f"{EPISODES}/tea.md", episode("Bob now prefers oolong.", speaker="Bob"))
    wait_for(lambda: text_paths(syncer, "oolong") == {f"{EPISODES}/tea.md"}, what="tea save")
    assert text_paths(syncer, "volcano") == set()

    # Rename: same chunks under the new name, nothing embedded. The manifest commits after
    # both backends, so once it holds the tea save, that save's embedding is counted.
    tea = root / f"{EPISODES}/tea.md"
    wait_for(lambda: syncer.manifest.get(f"{EPISODES}/tea.md").sha == vault_sha(tea), what="tea")
    embedded = counter.texts
    new = f"{EPISODES}/2026-trip.md"
    os.rename(root / rel, root / new)
    wait_for(lambda: syncer.manifest.get(new) is not None, what="rename")
    assert syncer.manifest.get(rel) is None
    assert counter.texts == embedded
    assert text_paths(syncer, "city4") == {new}

    # Delete.
    started = time.monotonic()
    (root / new).unlink()
    wait_for(lambda: text_paths(syncer, "city4") == set(), what="delete")
    with capsys.disabled():
        print(f"[watcher] delete -> gone from search: {(time.monotonic() - started) * 1000:.0f} ms")
    assert watcher.failures == 0


# watchdog warns when it re-registers the inotify watch of a folder renamed inside the tree;
# harmless (it overwrites the old one), and the test checks events keep flowing after it.
@pytest.mark.filterwarnings("ignore:Callback with id:RuntimeWarning")
def test_folder_renamed_deleted_or_moved_out(watched, tmp_path):
    root, syncer, _, _ = watched
    other = "bots/bot-1/sessions/group_999"
    write(root, f"{other}/episodes/a.md", "Carol climbs mountains.\n")
    write(root, f"{other}/profile.yaml", "name: Climbers\n")
    found = {f"{other}/episodes/a.md"}
    wait_for(lambda: text_paths(syncer, "mountains", OTHER_KEY) == found, what="new session")
    wait_for(lambda: len(syncer.manifest.entries([other])) == 2, what="profile indexed")
    # A chat folder renamed inside the vault: its files move to the new scope.
    renamed = "bots/bot-1/sessions/group_998"
    os.rename(root / other, root / renamed)
    wait_for(lambda: len(syncer.manifest.entries([renamed])) == 2, what="folder rename")
    assert syncer.manifest.get(f"{renamed}/episodes/a.md").index_key == RENAMED_KEY
    assert syncer.manifest.entries([other]) == {}
    assert text_paths(syncer, "mountains", RENAMED_KEY) == {f"{renamed}/episodes/a.md"}
    assert text_paths(syncer, "mountains", OTHER_KEY) == set()
    # Events inside the renamed folder still arrive under its new name.
    write(root, f"{renamed}/episodes/b.md", "Carol also kayaks.\n")
    wait_for(
        lambda: text_paths(syncer, "kayaks", RENAMED_KEY) == {f"{renamed}/episodes/b.md"},
        what="edit inside renamed folder",
    )
    other = renamed
    # Moved out of the tree: inotify reports only the folder, none of its files.
    shutil.move(root / other, tmp_path / "outside")
    wait_for(lambda: syncer.manifest.entries([other]) == {}, what="moved-out folder purge")
    assert text_paths(syncer, "mountains", RENAMED_KEY) == set()
    shutil.rmtree(root / f"{SESSION}/episodes")
    wait_for(lambda: syncer.manifest.entries([f"{SESSION}/episodes"]) == {}, what="rmtree purge")
    assert text_paths(syncer, "Beijing") == set()


@pytest.mark.skipif(shutil.which("git") is None, reason="needs the git command")
def test_git_checkout_of_300_changed_files(vault, embedder, capsys):
    root = vault.root
    folder = f"{SESSION}/episodes/2026/10"
    for i in range(320):
        write(root, f"{folder}/e{i:03}.md", f"Memory {i} mentions the word alpha{i}.\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "alpha")
    old = git(root, "rev-parse", "HEAD").strip()
    for i in range(300):
        write(root, f"{folder}/e{i:03}.md", f"Memory {i} now says beta{i} instead.\n")
    for i in range(300, 320):
        (root / f"{folder}/e{i:03}.md").unlink()
    write(root, f"{SESSION}/episodes/new/only-in-beta.md", "Only the new branch has gamma.\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "beta")

    syncer, _ = open_syncer(root, embedder)
    watcher = VaultWatcher(root, syncer)
    watcher.start()
    try:
        assert watcher.ready.wait(TIMEOUT_S)
        assert text_paths(syncer, "beta7") == {f"{folder}/e007.md"}
        started = time.monotonic()
        git(root, "checkout", "-q", old)
        checkout_s = time.monotonic() - started

        def index_matches_disk() -> bool:
            entries = syncer.manifest.entries()
            on_disk = {p.relative_to(root).as_posix() for p in (root / "bots").rglob("*.md")}
            return set(entries) == on_disk and all(
                entries[p].sha == vault_sha(root / p) for p in on_disk
            )

        waited = wait_for(index_matches_disk, timeout=20, what="index == files after checkout")
        assert text_paths(syncer, "beta7") == set()
        assert text_paths(syncer, "alpha7") == {f"{folder}/e007.md"}
        assert text_paths(syncer, "alpha310") == {f"{folder}/e310.md"}
        assert text_paths(syncer, "gamma") == set()
        with capsys.disabled():
            print(
                f"\n[watcher] git checkout of 321 changed files: git {checkout_s * 1000:.0f} ms, "
                f"index equal to files {waited * 1000:.0f} ms after git returned, "
                f"{watcher.batches - 1} batch(es), failures {watcher.failures}"
            )
    finally:
        watcher.stop()
        syncer.close()


def vault_sha(path: Path) -> str:
    from vault.files.safewrite import content_hash

    return content_hash(path.read_bytes())


def test_failed_batch_is_retried_and_stop_flushes(watched):
    root, syncer, _, watcher = watched
    real = syncer.sync_paths
    calls = {"n": 0}

    def flaky(paths):
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("disk hiccup")
        return real(paths)

    syncer.sync_paths = flaky
    write(root, f"{EPISODES}/retry.md", "Dave repairs bicycles.\n")
    # The index shows the file as soon as the retry's sync wrote it; the watcher thread resets
    # its failure count right after that sync returns: wait for both, not one then the other.
    retried = {f"{EPISODES}/retry.md"}
    wait_for(
        lambda: text_paths(syncer, "bicycles") == retried and watcher.failures == 0,
        what="retry that resets the failure count",
    )
    assert calls["n"] >= 2

    # stop() does not wait for the quiet period: pending work is synced, then it returns.
    watcher.quiet_s = watcher.max_delay_s = 30.0
    write(root, f"{EPISODES}/late.md", "Erin paints boats.\n")
    wait_for(lambda: watcher._pending, what="event seen")
    watcher.stop()
    assert text_paths(syncer, "boats") == {f"{EPISODES}/late.md"}


def test_constant_stream_still_syncs_within_about_a_second(watched, capsys):
    root, syncer, _, watcher = watched
    audit = root / f"{SESSION}/audit.jsonl"
    stop = threading.Event()

    def chatter():
        # A busy chat appending to its audit log every 30 ms: the vault never goes quiet.
        with audit.open("a", encoding="utf-8") as log_file:
            while not stop.is_set():
                log_file.write('{"op": "remember"}\n')
                log_file.flush()
                time.sleep(0.03)

    thread = threading.Thread(target=chatter, daemon=True)
    thread.start()
    try:
        time.sleep(0.3)  # let the stream start before the measured write (not an assertion)
        started = time.monotonic()
        write(root, f"{EPISODES}/busy.md", "Frank sails catamarans.\n")
        rel = f"{EPISODES}/busy.md"
        waited = wait_for(lambda: text_paths(syncer, "catamarans") == {rel}, timeout=5)
    finally:
        stop.set()
        thread.join()
    with capsys.disabled():
        print(f"[watcher] under a constant event stream: searchable after {waited * 1000:.0f} ms")
    assert time.monotonic() - started < 3.0  # max delay 1 s + one sync, with slack for CI


def test_quiet_watcher_reconciles_what_no_event_announced(vault, embedder):
    """Events can be lost (inotify queue overflow, network file systems): after a quiet
    spell the watcher reconciles anyway, so a change nobody announced is still indexed."""
    root = vault.root
    write(root, f"{EPISODES}/trip.md", episode("Alice is going to Beijing next week."))
    syncer, _ = open_syncer(root, embedder)
    watcher = VaultWatcher(root, syncer, quiet_s=0.15, resync_s=0.5)
    watcher.start()
    try:
        assert watcher.ready.wait(TIMEOUT_S)
        watcher._watch._observer.unschedule_all()  # from here on, no event reaches the watcher
        write(root, f"{EPISODES}/silent.md", episode("a zebra crossing near the harbour"))
        wait_for(lambda: text_paths(syncer, "zebra"), what="unannounced file indexed")
    finally:
        watcher.stop()
        syncer.close()
