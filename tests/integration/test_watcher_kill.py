"""`memvault watch` killed with SIGKILL in the middle of a batch, then restarted: the index
ends equal to the files (every live token found once in its scope, every dead one gone,
both indexes holding exactly the manifest's chunks, `status` counting every file).

The kill is timed from the outside by watching the index folder: the first write to the
manifest (the batch has started: chunk ids allocated, nothing committed) or the first text
index commit (tantivy has the batch, the vectors and the manifest do not yet).
"""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from indexer.backends.text_index import TextIndex
from indexer.engine import Engine
from indexer.retrieval.search_query import SearchQuery
from indexer.sync.manifest import Manifest, index_dir
from tests.helpers.cli_run import memvault
from tests.indexer.sync.test_sync import EPISODES, episode, write
from tests.indexer.sync.test_watcher import vault_sha, wait_for
from vault.layout.keys import ScopeId

pytestmark = pytest.mark.slow  # real watchers killed mid-batch and restarted

_SCRIPT = Path(sys.executable).parent / "memvault"
MEMVAULT = (
    [str(_SCRIPT)]
    if _SCRIPT.exists()
    else [sys.executable, "-c", "import sys; from memvault_cli.main import main; sys.exit(main())"]
)
# Folder of episodes -> the scope a search for them runs in.
FOLDERS = {
    EPISODES: ScopeId("bot-1", "group_123"),
    "bots/bot-1/sessions/person_42/episodes/2026/12": ScopeId("bot-1", "person_42"),
    "bots/bot-2/episodes/2026/11": ScopeId("bot-2", "group_1", "bot"),
}
# A signal file and what its first change means.
KILL_POINTS = {
    "batch_started": "manifest.sqlite-wal",  # ids allocated: the batch is being parsed/embedded
    "text_committed": "text/meta.json",  # tantivy committed, vectors + manifest not yet
}
START_S = 60.0  # imports + model load + indexing, on a busy 2-core box


class Watch:
    """One `memvault watch` process, its stderr in a file (no pipe to drain)."""

    def __init__(self, root: Path, log: Path) -> None:
        self.log = log
        with log.open("w") as err:
            self.proc = subprocess.Popen(
                [*MEMVAULT, "watch", "--vault", str(root)],
                stdout=subprocess.DEVNULL,
                stderr=err,
            )

    def wait_ready(self) -> None:
        def ready() -> bool:
            if self.proc.poll() is not None:
                pytest.fail(f"memvault watch exited {self.proc.returncode}: {self.stderr()}")
            return "watching " in self.stderr()

        wait_for(ready, timeout=START_S, what="memvault watch to finish its start-up reconcile")

    def stderr(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


@pytest.fixture
def watches(tmp_path):
    started: list[Watch] = []

    def start(root: Path) -> Watch:
        watch = Watch(root, tmp_path / f"watch{len(started)}.log")
        started.append(watch)
        return watch

    yield start
    for watch in started:  # only the processes this test started, by their handle
        watch.stop()


def stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_mtime_ns, st.st_size


def churn(root: Path, live: dict[str, str], dead: set[str]) -> int:
    """~300 changes as fast as Python makes them: new files, edits (in place and editor
    saves), deletes, renames. `live` (path -> token) and `dead` (tokens) track the truth."""
    folders = list(FOLDERS)
    ops = 0
    for i in range(150):
        rel = f"{folders[i % 3]}/new{i:03}.md"
        write(root, rel, episode(f"New memory {i} holds the word zeta{i}w."))
        live[rel] = f"zeta{i}w"
        ops += 1
    for n, rel in enumerate(sorted(live)[::2][:100]):
        token = f"eta{n}w"
        text = episode(f"Edited memory {n} now says {token}.")
        if n % 2:  # an editor's atomic save
            tmp = root / f"{rel}.swp"
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, root / rel)
        else:
            (root / rel).write_text(text, encoding="utf-8")
        dead.add(live[rel])
        live[rel] = token
        ops += 1
    for rel in sorted(live)[1::4][:50]:
        (root / rel).unlink()
        dead.add(live.pop(rel))
        ops += 1
    for n, rel in enumerate(sorted(live)[2::9][:10]):
        new = f"{rel[:-3]}-renamed{n}.md"
        os.rename(root / rel, root / new)
        live[new] = live.pop(rel)
        ops += 1
    return ops


