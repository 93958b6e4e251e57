"""The Milvus backend beyond the shared contract: hostile scope keys, several nodes in one
collection, a server that is down, a Milvus Lite file across processes, and the engine
opening it from the vault's settings. A real Milvus (milvus-lite 2.5.1) throughout."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from indexer.backends import milvus_connect
from indexer.backends.backend import IndexMissingError
from indexer.backends.embed_cache import CachedEmbedder
from indexer.backends.embeddings import EmbedderIdentity
from indexer.backends.milvus_connect import MilvusUnavailableError
from indexer.backends.milvus_index import MilvusVectors
from indexer.backends.records import ChunkDoc
from indexer.engine import Engine
from tests.helpers.cli_run import memvault
from tests.helpers.embedder import TinyEmbedder
from tests.helpers.milvus_server import _free_port, lite_server
from tests.helpers.paths import REPO
from vault.errors import kind_of
from vault.layout.index_setting import IndexChoice, parse_index
from vault.layout.keys import ScopeId
from vault.writes.create import init_vault
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

TINY = TinyEmbedder()
HOSTILE_KEYS = ['a" or 1==1 or "', "a", "a\\", '\\"', '" || chunk_id >= 0 || "', "北京 \x00\n"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[IndexChoice]:
    with lite_server(tmp_path_factory.mktemp("milvus")) as uri:
        yield parse_index(uri, Path("/"))


def open_at(target: IndexChoice, folder: Path, writer: bool = True) -> MilvusVectors:
    return MilvusVectors.open(
        target, folder, embed=TINY.embed_documents, embed_query=TINY.embed_query,
        dim=TINY.identity.dim, identity=TINY.identity.key, writer=writer,
    )  # fmt: skip


def doc(cid: int, key: str, text: str = "the cat is named Mochi") -> ChunkDoc:
    return ChunkDoc(cid, f"ep_{cid}", f"e/{cid}.md", 0, "episode", key, text)


def test_hostile_scope_keys_stay_isolated(server: IndexChoice, tmp_path: Path) -> None:
    with open_at(server, tmp_path / "n") as idx:
        idx.upsert([doc(i + 1, key) for i, key in enumerate(HOSTILE_KEYS)])
        idx.commit()
        for i, key in enumerate(HOSTILE_KEYS):
            assert [h.chunk_id for h in idx.search("cat Mochi", key, 50)] == [i + 1], key
        both = idx.search("cat Mochi", [HOSTILE_KEYS[0], HOSTILE_KEYS[2]], 50)
        assert sorted(h.chunk_id for h in both) == [1, 3]
        assert idx.search("cat Mochi", 'nobody" or "1"=="1', 50) == []


def test_two_nodes_share_a_collection_without_overwriting(
    server: IndexChoice, tmp_path: Path
) -> None:
    # Two clones of one vault: the same chunk ids (allocated per instance) for other chunks.
    a, b = open_at(server, tmp_path / "a"), open_at(server, tmp_path / "b")
    try:
        a.upsert([doc(1, "k", "alpha apples"), doc(2, "k", "alpha pears")])
        b.upsert([doc(1, "k", "beta boats")])
        a.commit()
        b.commit()
        assert a.collection == b.collection
        assert a.ids() == {1, 2} and b.ids() == {1}
        assert [h.chunk_id for h in b.search("alpha apples", "k", 10)] == [1]
        b_hit = b.search("beta boats", "k", 1)[0]
        a.delete([1])
        a.commit()
        assert a.ids() == {2} and b.ids() == {1}
        assert b.search("beta boats", "k", 1)[0].score == pytest.approx(b_hit.score)
    finally:
        a.close()
        b.close()


def test_a_reader_before_any_writer_is_told_to_open_a_writer(
    server: IndexChoice, tmp_path: Path
) -> None:
    with pytest.raises(IndexMissingError, match="writer"):
        open_at(server, tmp_path / "fresh", writer=False)


def test_a_server_that_is_down_is_unavailable_naming_the_uri(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(milvus_connect, "CONNECT_S", 0.5)
    down = parse_index(f"milvus://127.0.0.1:{_free_port()}", tmp_path, "memvault.yaml")
    for _ in range(2):  # a refused open keeps no writer lock: the second fails the same way
        with pytest.raises(MilvusUnavailableError) as err:
            open_at(down, tmp_path / "n")
        assert kind_of(err.value) == "unavailable"
        text = str(err.value)
        assert down.uri in text and "memvault.yaml" in text and "--index local" in text


CHILD = """
import os, sys
from pathlib import Path
from tests.indexer.backends.test_milvus_index import doc, open_at
from vault.layout.index_setting import parse_index
idx = open_at(parse_index(sys.argv[1], Path("/")), Path(sys.argv[2]))
idx.upsert([doc(1, "k", "kept after the kill"), doc(2, "k", "also kept")])
idx.commit()
idx.upsert([doc(3, "k", "never committed")])
os._exit(1)
"""


def test_a_lite_file_keeps_the_commits_of_a_killed_writer(tmp_path: Path) -> None:
    uri = f"milvus+lite://{tmp_path}/lite/vault.db"
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-c", CHILD, uri, str(tmp_path / "n")], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    with open_at(parse_index(uri, tmp_path), tmp_path / "n") as again:
        assert again.ids() == {1, 2}
        assert [h.chunk_id for h in again.search("kept after the kill", "k", 1)] == [1]


def test_the_engine_opens_what_memvault_index_names(
    server: IndexChoice, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMVAULT_INDEX", server.uri)
    root = tmp_path / "v"
    init_vault(root, git=False)
    vault = Vault(root, git=False)
    scope = ScopeId("b1", "group_1")
    vault.remember(NewEpisode(scope, "The user's hamster is called Peanut."))
    with Engine.open(root, embedder=TINY, cache_path=tmp_path / "c.sqlite") as engine:
        engine.reconcile()
        assert isinstance(engine.vector, MilvusVectors)
        hits = engine.vector.search("hamster Peanut", scope.index_key, 5)
        assert len(hits) == 1
        assert not (root / ".memvault" / "index" / "vectors").exists()  # no FAISS folder


def test_a_command_against_a_down_server_exits_4_saying_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli_tiny_embedder: TinyEmbedder
) -> None:
    monkeypatch.setattr(milvus_connect, "CONNECT_S", 0.5)
    root = tmp_path / "v"
    uri = f"milvus://127.0.0.1:{_free_port()}"
    memvault("init", root, "--index", uri, "--no-git")
    memvault("--vault", root, "remember", "a cat named Mochi", "--session", "group_1", "--no-git")
    ran = memvault("--vault", root, "search", "cat", "--session", "group_1", code=4)
    assert f"cannot reach the Milvus index at {uri}" in ran.stderr, ran.stderr
    assert "start that Milvus server" in ran.stderr


class OtherModel(TinyEmbedder):
    """The same TEST FAKE vectors under another model identity: a provider change."""

    def __init__(self) -> None:
        super().__init__()
        self.identity = EmbedderIdentity("tiny-hash-other", "2", self.identity.dim)


def test_a_model_change_rebuilds_into_its_own_collection_and_drops_our_old_rows(
    server: IndexChoice, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMVAULT_INDEX", server.uri)
    root = tmp_path / "v"
    init_vault(root, git=False)
    scope = ScopeId("b1", "group_1")
    Vault(root, git=False).remember(NewEpisode(scope, "The user's hamster is called Peanut."))
    cache = tmp_path / "c.sqlite"
    with Engine.open(root, embedder=TINY, cache_path=cache) as engine:
        engine.reconcile()
        old = engine.vector
        assert isinstance(old, MilvusVectors)
        rebuild = engine.start_rebuild(CachedEmbedder(OtherModel(), cache))
        assert rebuild.finished.wait(60) and rebuild.error is None
        new = engine.vector
        assert isinstance(new, MilvusVectors) and new.collection != old.collection
        assert len(new.search("hamster Peanut", scope.index_key, 5)) == 1
    with open_at(server, root / ".memvault" / "index" / "milvus", writer=False) as before:
        assert before.collection == old.collection and before.ids() == set()


def test_a_server_gone_after_opening_is_unavailable_not_a_grpc_trace(tmp_path: Path) -> None:
    with lite_server(tmp_path / "srv") as uri:
        idx = open_at(parse_index(uri, tmp_path), tmp_path / "n")
        idx.upsert([doc(1, "k")])
        idx.commit()
    try:
        for call in (lambda: idx.search("cat", "k", 5), idx.ids):
            with pytest.raises(MilvusUnavailableError, match=f"the Milvus index at {uri}"):
                call()
    finally:
        idx.close()
