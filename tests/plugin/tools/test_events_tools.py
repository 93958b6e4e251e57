"""The key-event tools through the SDK's Tool.call with a real Session and the FAKE host,
over a real vault with git: off without types, an unknown type refused with the list, the
person always the host's sender (never a parameter), and the settings that turn it on."""

from __future__ import annotations

import asyncio
import importlib
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.embedder import TinyEmbedder
from tests.helpers.paths import REPO
from tests.plugin.fakehost import FakeHost, started_plugin

TINY = TinyEmbedder()  # the TEST FAKE for the plugins made per Hypothesis example

KB = "kb-memvault"
TYPES = [
    "appointment: a visit booked for a date",
    "order_issue: a problem with an order",
    "complaint: the person is unhappy about something",
]
NAMES = "appointment, order_issue, complaint"
CLASSES = {
    "open_event": "OpenEvent",
    "update_event": "UpdateEvent",
    "close_event": "CloseEvent",
    "list_events": "ListEvents",
}


def tool(plugin, name):
    instance = getattr(importlib.import_module(f"components.tools.{name}"), CLASSES[name])()
    instance.plugin = plugin
    return instance


async def call(plugin, host, name, params, kind="group", launcher="123", query_id=7):
    return await tool(plugin, name).call(params, host.session(kind, launcher), query_id)


def people(plugin) -> list[Path]:
    return sorted(plugin.memory.settings.vault_path.glob("bots/*/people/*/events/*.md"))


@pytest.fixture
async def on(tmp_path, host):
    host.register_memory_kb(KB)
    plug = await started_plugin(host, tmp_path / "memory", event_types=TYPES)
    yield plug
    plug.memory.close()


async def opened_id(plugin, host, summary="Dentist on Tuesday at 3pm", **kw) -> str:
    text = await call(plugin, host, "open_event", {"type": "appointment", "summary": summary}, **kw)
    assert text.startswith("Opened key event evt_"), text
    return text.split()[3]


# --------------------------------------------------------------------------- off / opt-in


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("open_event", {"type": "appointment", "summary": "x"}),
        ("update_event", {"id": "evt_20261130_aaaaaa", "note": "x"}),
        ("close_event", {"id": "evt_20261130_aaaaaa", "resolution": "x"}),
        ("list_events", {}),
    ],
)
async def test_every_event_tool_refuses_while_no_type_is_configured(plugin, host, name, params):
    """LangBot lists every Tool component of a plugin whatever its settings, so with an
    empty dictionary the tools are offered and must say the feature is off."""
    host.register_memory_kb(KB)
    text = await call(plugin, host, name, params)
    assert text.startswith("Error: key events are off for this bot: no event types")
    assert "event_types" in text
    assert people(plugin) == []


async def test_the_tools_need_the_memory_kb_in_the_pipeline(tmp_path, host):
    plug = await started_plugin(host, tmp_path / "m", event_types=TYPES)
    try:
        text = await call(plug, host, "open_event", {"type": "appointment", "summary": "x"})
        assert text == "Error: no memory knowledge base configured. Create one first."
        assert people(plug) == []
    finally:
        plug.memory.close()


# --------------------------------------------------------------------------- types

near_miss = st.one_of(
    st.sampled_from(["appointment", "order_issue", "complaint"]).flatmap(
        lambda name: st.sampled_from(
            [name.upper(), name.title(), f" {name}", f"{name} ", name[:-1], name + "s", f"{name}:"]
        )
    ),
    st.sampled_from(["appointments, complaint", "预约", "Order_Issue", "order-issue", "*"]),
    st.text(min_size=1, max_size=20).filter(
        lambda s: s not in ("appointment", "order_issue", "complaint")
    ),
)


@settings(max_examples=25, deadline=None)
@given(wrong=near_miss)
def test_a_type_not_in_the_dictionary_is_refused_with_the_whole_list(wrong):
    async def scenario(root: Path) -> tuple[str, list[Path]]:
        host = FakeHost(embedder=TINY)  # per example; the subject is not the model
        host.register_memory_kb(KB)
        plug = await started_plugin(host, root, event_types=TYPES)
        try:
            text = await call(plug, host, "open_event", {"type": wrong, "summary": "x"})
            return text, people(plug)
        finally:
            plug.memory.close()

    with tempfile.TemporaryDirectory() as tmp:
        text, written = asyncio.run(scenario(Path(tmp) / "m"))
    assert text.startswith("Error: event type ") and text.endswith(f"use exactly one of: {NAMES}")
    assert written == []


async def test_a_missing_or_non_text_type_is_refused_with_the_list(on, host):
    for params in ({"summary": "x"}, {"type": 3, "summary": "x"}, {"type": ["a"], "summary": "x"}):
        text = await call(on, host, "open_event", params)
        assert text.startswith("Error:") and text.endswith(f"use exactly one of: {NAMES}"), text
    assert people(on) == []


