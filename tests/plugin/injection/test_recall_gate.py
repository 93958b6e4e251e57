"""The message gate (setting `recall_gate`) on every automatic recall path a user meets,
through the fake host over a real vault, the real embedding model and real indexes: what the
model's request gets, what the KB's retrieve serves, what the snapshot and `!memory` say,
what `!memory search` shows, and the setting itself (issue 21, item 2).

The chat below is bilingual and holds everyday-chat turns, as an imported history does:
before the gate, "thanks!" brought "Thanks a lot, everyone!" into the prompt (relevance
0.91 with the floor at 0.44), "帮我翻译一下这句话" brought "帮我翻译一下这段话" (1.0)."""

from __future__ import annotations

import json

import pytest
import yaml
from langbot_plugin.api.entities import events
from langbot_plugin.api.entities.builtin.rag.context import RetrievalContext
from memvault_plugin import live_settings
from memvault_plugin.memory_service import PluginSettings, SettingsError

from indexer.retrieval.search_query import SearchQuery
from indexer.retrieval.verdict import verdict_words
from tests.plugin.commands.test_command import command, say
from tests.plugin.conftest import PLUGIN_DIR
from tests.plugin.fakehost import started_plugin
from tests.plugin.injection.test_injector import KB, fenced, injected, injector_for, remember
from tests.plugin.tools.test_tools import call
from vault.writes.profile_edit import ProfileEdit
from vault.writes.snapshots import flush, read_snapshot

# tests/plugin/conftest.py `plugin_embedder`: what is recalled here is what the model finds.
EMBEDDER = "model"

# indexer.retrieval.verdict.floor_words at the default floor: the words every surface shows.
FLOOR_WORDS = "floor 0.44 for a single message (runners-up 0.33)"

SESSION = "group_123"  # the chat of the fake host's commands and tools
# (speaker id, name, text): facts in English and Chinese, and everyday-chat turns.
CHAT = (
    ("u1", "Alice", "Alice is allergic to peanuts"),
    ("u2", "Bob", "Bob's favourite tea is oolong"),
    ("u1", "Alice", "The book club meets on Thursday at 7 pm in the library"),
    ("u2", "Bob", "Bob rides a red bicycle to work every day"),
    ("u3", "李伟", "李伟的生日是十月八号"),
    ("u4", "王芳", "王芳下周二要去医院看牙医"),
    ("u4", "王芳", "王芳养了一只叫豆豆的橘猫"),
    ("u2", "Bob", "Thanks a lot, everyone!"),
    ("u4", "王芳", "大家好，你好你好"),
    ("u4", "王芳", "哈哈哈哈，笑死我了"),
    ("u2", "Bob", "what's 12 times 14?"),
    ("u3", "李伟", "帮我翻译一下这段话"),
)
# (message, the gate's reason): each matches an everyday-chat turn above when not gated.
EVERYDAY = (
    ("你好", "greeting"),
    ("thanks!", "thanks"),
    ("哈哈哈", "laughter"),
    ("what's 17 times 23?", "arithmetic"),
    ("帮我翻译一下这句话", "translation"),
)
# (question, words of the memory it is about): across languages (USE cosine 0.62 / 0.69).
ACROSS = (
    ("When is Wang Fang's dentist appointment?", "王芳下周二要去医院看牙医"),
    ("Bob最喜欢什么茶？", "Bob's favourite tea is oolong"),
)


def populate(plugin) -> None:
    for sid, name, text in CHAT:
        remember(plugin, text, session=SESSION, speaker=(sid, name))


@pytest.fixture
def chat(plugin, host):
    host.register_memory_kb(KB)
    populate(plugin)
    return plugin


async def turn(plugin, host, text: str, query_id: int = 7):
    """One message through the injector, inside an invocation as the runtime runs it."""
    host.query_vars["user_message_text"] = text
    ctx = host.prompt_event(SESSION, query_id)
    (handler,) = injector_for(plugin).registered_handlers[events.PromptPreProcessing]
    await host.emit(handler, ctx)
    return ctx


def request(ctx) -> str:
    """Everything the model's request gets from the injector."""
    return json.dumps(
        [m.model_dump() for m in ctx.event.prompt + ctx.event.default_prompt], ensure_ascii=False
    )


