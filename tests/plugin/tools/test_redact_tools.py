"""The plugin's write paths through the fake host keep secrets out of the vault folder and
git: the `remember` and `update_profile` tools and a knowledge-base text upload."""

from __future__ import annotations

import pytest

from tests.helpers.secret_scan import places_holding
from tests.plugin.tools.test_tools import KB, call, scope

PASSWORD = "Hunter2-Zq81x"
API_KEY = "sk-proj-Xy12Ab34Cd56Ef78Gh90"


@pytest.fixture
def opted_in(host):
    host.register_memory_kb(KB)
    return host


async def test_remember_tool_stores_the_placeholder_not_the_password(plugin, opted_in, tmp_path):
    content = f"Alice's wifi password is {PASSWORD}; the router is in the hall"
    # the answer echoes what was stored: the secret does not come back to the model
    assert await call(plugin, opted_in, "remember", {"content": content}) == (
        "Remembered: Alice's wifi password is [redacted:password]; the router is in the hall"
    )
    vault, _ = plugin.memory.require()
    (stored,) = vault.list_episodes(scope(plugin)).items
    assert stored.episode.body == (
        "Alice's wifi password is [redacted:password]; the router is in the hall"
    )
    assert places_holding(tmp_path / "memory", PASSWORD) == []


async def test_remember_tool_refuses_a_bare_secret(plugin, opted_in, tmp_path):
    reply = await call(plugin, opted_in, "remember", {"content": API_KEY})
    assert reply.startswith("Error:") and "only a secret" in reply and API_KEY not in reply
    vault, _ = plugin.memory.require()
    assert vault.list_episodes(scope(plugin)).items == ()
    assert places_holding(tmp_path / "memory", API_KEY) == []


async def test_update_profile_tool_keeps_no_secret(plugin, opted_in, tmp_path):
    params = {
        "field": "preferences",
        "action": "add",
        "value": f"{PASSWORD} for the guest network",
        "fact_key": "wifi_password",
    }
    reply = await call(plugin, opted_in, "update_profile", params)
    assert reply.startswith("Speaker profile updated.") and PASSWORD not in reply
    notes = {"field": "notes", "action": "set", "value": f"bot token: {API_KEY}"}
    assert not (await call(plugin, opted_in, "update_profile", notes)).startswith("Error")
    for secret in (PASSWORD, API_KEY):
        assert places_holding(tmp_path / "memory", secret) == []


async def test_knowledge_base_text_upload_keeps_no_secret(plugin, tmp_path):
    from memvault_plugin.kb_upload import import_text

    vault, _ = plugin.memory.require()
    text = f"# Office\n\nThe printer admin password: {PASSWORD}\n\n# Keys\n\nCI uses {API_KEY}.\n"
    ids = import_text(vault, scope(plugin), text, filename="office.md", doc_id="doc-1")
    bodies = [vault.find_episode(scope(plugin), i).episode.body for i in ids]
    assert bodies == [
        "# Office\n\nThe printer admin password: [redacted:password]",
        "# Keys\n\nCI uses [redacted:api_key].",
    ]
    for secret in (PASSWORD, API_KEY):
        assert places_holding(tmp_path / "memory", secret) == []
