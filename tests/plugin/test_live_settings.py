"""Settings changed through LangBot reach MemVault (issue 20, item 1).

The FAKE host starts the plugin as langbot-plugin 0.7.16 starts an installed (dedicated)
worker: the instance is handed the config, but `initialize()` runs inside an invocation bound
to the container's config from before it was stored ({} in a new process; measured on a
real 4.11.2 host: `get_config()` answered [] keys, the instance's own config held the new
`isolation: bot`). Later calls carry LangBot's config; a config pushed into the running
process must apply at the next call, after in-flight writes, and `!memory health` says
which settings are in effect and when LangBot's are not.
"""

from __future__ import annotations

import asyncio
import importlib
from pathlib import Path

import pytest

from tests.plugin.fakehost import FakeHost, started_plugin

TYPES = ["appointment: a booked visit"]
OFF = "key events are off for this bot"


def component(plugin, module: str, cls: str):
    instance = getattr(importlib.import_module(module), cls)()
    instance.plugin = plugin
    return instance


async def list_events(plugin, host: FakeHost) -> str:
    tool = component(plugin, "components.tools.list_events", "ListEvents")
    with host.invocation():
        return await tool.call({}, host.session(), 7)


async def command(plugin, host: FakeHost, text: str) -> str:
    cmd = component(plugin, "components.commands.memory", "Memory")
    with host.invocation():
        replies = [r async for r in cmd._execute(host.command(text))]
    return "\n".join(str(r.text) for r in replies)


@pytest.fixture
def default_vault(tmp_path, monkeypatch) -> Path:
    """Where the plugin's default vault would go: never a real home folder."""
    path = tmp_path / "default-vault"
    monkeypatch.setenv("MEMVAULT_VAULT", str(path))
    return path


async def test_installed_start_uses_the_config_the_runtime_handed_over(
    tmp_path, default_vault
) -> None:
    host = FakeHost()
    host.register_memory_kb("kb-memvault")
    import main

    plugin = main.MemVaultPlugin()
    plugin.watch = False
    vault = tmp_path / "memory"
    config = {"vault_path": str(vault), "isolation": "bot", "event_types": TYPES, "top_k": 7}
    await host.start_plugin(plugin, config, stale={})
    try:
        assert plugin.memory.settings.vault_path == vault
        assert "Event types: appointment" in await list_events(plugin, host)
        overview = await command(plugin, host, "!memory")
        assert "[Memory] mode: bot" in overview
        assert "top_k=7" in overview
        health = await command(plugin, host, "!memory health")
        assert "settings in effect match LangBot's: isolation=bot, event_types=appointment" in (
            health
        )
        assert not default_vault.exists()
    finally:
        plugin.memory.close()


async def test_a_config_pushed_into_the_running_plugin_applies_after_inflight_writes(
    tmp_path, host
) -> None:
    host.register_memory_kb("kb-memvault")
    plugin = await started_plugin(host, tmp_path / "memory")
    old = plugin.memory
    try:
        assert OFF in await list_events(plugin, host)
        assert "[Memory] mode: session" in await command(plugin, host, "!memory")
        finished: list[str] = []

        def slow_write() -> None:  # a write in flight when the change arrives
            import time

            time.sleep(0.3)
            vault, _ = old.require()
            finished.append(vault.root.name)

        writing = asyncio.ensure_future(old.run(slow_write))
        await asyncio.sleep(0.05)
        host.config = {**plugin.config, "isolation": "bot", "event_types": TYPES, "top_k": 2}
        reply = await list_events(plugin, host)
        assert finished == ["memory"], "the service closed before its write finished"
        await writing
        assert "Event types: appointment" in reply
        assert plugin.memory is not old and old.engine is None
        assert plugin.memory.settings.top_k == 2
        assert "[Memory] mode: bot" in await command(plugin, host, "!memory")
    finally:
        plugin.memory.close()
        old.close()


async def test_a_config_that_cannot_be_used_keeps_the_settings_and_health_says_so(
    tmp_path, host
) -> None:
    host.register_memory_kb("kb-memvault")
    plugin = await started_plugin(host, tmp_path / "memory", event_types=TYPES)
    try:
        host.config = {**plugin.config, "isolation": "everyone", "openai_key": "sk-live-123456"}
        # Still serving as before:
        assert "Event types: appointment" in await list_events(plugin, host)
        health = await command(plugin, host, "!memory health")
        assert "- WARN: LangBot's settings are not in effect (refused: isolation must be" in health
        assert "sk-live-123456" not in health
        assert "!memory health" in await command(plugin, host, "!memory")
        host.config = {**host.config, "isolation": "bot"}  # fixed: applies at the next call
        health = await command(plugin, host, "!memory health")
        assert "settings in effect match LangBot's: isolation=bot" in health
        assert "openai_key=set" in health and "sk-live-123456" not in health
    finally:
        plugin.memory.close()


async def test_a_new_instance_in_the_same_process_takes_over_the_index(tmp_path, host) -> None:
    """`lbp run` (the debug copy) makes a NEW plugin instance on every reconnect, which a
    config change causes, and never tells the old one: the new one must become the index
    writer with the new settings, not a read-only reader beside the abandoned service."""
    import main

    host.register_memory_kb("kb-memvault")
    vault = str(tmp_path / "memory")
    first, second = main.MemVaultPlugin(), main.MemVaultPlugin()
    first.watch = second.watch = False
    await host.start_plugin(first, {"vault_path": vault}, stale={})
    try:
        await host.start_plugin(second, {"vault_path": vault, "event_types": TYPES}, stale={})
        try:
            assert first.memory.engine is None  # closed: it no longer holds the writer lock
            assert not [w for w in second.memory.warnings if "read-only" in w]
            assert second.memory.engine is not None and second.memory.engine.syncer is not None
            assert "Event types: appointment" in await list_events(second, host)
        finally:
            second.memory.close()
    finally:
        first.memory.close()
