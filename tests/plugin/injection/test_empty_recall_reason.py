"""No silent empty recall (issue 24, item 6): when a turn's recall brings nothing, the
injection snapshot, `!memory` and the Memory Console's /injection say why, with the numbers
the search itself used; the recall_memory tool says the same in one line. One test per way
recall comes back empty, through the fake host over a real vault and real indexes."""

from __future__ import annotations

import asyncio
import re
import threading

import pytest

from indexer.retrieval.search_query import SearchQuery
from tests.helpers.embedder import TinyEmbedder
from tests.plugin.fakehost import FakeHost, started_plugin
from tests.plugin.injection.test_injection_snapshot_truth import console_injection, overview
from tests.plugin.injection.test_injector import KB, injected, profile, remember
from tests.plugin.injection.test_recall_gate import SESSION, snapshot, turn
from tests.plugin.tools.test_tools import call
from vault.writes.snapshots import flush, read_snapshot

# tests/plugin/conftest.py `plugin_embedder`: the floor's numbers are the model's.
EMBEDDER = "model"

CHAT = (
    ("u1", "Alice", "Alice's flight to Tokyo leaves on Tuesday at 9"),
    ("u2", "Bob", "Bob's favourite tea is oolong"),
    ("u1", "Alice", "The book club meets on Thursday at 7 pm in the library"),
)


@pytest.fixture
def chat(plugin, host):
    host.register_memory_kb(KB)
    for sid, name, text in CHAT:
        remember(plugin, text, session=SESSION, speaker=(sid, name))
    return plugin


def lines(text: str) -> list[str]:
    return text.splitlines()


async def said(plugin, host) -> tuple[dict, str, dict]:
    """(the snapshot, `!memory`'s reply, the console's /injection) after the last turn."""
    snap = snapshot(plugin)
    return snap, await overview(plugin, host), await console_injection(plugin)


async def test_a_greeting_says_the_gate_skipped_it(chat, host):
    ctx = await turn(chat, host, "hi")
    assert injected(ctx)[1] == ""
    snap, text, shown = await said(chat, host)
    assert snap["why"]["kind"] == "gate" and snap["why"]["detail"] == "greeting"
    assert snap["nothing_injected"]["words"] == "gate (greeting)"
    assert "  Nothing injected: gate (greeting)" in lines(text)
    assert shown["nothing_injected"] == snap["nothing_injected"]


async def test_an_unrelated_question_names_the_best_relevance_and_the_floor(chat, host):
    question = "when is the dentist appointment?"
    await turn(chat, host, question)
    snap, text, _ = await said(chat, host)
    why = snap["nothing_injected"]
    assert why["kind"] == "floor" and why["floor"] == 0.44
    # The number is the search's own: the best relevance of this very search.
    _, engine = chat.memory.require()
    ask = SearchQuery(question, chat.memory.scope(SESSION, "bot-1"), top_k=3, speaker_id="u1")
    best = max(r.relevance.value for r in engine.search(ask))
    assert why["best"] == round(best, 4) and best < 0.44
    assert f"  Nothing injected: below the floor (best {best:.2f} < 0.44)" in lines(text)


async def test_a_chat_without_memories_says_so(plugin, host):
    host.register_memory_kb(KB)
    remember(plugin, "Carol's codename is Falcon", session="group_999")  # another chat's
    await turn(plugin, host, "what is Carol's codename?")
    snap, text, _ = await said(plugin, host)
    assert snap["nothing_injected"]["words"] == "chat has no memories"
    assert "  Nothing injected: chat has no memories" in lines(text)


async def test_a_chat_whose_memories_are_all_archived_says_so(chat, host):
    vault, _ = chat.memory.require()
    scope = chat.memory.scope(SESSION, "bot-1")
    for stored in vault.load_episodes(scope)[0]:
        vault.archive(scope, stored.episode.id)
    await turn(chat, host, "when does Alice fly to Tokyo?")
    snap, text, _ = await said(chat, host)
    assert snap["why"]["kind"] == "no_active" and snap["why"]["count"] == 3
    expected = "chat has no active memories (3 archived, superseded or expired)"
    assert f"  Nothing injected: {expected}" in lines(text)


async def test_a_message_without_text_says_there_was_nothing_to_search(chat, host):
    await turn(chat, host, "   ")
    snap, text, _ = await said(chat, host)
    assert snap["why"]["kind"] == "no_text"
    assert "  Nothing injected: the message has no text to search" in lines(text)


async def test_critical_memories_in_the_block_say_recall_itself_found_nothing(chat, host):
    remember(chat, "The fire exit code is 4512", session=SESSION, priority="critical")
    ctx = await turn(chat, host, "thanks!")
    assert "fire exit code is 4512" in injected(ctx)[1]
    snap, text, _ = await said(chat, host)
    assert snap["nothing_injected"] is None and snap["why"]["words"] == "gate (thanks)"
    assert "  Nothing recalled: gate (thanks)" in lines(text)
    assert not [line for line in lines(text) if line.startswith("  Nothing injected")]


async def test_a_memory_that_does_not_fit_the_budget_says_so(tmp_path, host):
    host.register_memory_kb(KB)
    plugin = await started_plugin(host, tmp_path / "memory", injection_chars=200)
    try:
        profile(plugin, "notes", "The group plans the spring release. " * 4, session=SESSION)
        long = "Alice's flight to Tokyo leaves on Tuesday at 9 from terminal 2. " * 4
        remember(plugin, long, session=SESSION)
        await turn(plugin, host, "when does Alice's flight to Tokyo leave?")
        snap, text, _ = await said(plugin, host)
        assert snap["recalled_ids"] and snap["episode_ids"] == []
        assert snap["why"] is None
        assert (
            snap["nothing_injected"]["words"]
            == "nothing fit the budget (1 recalled, 200 characters)"
        )
        assert "  Nothing injected: nothing fit the budget (1 recalled, 200 characters)" in lines(
            text
        )
    finally:
        plugin.memory.close()


