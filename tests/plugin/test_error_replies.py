"""Any MemVaultError, of any kind, raised from inside a tool or a `!memory` subcommand
becomes its one-line reply (the model gets `Error: <the message>`, the chat `[Memory]
<the message>`), never an exception the host turns into a traceback. Parametrized over
every class of the hierarchy as found (tests/helpers/error_kinds), so a new kind is
covered the day it is written. Through the SDK's Tool.call / Command with the FAKE host."""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from tests.helpers.error_kinds import error_kinds, make
from tests.plugin.fakehost import FakeHost, started_plugin
from vault.errors import MemVaultError, NotFoundError

KB = "kb-memvault"
EVENT = "evt_20261130_aaaaaa"
# tool -> (its class, parameters that pass its own checks, what to make raise: an object
# path from the plugin and the name on it of the service call the tool makes)
TOOLS: dict[str, tuple[str, dict[str, Any], tuple[str, str]]] = {
    "remember": ("Remember", {"content": "x"}, ("vault", "remember")),
    "forget": ("Forget", {"episode_id": "ep_20261130_aaaaaa"}, ("vault", "forget")),
    "update_profile": (
        "UpdateProfile",
        {"field": "notes", "action": "set", "value": "x"},
        ("vault", "update_profile"),
    ),
    # Engine.judged: where every search of the engine runs (search, and indexer.recall.find
    # the tool recalls through to say why it found nothing).
    "recall_memory": ("RecallMemory", {"query": "lockers"}, ("engine", "judged")),
    "open_event": (
        "OpenEvent",
        {"type": "appointment", "summary": "x"},
        ("module", "open_event"),
    ),
    "update_event": ("UpdateEvent", {"id": EVENT, "note": "x"}, ("module", "update_event")),
    "close_event": ("CloseEvent", {"id": EVENT, "resolution": "x"}, ("module", "close_event")),
    # listing goes through event_tools (the speaker alone, or their linked person's ids)
    "list_events": ("ListEvents", {}, ("memvault_plugin.event_tools", "load_events")),
}
MESSAGE = "the thing it needs refused: fix that, then retry"
# Where a tool words one kind itself, on purpose: forget says nothing was deleted (upstream
# reports success either way, and the model would claim a deletion that did not happen).
OWN_WORDS = {
    ("forget", NotFoundError): (
        "Error: no episode ep_20261130_aaaaaa in this chat's memory; nothing was deleted. "
        "Use recall_memory to find the id."
    ),
}


@pytest.fixture
async def plugin(tmp_path, monkeypatch, tiny_embedder):
    from memvault_plugin import memory_service

    # The TEST FAKE embedder: the subject here is the error path, not the model.
    monkeypatch.setattr(memory_service, "default_embedder", lambda: tiny_embedder)
    host = FakeHost()
    host.register_memory_kb(KB)
    plug = await started_plugin(
        host, tmp_path / "memory", git_autocommit=False, event_types=["appointment: a visit"]
    )
    yield plug, host
    plug.memory.close()


def raising(exc: MemVaultError):
    def fail(*args: Any, **kwargs: Any) -> Any:
        raise exc

    return fail


def break_call(monkeypatch, plug, name: str, exc: MemVaultError) -> None:
    _, _, (where, attr) = TOOLS[name]
    vault, engine = plug.memory.require()
    module = f"components.tools.{name}" if where == "module" else where
    target = {"vault": vault, "engine": engine}.get(where) or importlib.import_module(module)
    monkeypatch.setattr(target, attr, raising(exc))


@pytest.mark.parametrize("cls", error_kinds(), ids=lambda c: c.__qualname__)
async def test_every_tool_answers_any_memvault_error_with_its_message(plugin, monkeypatch, cls):
    plug, host = plugin
    wrong = []
    for name, (class_name, params, _) in TOOLS.items():
        exc = make(cls, MESSAGE)
        with monkeypatch.context() as m:
            break_call(m, plug, name, exc)
            tool = getattr(importlib.import_module(f"components.tools.{name}"), class_name)()
            tool.plugin = plug
            try:
                reply = await tool.call(params, host.session("group", "123"), 7)
            except MemVaultError as escaped:  # the failure this test exists for, named
                wrong.append(f"{name}: {type(escaped).__name__} escaped the tool")
                continue
        own = [
            text
            for (tool, kind), text in OWN_WORDS.items()
            if tool == name and isinstance(exc, kind)
        ]
        if reply != (own[0] if own else f"Error: {exc}"):
            wrong.append(f"{name}: {reply!r}")
    assert wrong == [], wrong


@pytest.mark.parametrize("cls", error_kinds(), ids=lambda c: c.__qualname__)
async def test_the_memory_command_answers_any_memvault_error_with_its_message(
    plugin, monkeypatch, cls
):
    from components.commands.memory import Memory

    plug, host = plugin
    exc = make(cls, MESSAGE)
    _, engine = plug.memory.require()
    monkeypatch.setattr(engine, "search", raising(exc))
    cmd = Memory()
    cmd.plugin = plug
    replies = [r.text async for r in cmd._execute(host.command("!memory search lockers"))]
    assert len(replies) == 1, replies
    reply = replies[0]
    assert reply.startswith(f"[Memory] {exc}"), reply  # the message: what to do
    assert "\n" not in reply and "Traceback" not in reply and "failed (" not in reply


async def test_every_tool_says_memory_is_unavailable_when_it_did_not_open(plugin):
    """The vault or index that did not open is MemoryUnavailableError (not a bare
    RuntimeError): each tool answers with it, and names the health warning."""
    plug, host = plugin
    engine, plug.memory.engine = plug.memory.engine, None
    plug.memory.warnings.append("index cannot be opened (disk gone)")
    replies = {}
    try:
        for name, (class_name, params, _) in TOOLS.items():
            tool = getattr(importlib.import_module(f"components.tools.{name}"), class_name)()
            tool.plugin = plug
            replies[name] = await tool.call(params, host.session("group", "123"), 7)
    finally:
        plug.memory.engine = engine  # the fixture closes it
    wanted = "Error: memory is unavailable: index cannot be opened (disk gone)"
    assert replies == dict.fromkeys(TOOLS, wanted)


@pytest.mark.parametrize("cls", error_kinds(), ids=lambda c: c.__qualname__)
async def test_a_kb_upload_fails_with_the_message_of_any_memvault_error(plugin, monkeypatch, cls):
    """The knowledge base's ingest answers FAILED with the message (before: only bad input;
    a read-only vault or a full disk escaped to the host)."""
    from langbot_plugin.api.entities.builtin.rag.enums import DocumentStatus
    from memvault_plugin import kb_upload

    from tests.plugin.knowledge.test_knowledge_engine import engine_for, upload

    plug, host = plugin
    exc = make(cls, MESSAGE)
    monkeypatch.setattr(kb_upload, "ingest_document", raising(exc))
    result = await engine_for(plug).ingest(upload(host, "notes.md", b"a note"))
    assert (result.status, result.error_message) == (DocumentStatus.FAILED, str(exc))
