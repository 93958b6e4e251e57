"""The plugin's periodic sync (`sync_remote`, `sync_every`; vault.git.syncloop): off by
default; when on, what another replica pushed is searchable in this process right after a
sync (indexed through the vault's on_written hook, no watcher needed); a failing remote is
recorded for status/Health and never raised into the host."""

from __future__ import annotations

from pathlib import Path

import pytest
from dulwich.repo import Repo

from indexer.retrieval.search_query import SearchQuery
from vault.git import gitsync, syncstate
from vault.layout.keys import ScopeId
from vault.writes.create import init_vault
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

CHAT = ScopeId("b1", "group_1")


def test_sync_is_off_by_default_and_sync_every_is_checked():
    from memvault_plugin.memory_service import PluginSettings, SettingsError

    settings = PluginSettings.from_config({})
    assert settings.sync_remote == "" and settings.sync_every == 10
    assert PluginSettings.from_config({"sync_remote": " /r.git "}).sync_remote == "/r.git"
    with pytest.raises(SettingsError, match="sync_every"):
        PluginSettings.from_config({"sync_every": 0})


def test_a_pull_in_the_plugin_is_searchable_at_once_and_a_failure_is_only_recorded(
    tmp_path: Path, tiny_embedder
):
    from memvault_plugin.memory_service import MemoryService, PluginSettings

    remote = tmp_path / "remote.git"
    Repo.init_bare(str(remote), mkdir=True, default_branch=b"main").close()
    other = tmp_path / "other"
    init_vault(other)
    writer = Vault(other)
    pushed = writer.remember(NewEpisode(CHAT, "the rowing boat is painted teal")).id
    gitsync.sync(writer, str(remote))

    node = tmp_path / "node"
    settings = PluginSettings(vault_path=node, sync_remote=str(remote), sync_every=600)
    service = MemoryService(settings)
    service.start(embedder=tiny_embedder, watch=False)
    try:
        assert service.sync_loop is not None and service.engine is not None
        result = service.sync_loop.once()
        assert result is not None and any(pushed in p for p in result.pulled)
        hits = service.engine.search(SearchQuery("rowing boat teal", CHAT))
        assert [h.doc.episode_id for h in hits] == [pushed]

        service.sync_loop.remote = str(tmp_path / "gone.git")
        assert service.sync_loop.once() is None  # logged and recorded, not raised
        said = syncstate.problems(node)
        assert any("last sync" in line and "gone.git" in line for line in said)
    finally:
        service.close()
    assert service.sync_loop is None