def snapshot(plugin) -> dict:
    flush()  # the snapshot is written after the turn (vault.writes.snapshots): wait for it
    snap = read_snapshot(plugin.memory.settings.vault_path, plugin.memory.scope(SESSION, "bot-1"))
    assert snap is not None
    return snap


async def retrieve(plugin, query: str):
    from components.knowledge_engine.memvault import MemVaultKnowledgeEngine

    kb = MemVaultKnowledgeEngine()
    kb.plugin = plugin
    settings = {"session_name": SESSION, "bot_uuid": "bot-1", "top_k": 5, "sender_id": "u1"}
    return await kb.retrieve(
        RetrievalContext(query=query, knowledge_base_id=KB, retrieval_settings=settings)
    )


# --------------------------------------------------------------------------- injection


@pytest.mark.parametrize(("message", "reason"), EVERYDAY)
async def test_everyday_chat_injects_no_episode(chat, host, message, reason):
    ctx = await turn(chat, host, message)
    assert injected(ctx)[1] == "", "no memory block"
    sent = request(ctx)
    assert [text for _, _, text in CHAT if text in sent] == []
    assert host.query_vars["_ltm_context"]["episodes"] == []
    snap = snapshot(chat)
    assert snap["gate"] == f"gate: skipped: {reason}"
    assert snap["floor"] == FLOOR_WORDS
    assert snap["recalled_ids"] == [] and snap["episode_ids"] == []


async def test_profiles_and_critical_memories_are_not_gated(chat, host):
    vault, _ = chat.memory.require()
    scope = chat.memory.scope(SESSION, "bot-1")
    vault.update_profile(ProfileEdit(scope, "notes", "add", "This group plans the spring release"))
    critical = remember(chat, "The fire exit code is 4512", session=SESSION, priority="critical")
    ctx = await turn(chat, host, "thanks!")
    system, memories = injected(ctx)
    assert "This group plans the spring release" in system
    assert [line for line in fenced(memories) if "fire exit code is 4512" in line]
    assert "Thanks a lot, everyone!" not in request(ctx)
    snap = snapshot(chat)
    assert snap["gate"] == "gate: skipped: thanks"
    assert snap["critical_ids"] == [critical.id] and snap["recalled_ids"] == []


@pytest.mark.parametrize(("question", "words"), ACROSS)
async def test_a_question_across_languages_passes_the_gate_and_is_injected(
    chat, host, question, words
):
    ctx = await turn(chat, host, question)
    lines = fenced(injected(ctx)[1])
    assert words in lines[0], lines
    snap = snapshot(chat)
    assert snap["gate"].startswith("gate: passed: "), snap["gate"]


async def test_a_short_question_naming_a_person_reaches_retrieval(chat, host):
    ctx = await turn(chat, host, "Alice?")
    snap = snapshot(chat)
    assert snap["gate"] == "gate: passed: names Alice"
    lines = fenced(injected(ctx)[1])
    assert lines and all("Alice" in line for line in lines), lines
    assert "allergic to peanuts" in request(ctx)


async def test_with_the_gate_off_a_greeting_goes_through_the_floor_as_before(tmp_path, host):
    host.register_memory_kb(KB)
    plugin = await started_plugin(host, tmp_path / "memory", recall_gate="off")
    try:
        populate(plugin)
        # The runner's retrieve (before any injector turn) follows the same setting.
        served = [e.metadata["content"] for e in (await retrieve(plugin, "thanks!")).results]
        assert served and served[0] == "Thanks a lot, everyone!"
        ctx = await turn(plugin, host, "thanks!")
        snap = snapshot(plugin)
        assert snap["gate"] == "gate: off"
        _, engine = plugin.memory.require()
        # The same search without the gate (the plugin's floor, top_k and speaker).
        found = engine.search(
            SearchQuery(
                "thanks!",
                plugin.memory.scope(SESSION, "bot-1"),
                top_k=plugin.memory.settings.top_k,
                speaker_id="u1",
            ),
        )
        passed = [r.doc.episode_id for r in found if r.relevance.passed]
        assert passed and snap["recalled_ids"] == passed
        assert "Thanks a lot, everyone!" in fenced(injected(ctx)[1])[0]
        reply = (await say(command(plugin), host, "!memory search thanks!")).splitlines()
        assert reply[:2] == [
            f"[Memory] gate: off; {FLOOR_WORDS}",
            f"[Memory] Found {len(passed)} episode(s):",
        ]
    finally:
        plugin.memory.close()


