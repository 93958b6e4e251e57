"""The LangBot host's embedding model as MemVault's embedder (through the fake host, which
answers with the real embedded model)."""

import asyncio

import numpy as np
import pytest

from indexer.backends.embeddings import EmbeddingError, default_embedder
from indexer.engine import Engine
from indexer.retrieval.search_query import SearchQuery
from tests.plugin.fakehost import FakeHost
from vault.layout.keys import ScopeId
from vault.writes.create import init_vault
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault


async def _plugin_invoke(host: FakeHost):
    import main

    plugin = main.MemVaultPlugin()
    plugin.plugin_runtime_handler = host
    return plugin.invoke_embedding


async def test_probe_learns_dimension_and_embeds_from_a_worker_thread(host):
    from memvault_plugin.host_embedder import HostEmbedder

    embedder = await HostEmbedder.probe(await _plugin_invoke(host), "emb-uuid-1")
    assert embedder.identity.dim == 512 and embedder.identity.name == "langbot:emb-uuid-1"
    rows = await asyncio.to_thread(embedder.embed_documents, ["猫", "cat"])
    assert np.allclose(rows, default_embedder().embed_documents(["猫", "cat"]), atol=1e-5)
    with pytest.raises(EmbeddingError, match="worker thread"):
        embedder.embed_query("called on the event loop would deadlock")


async def test_probe_without_a_selected_model_says_so(host):
    from memvault_plugin.host_embedder import HostEmbedder

    with pytest.raises(EmbeddingError, match="no embedding model is selected"):
        await HostEmbedder.probe(await _plugin_invoke(host), "")


async def test_engine_indexes_and_searches_with_the_host_model(tmp_path, host):
    from memvault_plugin.host_embedder import HostEmbedder

    embedder = await HostEmbedder.probe(await _plugin_invoke(host), "emb-uuid-1")
    root = tmp_path / "memory"
    init_vault(root, git=False)
    vault = Vault(root, git=False)
    scope = ScopeId("bot-1", "group_1")

    def work():
        with Engine.open(root, embedder=embedder) as engine:
            engine.attach(vault)
            vault.remember(NewEpisode(scope, "李伟对花生过敏"))
            return [
                r.doc.text
                for r in engine.search(SearchQuery("peanut allergy", scope, mode="vector"))
            ]

    texts = await asyncio.to_thread(work)
    assert "花生" in texts[0]
    assert host.embedding_calls >= 2
