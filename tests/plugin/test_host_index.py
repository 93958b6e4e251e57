"""`index: host` in the plugin: the setting, the isolation proof at start, and a turn that
injects from the host's vector database (the FAKE Milvus-like one of
tests/helpers/fake_host_vectors.py; the real host: hostsuite/checks_host_index.py)."""

from __future__ import annotations

import asyncio
import json

import pytest

from indexer.backends.vector_index import VectorIndex
from tests.helpers.fake_host_vectors import FakeMilvusHost
from tests.plugin.injection.test_injector import injected
from tests.plugin.injection.test_memory_once_per_turn import injector_turn
from tests.plugin.tools.test_tools import KB, scope
from vault.writes.new_episode import NewEpisode


def test_index_setting_is_local_by_default_and_checked():
    from memvault_plugin.memory_service import PluginSettings, SettingsError

    assert PluginSettings.from_config({}).index == "local"
    assert PluginSettings.from_config({"index": "Host", "index_kb": " kb1 "}).index_kb == "kb1"
    with pytest.raises(SettingsError, match="index must be local or host"):
        PluginSettings.from_config({"index": "cloud"})


@pytest.fixture
def vector_host(host, tmp_path):
    host.vector_db = FakeMilvusHost(tmp_path / "host-vectors.json")
    host.vector_kbs = {KB}
    host.register_memory_kb(KB)  # blank index_kb: the first MemVault knowledge base
    return host


async def start(host, tmp_path, monkeypatch, tiny_embedder):
    import main
    from memvault_plugin import memory_service

    monkeypatch.setattr(memory_service, "default_embedder", lambda: tiny_embedder)
    plugin = main.MemVaultPlugin()
    plugin.plugin_runtime_handler = host
    plugin.watch = False
    plugin.config = {"vault_path": str(tmp_path / "memory"), "index": "host"}
    await plugin.initialize()
    return plugin


def host_rows(host):
    return json.loads(host.vector_db.path.read_text())


async def test_a_turn_injects_from_the_host_and_chats_stay_apart(
    vector_host, tmp_path, monkeypatch, tiny_embedder
):
    plugin = await start(vector_host, tmp_path, monkeypatch, tiny_embedder)
    assert plugin.memory.warnings == []
    vault, engine = plugin.memory.require()
    assert type(engine.vector).__name__ == "HostVectorIndex"
    for session, text in (
        ("group_A", "Alice's cat is called Miso"),
        ("group_B", "Bob's cat is called Rex"),
    ):  # noqa: E501
        await asyncio.to_thread(vault.remember, NewEpisode(scope(plugin, session), text))
    assert len(host_rows(vector_host)) == 2  # the vectors are in the host ...
    assert not (tmp_path / "memory" / ".memvault" / "index" / "vectors").exists()  # ... only
    sent = injected(await injector_turn(plugin, vector_host, "what is the cat called", "group_A"))
    assert "Miso" in sent[1] and "Rex" not in sent[1]
    sent = injected(await injector_turn(plugin, vector_host, "what is the cat called", "group_B"))
    assert "Rex" in sent[1] and "Miso" not in sent[1]
    plugin.memory.close()


async def test_a_host_that_does_not_filter_on_file_id_is_refused_for_local(
    vector_host, tmp_path, monkeypatch, tiny_embedder
):
    vector_host.vector_filters_ignored = True
    old_space = tmp_path / "memory" / ".memvault" / "index" / "host" / "space.json"
    old_space.parent.mkdir(parents=True)
    old_space.write_text('{"vault_id": "from-an-earlier-index-host"}')
    plugin = await start(vector_host, tmp_path, monkeypatch, tiny_embedder)
    (warning,) = plugin.memory.warnings
    assert "index: host refused" in warning and "another scope's probe row" in warning
    assert "using local vectors (FAISS) instead" in warning
    assert isinstance(plugin.memory.require()[1].vector, VectorIndex)
    assert host_rows(vector_host) == []  # the probe rows were cleaned up
    # FAISS takes the edits now: a later switch to host must not trust the old space's rows.
    assert not old_space.exists()
    plugin.memory.close()


async def test_index_host_without_a_knowledge_base_says_what_to_create(
    host, tmp_path, monkeypatch, tiny_embedder
):
    plugin = await start(host, tmp_path, monkeypatch, tiny_embedder)
    (warning,) = plugin.memory.warnings
    assert "create a knowledge base with the MemVault engine" in warning
    assert "index_kb" in warning and "local vectors" in warning
    plugin.memory.close()


class FlakyHost(FakeMilvusHost):
    """FAKE host whose next upsert stores its rows, then fails (a timeout after the write)."""

    fail_next = False

    async def vector_upsert(self, *args, **kwargs):
        await super().vector_upsert(*args, **kwargs)
        if self.fail_next:
            self.fail_next = False
            raise TimeoutError("the host answered too late")


def test_a_commit_that_failed_after_the_write_leaves_no_duplicate(tmp_path, tiny_embedder):
    from memvault_plugin.host_index.calls import HostCalls, HostVectorError
    from memvault_plugin.host_index.rows import Metric
    from memvault_plugin.host_index.vectors import HostVectorIndex

    from indexer.backends.records import ChunkDoc
    from tests.helpers.fake_host_vectors import start_loop

    flaky = FlakyHost(tmp_path / "host.json")
    calls = HostCalls(flaky, KB, start_loop())
    dim = tiny_embedder.identity.dim
    index = HostVectorIndex.open(
        calls, tmp_path / "idx", space="s", metric=Metric("similarity"),
        embed=tiny_embedder.embed_documents, dim=dim,
    )  # fmt: skip
    doc = ChunkDoc(7, "ep_7", "e.md", 0, "episode", "k", "the boat is blue")
    flaky.fail_next = True
    index.upsert([doc])
    with pytest.raises(HostVectorError, match="too late"):
        index.commit()
    index.upsert([ChunkDoc(7, "ep_7", "e.md", 0, "episode", "k", "the boat is red")])
    index.commit()  # the host holds row 7 already: it is replaced, not inserted twice
    stored = json.loads(flaky.path.read_text())
    assert len(stored) == 1 and index.ids() == {7}
    index.close()