async def test_a_chat_without_memories_still_records_why_nothing_was_recalled(plugin, host):
    host.register_memory_kb(KB)
    await turn(plugin, host, "你好")
    snap = snapshot(plugin)
    assert (snap["gate"], snap["recalled_ids"]) == ("gate: skipped: greeting", [])
    await turn(plugin, host, "Alice, when is my dentist appointment?", query_id=8)
    assert snapshot(plugin)["gate"].startswith("gate: passed: ")


async def test_recall_gate_off_set_in_langbot_applies_at_the_next_message(chat, host):
    host.config = dict(chat.config)
    assert injected(await turn(chat, host, "thanks!"))[1] == ""
    host.config = {**chat.config, "recall_gate": "off"}
    ctx = await turn(chat, host, "thanks!", query_id=8)
    assert chat.memory.settings.recall_gate == "off"
    assert "Thanks a lot, everyone!" in request(ctx)
    assert snapshot(chat)["gate"] == "gate: off"


# --------------------------------------------------------------------------- retrieve, tool


async def test_the_runners_retrieve_is_gated_and_the_recall_tool_is_not(chat, host):
    # No injector turn before it: the runner's own retrieve searches for the message.
    assert (await retrieve(chat, "thanks!")).results == []
    assert (await retrieve(chat, "帮我翻译一下这句话")).results == []
    about = await retrieve(chat, "When is Wang Fang's dentist appointment?")
    assert "王芳下周二要去医院看牙医" in about.results[0].metadata["content"]
    # The model asked: recall_memory searches whatever the query looks like.
    assert "Thanks a lot, everyone!" in await call(chat, host, "recall_memory", {"query": "thanks"})


# --------------------------------------------------------------------------- what people see


async def test_memory_search_shows_the_gates_verdict_and_marks_what_it_kept_out(chat, host):
    reply = await say(command(chat), host, "!memory search 你好")
    lines = reply.splitlines()
    assert lines[0] == f"[Memory] gate: skipped: greeting; {FLOOR_WORDS}"
    assert lines[1] == "[Memory] Found 1 episode(s), none injected (the gate skipped this message):"
    assert "大家好，你好你好" in lines[2] and ", not injected)" in lines[2]
    # The same words as the engine's explain gives every other surface.
    _, engine = chat.memory.require()
    found = engine.search(SearchQuery("你好", chat.memory.scope(SESSION, "bot-1"), gate=True))
    assert lines[0] == f"[Memory] {verdict_words([r.explain for r in found])}"

    passed = (await say(command(chat), host, "!memory search Alice?")).splitlines()
    assert passed[0] == f"[Memory] gate: passed: names Alice; {FLOOR_WORDS}"
    assert passed[1].startswith("[Memory] Found ") and "not injected" not in "".join(passed)


async def test_memory_shows_the_last_injections_gate_line(chat, host):
    await turn(chat, host, "哈哈哈")
    flush()
    overview = await say(command(chat), host, "!memory")
    assert f"  Recall: gate: skipped: laughter; {FLOOR_WORDS}" in overview


# --------------------------------------------------------------------------- the setting


def test_the_setting_defaults_to_on_and_refuses_what_cannot_work():
    manifest = yaml.safe_load((PLUGIN_DIR / "manifest.yaml").read_text("utf-8"))
    (entry,) = [c for c in manifest["spec"]["config"] if c["name"] == "recall_gate"]
    assert (entry["type"], entry["default"]) == ("select", "on")
    assert [o["name"] for o in entry["options"]] == ["on", "off"]
    assert PluginSettings.from_config({}).recall_gate == "on"
    assert PluginSettings.from_config({"recall_gate": ""}).gate is True
    assert PluginSettings.from_config({"recall_gate": " OFF "}).gate is False
    assert PluginSettings.from_config({"recall_gate": False}).recall_gate == "off"
    with pytest.raises(SettingsError, match="recall_gate must be on or off .got 'sometimes'"):
        PluginSettings.from_config({"recall_gate": "sometimes"})
    off = PluginSettings.from_config({"recall_gate": "off"})
    assert "recall_gate=off" in live_settings.summary(off)
    assert live_settings.drift({"recall_gate": "off"}, PluginSettings()) == [
        "recall_gate (LangBot: off, in effect: on)"
    ]