def scope_for(rel: str) -> ScopeId:
    return FOLDERS[rel.rsplit("/", 1)[0]]


def disk_files(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): vault_sha(p)
        for p in (root / "bots").rglob("*")
        if p.is_file() and not p.name.startswith(".")
    }


@pytest.mark.parametrize("kill_at", sorted(KILL_POINTS))
def test_sigkill_mid_batch_then_restart_gives_an_exact_index(vault, watches, tmp_path, kill_at):
    root = vault.root
    live: dict[str, str] = {}
    dead: set[str] = set()
    for i in range(50):
        rel = f"{list(FOLDERS)[i % 3]}/seed{i:02}.md"
        write(root, rel, episode(f"Seed memory {i} mentions theta{i}w."))
        live[rel] = f"theta{i}w"

    first = watches(root)
    first.wait_ready()
    signal_file = index_dir(root) / KILL_POINTS[kill_at]
    before = stamp(signal_file)
    ops = churn(root, live, dead)
    wait_for(lambda: stamp(signal_file) != before, timeout=30, what=f"{kill_at} ({signal_file})")
    first.proc.send_signal(signal.SIGKILL)
    first.proc.wait(10)
    assert ops >= 300 and first.proc.returncode == -signal.SIGKILL

    disk = disk_files(root)
    assert set(disk) == set(live)
    manifest = Manifest.for_vault(root)
    try:
        indexed = {path: known.sha for path, known in manifest.known().items()}
        owned_before = {cid for entry in manifest.entries().values() for cid in entry.chunk_ids}
    finally:
        manifest.close()
    # The kill really landed before the batch was done: the index is behind the files.
    assert indexed != disk, "the kill landed after the batch was committed: nothing tested"
    if kill_at == "text_committed":  # and tantivy holds chunks the manifest never got
        text = TextIndex.open(index_dir(root) / "text", writer=False)
        try:
            assert text.ids() - owned_before, "the kill missed the text-ahead-of-manifest window"
        finally:
            text.close()

    second = watches(root)
    second.wait_ready()
    with Engine.open(root, writer=False) as engine:
        entries = engine.manifest.entries()
        assert {p: e.sha for p, e in entries.items()} == disk
        owned = [cid for e in entries.values() for cid in e.chunk_ids]
        assert len(owned) == len(set(owned))
        assert engine.text.ids() == set(owned), "text index != manifest (strays or missing)"
        assert engine.vector.ids() == set(owned), "vector index != manifest (strays or missing)"

        wrong = {}
        for rel, token in live.items():
            scope = scope_for(rel)
            found = [
                r.doc.path
                for r in engine.search(SearchQuery(token, scope, mode="text", decay=False))
            ]
            hits = engine.text.search(token, scope.index_key, 10)
            if found != [rel] or len(hits) != 1:
                wrong[rel] = (token, found, len(hits))
        assert not wrong, f"live files not found exactly once by their token: {wrong}"
        ghosts = {
            token: hits
            for token in dead
            for scope in FOLDERS.values()
            if (hits := engine.search(SearchQuery(token, scope, mode="text", decay=False)))
        }
        assert not ghosts, f"tokens of deleted or overwritten text still found: {ghosts}"

    second.proc.send_signal(signal.SIGTERM)
    assert second.proc.wait(30) == 0, second.stderr()
    data = json.loads(memvault("status", "--json", "--vault", root).stdout)  # exit 0
    assert data["files"] == len(live) == len(disk)
    assert data["problems"] == [] and data["writer"] == ""