async def test_a_summary_is_required(on, host):
    text = await call(on, host, "open_event", {"type": "complaint", "summary": "  "})
    assert text == "Error: summary is required: say what happened in a sentence"
    assert people(on) == []


# --------------------------------------------------------------------------- whose events


async def test_update_and_close_reach_only_the_speakers_own_events(on, host):
    alice_event = await opened_id(on, host)
    host.query_vars.update(sender_id="u2", sender_name="Bob")
    # the model cannot name another person: a sender parameter is simply not read
    for name, params in (
        ("update_event", {"id": alice_event, "note": "hijack", "sender_id": "u1"}),
        ("close_event", {"id": alice_event, "resolution": "hijack", "speaker": "u1"}),
    ):
        text = await call(on, host, name, params)
        assert text.startswith(f"Error: no event {alice_event} for this person"), text
    assert "hijack" not in people(on)[0].read_text(encoding="utf-8")
    assert await call(on, host, "list_events", {"status": "all"}) == (
        "No key events of the current speaker (status: all).\nEvent types: appointment (a visit "
        "booked for a date); order_issue (a problem with an order); complaint (the person is "
        "unhappy about something)"
    )


async def test_note_then_close_then_the_list_says_how_it_ended(on, host):
    eid = await opened_id(on, host)
    text = await call(on, host, "update_event", {"id": eid, "note": "moved to Wednesday"})
    assert text == f"Noted on key event {eid} (appointment, still open): moved to Wednesday"
    text = await call(on, host, "close_event", {"id": eid, "resolution": "went fine"})
    assert text == f"Closed key event {eid} (appointment): went fine"
    text = await call(on, host, "update_event", {"id": eid, "note": "late news"})
    assert text.startswith(f"Error: event {eid} is already closed (went fine)")
    assert (await call(on, host, "list_events", {})).startswith(
        "No key events of the current speaker (status: open)."
    )
    closed = await call(on, host, "list_events", {"status": "closed"}, kind="person", launcher="u1")
    assert (
        closed.splitlines()[0]
        == "1 key event(s) of the current speaker (status: closed), most recently updated first:"
    )
    assert f"id:{eid}" in closed and "<resolution>went fine</resolution>" in closed
    assert (await call(on, host, "list_events", {"status": "bogus"})) == (
        "Error: status must be one of open, closed, all."
    )


async def test_no_sender_no_event(on, host):
    host.query_vars["sender_id"] = "  "
    text = await call(on, host, "open_event", {"type": "complaint", "summary": "x"})
    assert text.startswith("Error: key events belong to a person")
    assert people(on) == []


# --------------------------------------------------------------------------- settings


def test_the_event_type_setting_reads_items_and_refuses_what_it_cannot_use():
    from memvault_plugin.memory_service import PluginSettings, SettingsError

    s = PluginSettings.from_config({"event_types": [*TYPES, "  ", "预约: 中文也行"]})
    assert [t.name for t in s.event_types] == ["appointment", "order_issue", "complaint", "预约"]
    assert s.event_types[3].description == "中文也行" and s.events_injected == 5
    assert PluginSettings.from_config({}).event_types == ()
    assert PluginSettings.from_config({"event_types": "a: x\nb"}).event_types[1].name == "b"
    for bad, words in (
        (["order issue: spaces"], "is not a valid name"),
        (["a: x", "a: y"], "listed twice"),
        (["_x: leading underscore"], "is not a valid name"),
        ([3], "must be text"),
        ({"a": "x"}, "must be a list"),
    ):
        with pytest.raises(SettingsError, match=words):
            PluginSettings.from_config({"event_types": bad})
    with pytest.raises(SettingsError, match="events_injected must be from 0 to 20"):
        PluginSettings.from_config({"events_injected": 21})
    assert PluginSettings.from_config({"events_injected": 0}).events_injected == 0


def test_the_manifest_offers_both_settings_in_both_languages():
    import yaml

    manifest = REPO / "plugin" / "manifest.yaml"
    config = {c["name"]: c for c in yaml.safe_load(manifest.read_text("utf-8"))["spec"]["config"]}
    assert (
        config["event_types"]["type"] == "array[string]" and config["event_types"]["default"] == []
    )
    assert config["events_injected"]["default"] == 5
    for name in ("event_types", "events_injected"):
        languages = set(config[name]["label"])
        assert languages == set(config[name]["description"]) and {"en_US", "zh_Hans"} <= languages
    tools = REPO / "plugin" / "components" / "tools"
    for name in CLASSES:
        spec = yaml.safe_load((tools / f"{name}.yaml").read_text("utf-8"))
        assert (
            spec["metadata"]["name"] == name and spec["execution"]["python"]["path"] == f"{name}.py"
        )
