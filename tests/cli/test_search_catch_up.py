"""A `memvault search` that is the index writer for a moment answers soon (issue 20 item 10):
a few changes are indexed first (the next search finds a hand edit), many are left to a
writer with one line saying how many and how to index them, deletions always apply, and
with no index at all it indexes first with progress lines, stoppable with Ctrl-C.

In-process CLI over a tiny deterministic embedder that records every text it embeds: the
model is not the subject, what gets embedded before the answer is."""

from __future__ import annotations

import argparse
import hashlib
import json
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from indexer import engine
from indexer.backends.calibration import calibration_sentences
from indexer.backends.embeddings import EmbedderIdentity
from indexer.cli import catch_up
from indexer.retrieval.search_query import SearchQuery
from tests.helpers.cli_run import run_main
from vault.layout.keys import ScopeId
from vault.writes.create import init_vault
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

SCOPE = ["--bot", "b1", "--session", "group_1"]
EPISODES = Path("bots/b1/sessions/group_1/episodes")
CHAT = ScopeId("b1", "group_1")


class Tiny:
    """16 numbers from each text's sha256: the same text, the same vector, every run."""

    def __init__(self, name: str, embedded: list[str], interrupt_after: int | None = None):
        self.identity = EmbedderIdentity(name, "1", 16)
        self.embedded = embedded
        self.interrupt_after = interrupt_after

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if self.interrupt_after is not None and len(self.embedded) >= self.interrupt_after:
            raise KeyboardInterrupt  # a person pressing Ctrl-C mid-way
        self.embedded.extend(texts)
        return np.stack([_vector(t) for t in texts]) if texts else np.zeros((0, 16), "float32")

    def embed_query(self, text: str) -> np.ndarray:
        return _vector(text)


def _vector(text: str) -> np.ndarray:
    raw = np.frombuffer(hashlib.sha256(text.encode()).digest()[:16], dtype=np.uint8)
    row = raw.astype(np.float32) - 127.5
    return row / np.linalg.norm(row)