async def test_a_search_that_fails_records_the_error_and_the_turn_goes_on(chat, host, monkeypatch):
    _, engine = chat.memory.require()

    def broken(*args, **kwargs):
        raise OSError("disk I/O error")

    monkeypatch.setattr(engine.text, "search", broken)
    ctx = await turn(chat, host, "when does Alice fly to Tokyo?")
    assert injected(ctx) == ("", "")  # memory must never break a turn: it goes on without
    snap, text, _ = await said(chat, host)
    assert snap["nothing_injected"]["words"] == "recall failed (OSError: disk I/O error)"
    assert "  Nothing injected: recall failed (OSError: disk I/O error)" in lines(text)


async def test_an_index_that_cannot_open_is_named_in_the_snapshot(tmp_path, host):
    host.register_memory_kb(KB)
    root = tmp_path / "memory"
    first = await started_plugin(host, root)
    remember(first, "Alice's flight to Tokyo leaves on Tuesday at 9", session=SESSION)
    first.memory.close()
    index = root / ".memvault" / "index"
    for path in sorted(index.rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    index.rmdir()
    index.write_text("not a folder")  # a broken state: the index cannot be opened
    plugin = await started_plugin(host, root)
    try:
        assert plugin.memory.engine is None and plugin.memory.vault is not None
        ctx = await turn(plugin, host, "when does Alice fly to Tokyo?")
        assert injected(ctx) == ("", "")
        flush()
        snap = read_snapshot(root, plugin.memory.scope(SESSION, "bot-1"))
        why = snap["nothing_injected"]
        assert why["kind"] == "unavailable"
        assert why["words"].startswith("index unavailable (memory is unavailable: index cannot")
        shown = await console_injection(plugin)  # the console page works on the vault alone
        assert shown["nothing_injected"] == why
    finally:
        plugin.memory.close()


class HeldEmbedder(TinyEmbedder):
    """The test embedder, holding the start-up sync's embedding of the chat's memories until
    released: a vault of thousands of files being indexed after a start, made deterministic."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.held = threading.Event()

    def embed_documents(self, texts):
        if any("Tokyo" in t for t in texts):
            self.held.set()
            assert self.release.wait(60)
        return super().embed_documents(texts)


async def started_watching(host: FakeHost, root, embedder):
    """The plugin as the runtime starts it: its watcher reconciles the vault in a thread
    (tests/plugin/fakehost.started_plugin reconciles first and starts no watcher)."""
    import main
    from memvault_plugin.live_settings import SettingsRecord

    plugin = main.MemVaultPlugin()
    plugin.plugin_runtime_handler = host
    plugin.config = {"vault_path": str(root)}
    plugin.memory = main.MemoryService(main.PluginSettings.from_config(plugin.config))
    plugin.memory.record = SettingsRecord(applied=dict(plugin.config), held=dict(plugin.config))
    await asyncio.to_thread(plugin.memory.start, embedder, watch=True)
    return plugin


async def test_recall_during_the_start_up_sync_says_the_index_is_rebuilding(tmp_path):
    host = FakeHost(embedder=TinyEmbedder())
    host.register_memory_kb(KB)
    root = tmp_path / "memory"
    first = await started_plugin(host, root)
    remember(first, "Alice's flight to Tokyo leaves on Tuesday at 9", session=SESSION)
    first.memory.close()
    # Derived state gone (index, embedding cache): the next start rebuilds it from the files.
    (root / ".memvault").rename(tmp_path / "old-state")

    embedder = HeldEmbedder()
    plugin = await started_watching(host, root, embedder)
    try:
        assert await asyncio.to_thread(embedder.held.wait, 30)
        await turn(plugin, host, "when does Alice fly to Tokyo?")
        snap = snapshot(plugin)
        assert snap["nothing_injected"]["words"] == (
            "index rebuilding (the start-up sync has not finished)"
        )
        text = await overview(plugin, host)
        expected = "  Nothing injected: index rebuilding (the start-up sync has not finished)"
        assert expected in lines(text)
    finally:
        embedder.release.set()
        plugin.memory.close()


# --------------------------------------------------------------------------- the tool


async def test_the_tool_says_why_in_one_line(chat, host):
    below = await call(chat, host, "recall_memory", {"query": "when is the dentist appointment?"})
    assert re.fullmatch(
        r"No relevant memories found: below the floor \(best 0\.\d\d < 0\.44\)\.", below
    ), below
    filtered = await call(
        chat, host, "recall_memory", {"query": "Tokyo flight", "time_after": "2999-01-01"}
    )
    assert filtered == (
        "No relevant memories found: none of the 1 relevant memories matches the filters "
        "(time_after)."
    )
    tagged = await call(chat, host, "recall_memory", {"query": "Tokyo flight", "tags": ["x"]})
    assert tagged == "No relevant memories found: no memory matches the filters (tags)."
    archived = await call(chat, host, "recall_memory", {"query": "tea", "status": "archived"})
    assert archived == (
        "No relevant memories found: chat has no archived memories (3 with another status)."
    )
    listed = await call(chat, host, "recall_memory", {"source": "console"})
    assert listed == "No relevant memories found: no memory matches the filters (source)."
