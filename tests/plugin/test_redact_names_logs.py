"""Issue 20, item 2, through the fake LangBot host: a secret in the sender's display name,
in the tags, key or slot key a model sends, in an uploaded file's name or a knowledge-base
upload's speaker, is stored nowhere (vault folder with .memvault and its snapshots, git),
logged nowhere (logs are storage too) and not echoed back to the model in a tool's answer."""

from __future__ import annotations

import json
import logging

import pytest

from tests.helpers.secret_scan import everywhere
from tests.plugin.injection.test_injector import injected
from tests.plugin.injection.test_memory_once_per_turn import injector_turn
from tests.plugin.knowledge.test_knowledge_engine import engine_for, upload
from tests.plugin.tools.test_tools import KB, call, scope
from vault.writes.new_episode import NewEpisode
from vault.writes.snapshots import flush

AWS = "AKIAIOSFODNN7EXAMPLE"
CAP_KEY = "Sk-Proj-Xy12Ab34Cd56Ef78Gh90"
NATIONAL_ID = "11010519491231002X"
NAME = f"Bob {NATIONAL_ID}"
SECRETS = (AWS, CAP_KEY, NATIONAL_ID)


@pytest.fixture
def opted_in(host, caplog):
    caplog.set_level(logging.DEBUG)
    host.register_memory_kb(KB)
    host.query_vars["sender_name"] = NAME
    return host


async def test_remember_tool_stores_and_logs_no_secret_in_name_tags_or_key(
    plugin, opted_in, caplog, tmp_path
):
    params = {"content": "Bob's router is in the hall", "tags": ["net", CAP_KEY], "key": AWS}
    reply = await call(plugin, opted_in, "remember", params)
    assert reply == "Remembered: Bob's router is in the hall"
    vault, _ = plugin.memory.require()
    (stored,) = vault.list_episodes(scope(plugin)).items
    assert stored.episode.speaker.name == "Bob [redacted:national_id]"
    assert stored.episode.tags == ("net", "[redacted:api_key]")
    assert stored.episode.key == "[redacted:api_key]"
    assert everywhere(SECRETS, tmp_path / "memory", records=caplog.records) == {}


async def test_update_profile_tool_stores_and_logs_no_secret_in_the_slot_key(
    plugin, opted_in, caplog, tmp_path
):
    params = {"field": "preferences", "action": "add", "value": "blue", "fact_key": AWS}
    reply = await call(plugin, opted_in, "update_profile", params)
    assert reply.startswith("Speaker profile updated.")
    vault, _ = plugin.memory.require()
    assert vault.read_profile(scope(plugin), "u1").preferences == ("[redacted:api_key]: blue",)
    assert everywhere(SECRETS, tmp_path / "memory", records=caplog.records, texts=[reply]) == {}


@pytest.mark.parametrize(
    ("tool", "params"),
    [
        ("update_profile", {"field": CAP_KEY, "action": "add", "value": "x"}),
        ("update_profile", {"field": "traits", "action": AWS, "value": "x"}),
        ("remember", {"content": "Bob likes tea", "priority": CAP_KEY}),
        (
            "update_profile",
            {"field": "preferences", "action": "remove", "value": "x", "fact_key": AWS},
        ),
    ],
    ids=["bad_field", "bad_action", "bad_priority", "missing_slot"],
)
async def test_a_refusal_echoes_no_secret_to_the_model_or_the_log(
    plugin, opted_in, caplog, tool, params
):
    reply = await call(plugin, opted_in, tool, params)
    assert reply.startswith("Error:")
    assert everywhere(SECRETS, records=caplog.records, texts=[reply]) == {}


async def test_an_upload_keeps_no_secret_in_its_file_name_or_speaker(
    plugin, opted_in, caplog, tmp_path
):
    kb = engine_for(plugin)
    items = [{"content": "Bob likes tea", "sender_id": "u1", "sender_name": NAME}]
    export = json.dumps({"scope_key": "bot-1:group_A", "episodes": items}).encode()
    md = (
        b"---\nid: ep_20260101_aaaaaa\ncreated_at: 2026-01-01T09:00:00Z\n"
        b"speaker: {id: u9, name: 'Erin " + CAP_KEY.encode() + b"'}\n---\nErin flies to Osaka.\n"
    )
    for name, data, doc in ((f"{AWS}.json", export, "d1"), (f"notes {CAP_KEY}.md", md, "d2")):
        result = await kb.ingest(upload(opted_in, name, data, doc=doc, mime=""))
        assert result.chunks_created == 1, result.error_message
    assert everywhere(SECRETS, tmp_path / "memory", records=caplog.records) == {}


async def test_the_injected_prompt_and_its_snapshot_keep_no_secret(
    plugin, opted_in, caplog, tmp_path
):
    vault, _ = plugin.memory.require()
    vault.remember(NewEpisode(scope(plugin, "group_A"), "Bob's router is in the hall"))
    profile = vault.profile_path(scope(plugin, "group_A"), None)
    profile.parent.mkdir(parents=True, exist_ok=True)
    profile.write_text(f"notes: the CI uses {AWS}\n", encoding="utf-8")  # by hand
    ctx = await injector_turn(plugin, opted_in, "where is the router", session="group_A")
    sent = injected(ctx)
    assert "national_id" in sent[0] and "[redacted:api_key]" in sent[0]  # name: HTML-escaped
    assert everywhere(SECRETS, texts=sent) == {}
    flush()
    snapshots = list((tmp_path / "memory" / ".memvault" / "snapshots").iterdir())
    assert len(snapshots) == 1
    assert "Bob [redacted:national_id]" in snapshots[0].read_text(encoding="utf-8")
    # The person's own profile.yaml keeps what they wrote; nothing MemVault derived does.
    derived = tmp_path / "memory" / ".memvault"
    assert everywhere(SECRETS, derived, records=caplog.records) == {}


async def test_the_console_page_echoes_and_logs_no_secret_of_a_bad_request(plugin, caplog):
    import importlib

    from langbot_plugin.api.definition.components.page import PageRequest

    caplog.set_level(logging.DEBUG)
    page = importlib.import_module("components.pages.console.console").MemoryConsole()
    page.plugin = plugin
    bad = [
        PageRequest(endpoint=f"/{CAP_KEY}", method="POST", body={}),
        PageRequest(endpoint="/profile", method="POST", body={"scope": {"bot": AWS}}),
    ]
    replies = [await page.handle_api(request) for request in bad]
    assert all(reply.error for reply in replies)
    texts = [reply.error for reply in replies]
    assert everywhere(SECRETS, records=caplog.records, texts=texts) == {}