@pytest.fixture
def embedded(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    texts: list[str] = []
    monkeypatch.setattr(engine, "embedder_from_settings", lambda: Tiny("tiny", texts))
    yield texts


@pytest.fixture
def root(tmp_path: Path, capsys: pytest.CaptureFixture[str], embedded: list[str]) -> Path:
    """A vault whose chat holds one memory, indexed by a first search."""
    root = tmp_path / "memory"
    init_vault(root, git=False)
    assert cli(root, "remember", "Alice is going to Beijing next week", *SCOPE)[0] == 0
    assert cli(root, "search", "Beijing", *SCOPE)[0] == 0
    return root


def cli(root: Path, *argv: str) -> tuple[int, str, str]:
    ran = run_main(*argv, "--vault", root)
    return ran.returncode, ran.stdout, ran.stderr


def hand_written(root: Path, count: int, word: str = "heron") -> list[str]:
    texts = [f"the {word} number {i} was seen at pond {i}" for i in range(count)]
    for i, text in enumerate(texts):
        (root / EPISODES / f"hand-{word}-{i:03d}.md").write_text(text + "\n", encoding="utf-8")
    return texts


def contents(out: str) -> list[str]:
    return [item["content"] for item in json.loads(out)]


def test_many_pending_changes_are_left_to_a_writer_and_said(root, capsys, embedded):
    texts = hand_written(root, catch_up.CATCH_UP_FILES + 36)
    before = len(embedded)
    code, out, err = cli(root, "search", "Beijing", *SCOPE, "--json")
    assert code == 0
    assert contents(out)[0] == "Alice is going to Beijing next week"  # from the index as built
    assert not set(texts) & set(embedded[before:])  # nothing of the 100 files was embedded
    lines = [line for line in err.splitlines() if "not indexed yet" in line]
    assert len(lines) == 1, err
    assert f"{len(texts)} changed memory file(s)" in lines[0]
    assert "`memvault reindex --keep`" in lines[0] and "`memvault watch`" in lines[0]
    # They are still pending (status says so), and `reindex --keep` indexes them.
    status = json.loads(cli(root, "status", "--json")[1])
    assert status["pending"]["added"] == len(texts)
    assert cli(root, "reindex", "--keep", "--json")[0] == 0
    code, out, err = cli(root, "search", "heron number 7 pond 7", *SCOPE, "--json")
    assert "the heron number 7 was seen at pond 7" in contents(out)
    assert "not indexed yet" not in err


def test_a_few_changes_are_indexed_first_as_before(root, capsys, embedded):
    texts = hand_written(root, 3, word="kingfisher")
    code, out, err = cli(root, "search", "kingfisher number 1 pond 1", *SCOPE, "--json")
    assert code == 0 and "the kingfisher number 1 was seen at pond 1" in contents(out)
    assert set(texts) <= set(embedded) and "not indexed yet" not in err


def test_a_deleted_file_stops_answering_even_when_much_waits(root, capsys):
    (root / EPISODES).joinpath("gone.md").write_text("the spare key is under the mat\n")
    assert "the spare key is under the mat" in contents(
        cli(root, "search", "spare key mat", *SCOPE, "--json")[1]
    )
    (root / EPISODES / "gone.md").unlink()
    hand_written(root, catch_up.CATCH_UP_FILES + 1)
    code, out, err = cli(root, "search", "spare key mat", *SCOPE, "--json")
    assert code == 0 and "not indexed yet" in err
    assert "the spare key is under the mat" not in contents(out)


def test_with_no_index_it_indexes_first_with_progress_lines(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(catch_up, "PROGRESS_S", 0.0)  # a line per batch, however fast
    texts: list[str] = []
    monkeypatch.setattr(engine, "embedder_from_settings", lambda: Tiny("tiny", texts))
    root = tmp_path / "memory"
    init_vault(root, git=False)
    (root / EPISODES).mkdir(parents=True)
    hand_written(root, 80)
    code, out, err = cli(root, "search", "heron number 3 pond 3", *SCOPE, "--json")
    assert code == 0 and "the heron number 3 was seen at pond 3" in contents(out)
    lines = err.splitlines()
    assert "no index yet: indexing 80 memory file(s)" in lines[0] and "Ctrl-C" in lines[0]
    progress = [line for line in lines if line.startswith("memvault: indexed ")]
    assert [p.split(" file")[0] for p in progress] == [
        "memvault: indexed 32 of 80",
        "memvault: indexed 64 of 80",
        "memvault: indexed 80 of 80",
    ]
    assert "not indexed yet" not in err


def test_ctrl_c_while_indexing_keeps_what_was_indexed(tmp_path, capsys, monkeypatch):
    texts: list[str] = []
    # Ctrl-C in the second batch: after the first batch's 32 texts and the model's calibration
    # sentences (embedded once for a new vector index's 8-bit code ranges).
    tiny = Tiny("tiny", texts, interrupt_after=32 + len(calibration_sentences()))
    monkeypatch.setattr(engine, "embedder_from_settings", lambda: tiny)
    root = tmp_path / "memory"
    init_vault(root, git=False)
    (root / EPISODES).mkdir(parents=True)
    hand_written(root, 150)
    assert cli(root, "search", "heron", *SCOPE)[0] == 130
    tiny.interrupt_after = None
    code, out, err = cli(root, "search", "heron number 5 pond 5", *SCOPE, "--json")
    # The first batch (32 files) was kept: this search answers from it and says the rest.
    assert code == 0 and "the heron number 5 was seen at pond 5" in contents(out)
    assert "not indexed yet: 118 changed memory file(s)" in err


def test_a_search_never_waits_for_a_vector_rebuild(root, capsys, monkeypatch):
    """The embedding provider changed: the old model's vectors answer; building the new
    one's is for a writer (`reindex`, `watch`), not for a search's close to wait on."""
    new: list[str] = []
    monkeypatch.setattr(engine, "default_embedder", lambda: Tiny("tiny", []))  # the old one
    monkeypatch.setattr(engine, "embedder_from_settings", lambda: Tiny("other", new))
    code, out, err = cli(root, "search", "Beijing", *SCOPE, "--json")
    assert code == 0 and contents(out)[0] == "Alice is going to Beijing next week"
    assert new == [] and "the vectors of other@1/16 are not built yet" in err
    assert "`memvault reindex --keep`" in err


def test_a_write_never_waits_for_a_watchers_long_sync(tmp_path, monkeypatch):
    """The plugin and the console index their own writes at once; while the watcher runs a
    long sync (a start-up catch-up: here the syncer held until it returns), a `remember` returns
    after WRITE_WAIT_S, and the watcher indexes it once that sync is done."""
    monkeypatch.setattr(engine, "WRITE_WAIT_S", 0.3)
    root = tmp_path / "memory"
    init_vault(root, git=False)
    vault = Vault(root, git=False)
    with engine.Engine.open(root, embedder=Tiny("tiny", [])) as eng:
        eng.attach(vault)
        assert eng.watch().ready.wait(30)
        assert eng.syncer is not None
        held, done = threading.Event(), threading.Event()

        def long_sync() -> None:  # held until the write has returned (was a fixed 6 s)
            with eng.syncer.mutex:
                held.set()
                done.wait(30)

        threading.Thread(target=long_sync, daemon=True).start()
        assert held.wait(10)
        started = time.monotonic()
        vault.remember(NewEpisode(CHAT, "the otter family moved to the north bank"))
        assert time.monotonic() - started < 3
        assert held.is_set() and not done.is_set()  # it returned while the sync still ran
        done.set()
        deadline = time.monotonic() + 30
        found: list[str] = []
        while time.monotonic() < deadline and not found:
            found = [r.doc.text for r in eng.search(SearchQuery("otter north bank", CHAT))]
            time.sleep(0.2)
        assert found and "otter" in found[0]


def test_the_console_says_how_far_its_start_up_sync_got(tmp_path, capsys, monkeypatch):
    """`memvault console` serves once its start-up sync is done; with thousands of files to
    index that takes minutes, so it prints the same progress lines as a search."""
    from console.cli import open_context

    monkeypatch.setattr(catch_up, "PROGRESS_S", 0.0)
    monkeypatch.setattr(engine, "embedder_from_settings", lambda: Tiny("tiny", []))
    root = tmp_path / "memory"
    init_vault(root, git=False)
    (root / EPISODES).mkdir(parents=True)
    hand_written(root, 300)  # two batches of the watcher's sync (256 files each)
    args = argparse.Namespace(vault=str(root), isolation="session", no_git=True)
    ctx = open_context(args)
    try:
        assert ctx.engine is not None and ctx.engine.syncer is not None
        assert ctx.engine.syncer.on_progress is None  # later syncs print nothing
    finally:
        assert ctx.engine is not None
        ctx.engine.close()
    err = capsys.readouterr().err
    progress = [line for line in err.splitlines() if line.startswith("memvault: indexed ")]
    assert [p.split(" file")[0] for p in progress] == [
        "memvault: indexed 256 of 300",
        "memvault: indexed 300 of 300",
    ], err
