"""embedding = openai with a setting left blank: the plugin says which setting is missing and
how to set it (issue 15), not "run memvault reindex" (the index is fine)."""

from __future__ import annotations

import pytest

from tests.plugin.commands.test_command import command, say
from tests.plugin.fakehost import started_plugin

CASES = [
    ({}, "openai_url, openai_model, openai_dim are not set"),
    ({"openai_url": "http://127.0.0.1:9/v1"}, "openai_model, openai_dim are not set"),
    ({"openai_url": "http://127.0.0.1:9/v1", "openai_model": "m"}, "openai_dim is not set"),
    ({"openai_model": "m", "openai_dim": 8}, "openai_url is not set"),
]


@pytest.mark.parametrize(("given", "missing"), CASES)
async def test_a_missing_openai_setting_is_named_with_the_fix(tmp_path, host, given, missing):
    plugin = await started_plugin(host, tmp_path / "memory", embedding="openai", **given)
    try:
        assert plugin.memory.engine is None
        warning = "; ".join(plugin.memory.warnings)
        assert f"embedding is openai but {missing}" in warning
        assert "MemVault plugin settings" in warning and "set embedding to local" in warning
        assert "reindex" not in warning
        reply = await say(command(plugin), host, "!memory list")
        assert missing in reply and "reindex" not in reply
    finally:
        plugin.memory.close()
