"""Embedding providers. The OpenAI-compatible server is a loopback stand-in (named as such:
no remote API is reachable here) that answers with the real embedded model's vectors."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from indexer.backends.embed_cache import CachedEmbedder
from indexer.backends.embed_openai import OpenAICompatible
from indexer.backends.embeddings import EmbeddingError, default_embedder
from indexer.backends.providers import embedder_from_settings
from indexer.engine import Engine
from indexer.retrieval.search_query import SearchQuery
from vault.layout.keys import ScopeId
from vault.writes.new_episode import NewEpisode


class FakeOpenAIEmbeddings(BaseHTTPRequestHandler):
    """Stand-in for a remote /v1/embeddings endpoint; counts requests."""

    calls = 0
    gate = threading.Event()  # cleared = the "remote" model stalls, to test a slow rebuild

    def do_POST(self):  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).gate.wait(30)
        if self.path != "/v1/embeddings" or self.headers.get("Authorization") != "Bearer k":
            self.send_response(401)
            self.end_headers()
            self.wfile.write(b'{"error": "bad key"}')
            return
        type(self).calls += 1
        vectors = default_embedder().embed_documents(body["input"])
        data = [{"index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]
        payload = json.dumps({"data": data[::-1], "model": body["model"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server():
    FakeOpenAIEmbeddings.gate.set()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), FakeOpenAIEmbeddings)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()


def test_openai_compatible_matches_local_vectors_in_order(server):
    remote = OpenAICompatible(server, "text-embedding-x", 512, api_key="k")
    texts = ["猫叫咪咪", "the cat is called Mochi", "会议在周五"]
    got = remote.embed_documents(texts)
    want = default_embedder().embed_documents(texts)
    assert np.allclose(got, want, atol=1e-5)
    assert remote.identity.key != default_embedder().identity.key


def test_openai_errors_say_what_to_check(server):
    with pytest.raises(EmbeddingError, match="HTTP 401"):
        OpenAICompatible(server, "m", 512, api_key="wrong").embed_query("x")
    with pytest.raises(EmbeddingError, match="expected"):
        OpenAICompatible(server, "m", 384, api_key="k").embed_query("x")
    with pytest.raises(EmbeddingError, match="is the server running"):
        OpenAICompatible("http://127.0.0.1:9/v1", "m", 512, timeout=2).embed_query("x")


def test_settings_pick_the_provider():
    assert embedder_from_settings({}) is default_embedder()
    remote = embedder_from_settings(
        {
            "MEMVAULT_EMBEDDING": "openai",
            "MEMVAULT_EMBEDDING_URL": "http://127.0.0.1:1/v1",
            "MEMVAULT_EMBEDDING_MODEL": "bge-m3",
            "MEMVAULT_EMBEDDING_DIM": "1024",
        }
    )
    assert remote.identity.dim == 1024 and "bge-m3" in remote.identity.key
    with pytest.raises(EmbeddingError, match="MEMVAULT_EMBEDDING_DIM"):
        embedder_from_settings({"MEMVAULT_EMBEDDING": "openai"})
    with pytest.raises(EmbeddingError, match="local or openai"):
        embedder_from_settings({"MEMVAULT_EMBEDDING": "magic"})


def test_cache_embeds_unchanged_text_once_across_restarts(tmp_path):
    path = tmp_path / "cache.sqlite"
    first = CachedEmbedder(default_embedder(), path)
    first.embed_documents(["a", "b", "a"])
    assert first.misses == 2
    first.close()
    again = CachedEmbedder(default_embedder(), path)
    vectors = again.embed_documents(["b", "a", "c"])
    assert again.misses == 1 and vectors.shape == (3, 512)
    assert np.allclose(vectors[1], default_embedder().embed_documents(["a"])[0], atol=1e-6)


def test_switching_provider_rebuilds_in_background_while_old_vectors_answer(server, vault):
    scope = ScopeId("b1", "group_1")
    vault.remember(NewEpisode(scope, "李伟对花生过敏"))
    vault.remember(NewEpisode(scope, "the book club meets on Friday"))
    with Engine.open(vault.root) as engine:
        engine.reconcile()
        local = [
            r.doc.episode_id
            for r in engine.search(SearchQuery("peanut allergy", scope, mode="vector"))
        ]
    remote = OpenAICompatible(server, "use-behind-http", 512, api_key="k")
    FakeOpenAIEmbeddings.gate.clear()  # hold the "remote" model: the rebuild must wait
    before = FakeOpenAIEmbeddings.calls
    with Engine.open(vault.root, embedder=remote) as engine:
        engine.attach(vault)
        assert engine.rebuild is not None and not engine.rebuild.finished.is_set()
        # The old model keeps answering, and keeps following writes, during the rebuild.
        during = [
            r.doc.episode_id
            for r in engine.search(SearchQuery("peanut allergy", scope, mode="vector"))
        ]
        assert during[0] == local[0]
        late = vault.remember(NewEpisode(scope, "written during the rebuild: 会议改到周六"))
        FakeOpenAIEmbeddings.gate.set()
        assert engine.rebuild.finished.wait(60) and engine.rebuild.error is None
        assert FakeOpenAIEmbeddings.calls > before
        assert engine.manifest.embedding_identity == remote.identity.key
        assert engine.embedder.identity == remote.identity
        after = [
            r.doc.episode_id
            for r in engine.search(SearchQuery("peanut allergy", scope, mode="vector"))
        ]
        assert after[0] == local[0]
        hits = [
            r.doc.episode_id for r in engine.search(SearchQuery("会议 周六", scope, mode="vector"))
        ]
        assert hits[0] == late.id
    vectors = list((vault.root / ".memvault/index/vectors").iterdir())
    assert len(vectors) == 1  # the old model's folder is gone after the swap
