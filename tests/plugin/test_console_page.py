"""The Memory Console's Page component through the SDK's PageRequest/PageResponse over the
started plugin (fake host): the same endpoints as `memvault console`, errors as fail()."""

from __future__ import annotations

import importlib

from langbot_plugin.api.definition.components.page import PageRequest

from vault.format.model import Speaker
from vault.writes.new_episode import NewEpisode


def page(plugin):
    module = importlib.import_module("components.pages.console.console")
    instance = module.MemoryConsole()
    instance.plugin = plugin
    return instance


async def api(plugin, endpoint, body):
    return await page(plugin).handle_api(PageRequest(endpoint=endpoint, method="POST", body=body))


async def test_page_serves_the_console_endpoints(plugin):
    scope = plugin.memory.scope("group_123", "bot-1")
    plugin.memory.vault.remember(
        NewEpisode(scope, "Alice flies to Beijing", speaker=Speaker("u1", "Alice"))
    )
    plugin.memory.engine.reconcile()
    meta = await api(plugin, "/meta", {})
    assert meta.error is None and meta.data["host"] == "langbot"
    assert meta.data["isolation"] == plugin.memory.settings.isolation
    body = {"scope": {"bot": "bot-1", "session": "group_123"}, "query": "Beijing"}
    found = await api(plugin, "/search", body)
    assert [i["content"] for i in found.data["items"]] == ["Alice flies to Beijing"]
    other = await api(plugin, "/episodes", {"scope": {"bot": "bot-2", "session": "group_123"}})
    assert other.data["total"] == 0


async def test_page_errors_are_fail_messages(plugin):
    bad = await api(plugin, "/episodes", {"scope": {"bot": "bot-1", "session": ".."}})
    assert bad.data is None and "session name" in bad.error
    unknown = await api(plugin, "/drop-tables", {})
    assert "unknown endpoint" in unknown.error


async def test_page_when_memory_is_down(plugin):
    plugin.memory.close()
    plugin.memory.vault = None
    down = await api(plugin, "/meta", {})
    assert down.error.startswith("memory is unavailable")
