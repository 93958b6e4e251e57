"""The vector index's commit log (indexer.backends.vector_store): commits append, crashes lose only
the torn commit, readers replay new records, the snapshot is rewritten when the log grows.

Real faiss, real files, the real USE model.
"""

from pathlib import Path

import pytest

from indexer.backends import vector_index
from indexer.backends.records import ChunkDoc
from indexer.backends.vector_index import VectorIndex
from indexer.backends.vector_store import LOG_NAME, SNAPSHOT_NAME
from tests.indexer.backends.vector_helpers import open_index

KEY = "bot-1:group_123"
TEXTS = [
    "Alice prefers green tea and does not eat cilantro.",
    "Bob is learning Rust and practises every evening.",
    "小明下周要去北京开会。",
    "Carol moved the Atlas deadline to Friday.",
]


def doc(cid: int, text: str, status: str = "active") -> ChunkDoc:
    return ChunkDoc(cid, f"ep_{cid}", f"e{cid}.md", 0, "episode", KEY, text, status=status)


def found(index: VectorIndex, query: str = "tea") -> set[int]:
    return {h.chunk_id for h in index.search(query, KEY, 10)}


def test_commits_append_to_the_log_and_keep_the_snapshot(tmp_path: Path, model) -> None:
    with open_index(tmp_path, model) as index:
        index.upsert([doc(1, TEXTS[0])])
        index.commit()
        snapshot = (tmp_path / SNAPSHOT_NAME).stat()
        for cid, text in enumerate(TEXTS[1:], start=2):
            index.upsert([doc(cid, text)])
            index.commit()
        index.delete([2])
        index.upsert([doc(1, TEXTS[0], status="archived")])
        index.commit()
        assert (tmp_path / SNAPSHOT_NAME).stat().st_ino == snapshot.st_ino
        assert (tmp_path / LOG_NAME).stat().st_size > 0
        assert found(index) == {3, 4}
    with open_index(tmp_path, model, writer=False) as reader:
        assert reader.ids() == {1, 3, 4}
        assert found(reader) == {3, 4}


def test_torn_last_record_is_dropped_and_appends_continue(tmp_path: Path, model) -> None:
    with open_index(tmp_path, model) as index:
        index.upsert([doc(1, TEXTS[0])])
        index.commit()
        index.upsert([doc(2, TEXTS[1])])
        index.commit()
    log = tmp_path / LOG_NAME
    whole = log.read_bytes()
    log.write_bytes(whole[:-100])  # a crash mid-append of the second commit
    with open_index(tmp_path, model) as index:
        assert index.ids() == {1}
        index.upsert([doc(3, TEXTS[2])])
        index.commit()
    with open_index(tmp_path, model, writer=False) as reader:
        assert reader.ids() == {1, 3}


def test_reader_replays_new_records_then_follows_a_new_snapshot(
    tmp_path: Path, model, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open_index(tmp_path, model) as writer, open_index(tmp_path, model, False) as reader:
        writer.upsert([doc(1, TEXTS[0])])
        writer.commit()
        assert reader.ids() == {1}
        writer.upsert([doc(2, TEXTS[1])])
        writer.commit()
        assert reader.ids() == {1, 2}  # from the log
        monkeypatch.setattr(vector_index, "MIN_LOG_BYTES", 0)
        before = (tmp_path / SNAPSHOT_NAME).stat().st_ino
        writer.upsert([doc(3, TEXTS[2])])
        writer.delete([1])
        writer.commit()  # the log now outgrows the snapshot: folded into a new one
        assert (tmp_path / SNAPSHOT_NAME).stat().st_ino != before
        assert (tmp_path / LOG_NAME).stat().st_size < 100  # a fresh, empty log
        assert reader.ids() == {2, 3}
        assert found(reader, "北京") >= {3}


def test_a_log_of_another_snapshot_is_ignored(tmp_path: Path, model) -> None:
    with open_index(tmp_path, model) as index:
        index.upsert([doc(1, TEXTS[0])])
        index.commit()
    with open_index(tmp_path, model) as index:
        index.upsert([doc(2, TEXTS[1])])
        index.commit()
    old_log = (tmp_path / LOG_NAME).read_bytes()
    # A snapshot rewritten without this log (crash between the renames, or an older
    # MemVault): the log's records must not be replayed on top of it.
    (tmp_path / LOG_NAME).write_bytes(old_log.replace(old_log[8:40], b"0" * 32, 1))
    with open_index(tmp_path, model, writer=False) as reader:
        assert reader.ids() == {1}  # the snapshot alone


def test_a_writer_folds_a_log_bigger_than_its_snapshot_into_it_on_close(
    tmp_path: Path, model
) -> None:
    """A reader opening later (a cold `memvault search`) loads a snapshot instead of replaying
    the writer's log: same chunks, same answers, the log left empty."""
    with open_index(tmp_path, model) as index:
        index.upsert([doc(1, TEXTS[0])])
        index.commit()
        snapshot = (tmp_path / SNAPSHOT_NAME).stat()
        for cid, text in enumerate(TEXTS[1:] * 3, start=2):
            index.upsert([doc(cid, text)])
            index.commit()
        assert (tmp_path / LOG_NAME).stat().st_size > snapshot.st_size
        before = found(index)
    assert (tmp_path / SNAPSHOT_NAME).stat().st_ino != snapshot.st_ino
    with open_index(tmp_path, model, writer=False) as reader:
        assert (tmp_path / LOG_NAME).stat().st_size < 100  # its header only
        assert reader.ids() == set(range(1, 11))
        assert found(reader) == before
