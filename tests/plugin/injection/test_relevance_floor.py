"""The relevance floor on every recall path a user meets, through the fake host over a real
vault, the real embedding model and real indexes: automatic injection (what the model's
request gets), the KB's retrieve, recall_memory, !memory search, the plugin setting, and one
relevance number on `!memory search`, the console and `memvault search --explain`.

Before the floor, every message filled its top-k slots whatever it said: "Tokyo flight?" in
a chat without any flight got the chat's codename injected."""

from __future__ import annotations

import dataclasses
import json
import re
import time

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langbot_plugin.api.entities.builtin.rag.context import RetrievalContext
from memvault_plugin.memory_service import PluginSettings, SettingsError

from console.api import dispatch
from console.context import ConsoleContext
from indexer.injection.turn import TurnInput, recall
from indexer.retrieval.relevance import DEFAULT_FLOOR
from indexer.retrieval.search_query import SearchQuery
from tests.cli.test_cli import run_json
from tests.plugin.commands.test_command import command, say
from tests.plugin.conftest import PLUGIN_DIR
from tests.plugin.injection.test_injector import KB, fenced, injected, profile, remember, turn
from tests.plugin.recall_parse import parse as parse_recall
from tests.plugin.test_console_page import api
from tests.plugin.tools.test_tools import call
from vault.writes.new_episode import NewEpisode

# tests/plugin/conftest.py `plugin_embedder`: what is recalled here is what the model finds.
EMBEDDER = "model"

NONE = "No relevant memories found."  # `!memory search` (the tool's line says why: BELOW)
# The tool's one line when every candidate misses the floor: the best relevance and the floor.
BELOW = re.compile(
    r"No relevant memories found: below the floor \(best (\d\.\d\d) < (\d\.\d\d)\)\."
)
# A populated group chat (session group_A, bot-1): none of it is about flights, greetings
# or arithmetic.
CHAT = (
    ("u1", "Alice", "Group B secret codename is Falcon"),
    ("u2", "Li Wei", "李伟对花生过敏，点餐时要注意"),
    ("u3", "Bob", "Bob's favourite tea is oolong"),
    ("u1", "Alice", "The book club meets on Thursday at 7 pm in the library"),
    ("u2", "Li Wei", "读书会每周四晚上七点开始"),
    ("u3", "Bob", "The quarterly report is due on March 31"),
    ("u1", "Alice", "Carol's birthday party is on Saturday at her flat"),
    ("u3", "Bob", "Bob rides a red bicycle to work every day"),
)
UNRELATED = ("Tokyo flight?", "hi", "what's 17 times 23?")
# (question, words of the one memory it is about)
RELATED = (
    ("what is the secret codename of group B?", "codename is Falcon"),
    ("when does the book club meet?", "book club meets on Thursday"),
    ("what tea does Bob like", "oolong"),
)


def populate(plugin, session: str = "group_A") -> None:
    for sid, name, text in CHAT:
        remember(plugin, text, session=session, speaker=(sid, name))
    profile(plugin, "notes", "This group plans the spring release", session=session)


@pytest.fixture
def chat(plugin, host):
    host.register_memory_kb(KB)
    populate(plugin)
    return plugin


def turn_input(plugin, text: str, libraries=()) -> TurnInput:
    return TurnInput(
        query_id=1,
        session_name="group_A",
        kb_id=KB,
        libraries=tuple(libraries),
        scope=plugin.memory.scope("group_A", "bot-1"),
        sender_id="u1",
        sender_name="Alice",
        text=text,
        is_command=False,
    )


# --------------------------------------------------------------------------- injection


@pytest.mark.parametrize("question", UNRELATED)
async def test_an_unrelated_question_injects_no_memory(chat, host, question):
    ctx = await turn(chat, host, question)
    system, recalled = injected(ctx)
    # The profile block still goes in; no memory-records message at all.
    assert "This group plans the spring release" in system
    assert recalled == "" and len(ctx.event.prompt) == 1, ctx.event.prompt
    request = json.dumps([m.model_dump() for m in ctx.event.prompt + ctx.event.default_prompt])
    for _, _, text in CHAT:
        assert text not in request
    assert host.query_vars["_ltm_context"]["episodes"] == []


@pytest.mark.parametrize(("question", "words"), RELATED)
async def test_a_relevant_question_still_injects_its_memory(chat, host, question, words):
    lines = fenced(injected(await turn(chat, host, question))[1])
    assert words in lines[0], lines
    # Only what passes: the memory that reaches the floor and, after it, runners-up within
    # FOLLOW_SHARE of the floor (another memory of the same person); nothing below that.
    vault, engine = chat.memory.require()
    found = engine.search(
        SearchQuery(question, chat.memory.scope("group_A", "bot-1"), top_k=5, gate=True)
    )
    passed = [r for r in found if r.relevance.passed]
    assert passed and not passed[0].relevance.follows
    assert all(r.relevance.follows for r in passed[1:])
    assert len(lines) == len(passed), (lines, [r.doc.text for r in found])


async def test_a_library_record_below_the_floor_never_enters_injection(tmp_path, host):
    from components.knowledge_engine.memvault import MemVaultKnowledgeEngine
    from memvault_plugin import knowledge_store as ks

    from tests.plugin.fakehost import started_plugin

    # top_k 5: without the floor every slot is filled, the unrelated library record included.
    plugin = await started_plugin(host, tmp_path / "memory", top_k=5)
    try:
        host.register_memory_kb(KB)
        remember(plugin, "Alice's flight to Tokyo is on Tuesday", speaker=None)
        remember(plugin, "Bob's favourite tea is oolong", speaker=None)
        vault, engine = plugin.memory.require()
        vault.remember(NewEpisode(ks.library_scope(KB), "The office printer is on the third floor"))
        query = "when is Alice's flight to Tokyo"
        # The printer record is a candidate of the merged search, and below the floor.
        found = engine.search(
            SearchQuery(
                query,
                plugin.memory.scope("group_A", "bot-1"),
                top_k=5,
                libraries=(ks.library_scope(KB),),
            ),
        )
        printer = [r for r in found if "printer" in r.doc.text]
        assert printer and not printer[0].relevance.passed

        system, recalled = injected(await turn(plugin, host, query))
        assert "Tokyo is on Tuesday" in fenced(recalled)[0]
        assert "printer" not in system + recalled

        kb = MemVaultKnowledgeEngine()
        kb.plugin = plugin
        settings_ = {"session_name": "group_A", "bot_uuid": "bot-1", "top_k": 5}
        response = await kb.retrieve(
            RetrievalContext(query=query, knowledge_base_id=KB, retrieval_settings=settings_)
        )
        contents = [e.metadata["content"] for e in response.results]
        assert contents and "Tokyo is on Tuesday" in contents[0]
        assert not any("printer" in c for c in contents)
        assert all(e.metadata["passed"] is True for e in response.results)
        assert response.total_found == len(response.results)
    finally:
        plugin.memory.close()


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    question=st.sampled_from(UNRELATED + tuple(q for q, _ in RELATED) + ("读书会几点",)),
    floor=st.floats(min_value=0.0, max_value=1.0, allow_nan=False),
)
def test_injection_recalls_exactly_the_results_that_reach_the_floor(chat, question, floor):
    """Whatever the message and the setting: what is recalled is every top-k result whose
    relevance reaches the floor, in rank order, and nothing else."""
    vault, engine = chat.memory.require()
    tuned = dataclasses.replace(chat.memory.settings, relevance_floor=floor)
    now = int(time.time())
    got = [r.id for r in recall(vault, engine, turn_input(chat, question), tuned, now)]
    ranked = engine.search(
        SearchQuery(
            question,
            chat.memory.scope("group_A", "bot-1"),
            top_k=tuned.top_k,
            speaker_id="u1",
            now=now,
            floor=floor,
            gate=True,
        ),  # recall_gate is on by default: a message it skips recalls nothing
    )
    assert ranked  # the chat holds memories: the search always ranks some
    # The floor's results and, after the first of them, their runners-up (rel-3).
    expected = [r.doc.episode_id for r in ranked if r.relevance.passed]
    first = next((r for r in ranked if r.relevance.value >= floor), None)
    passed = [r.relevance for r in ranked if r.relevance.passed]
    assert all(r.value >= floor or r.follows for r in passed)
    assert first is None or first.relevance.passed or first.relevance.gated
    assert got == ([] if ranked[0].relevance.gated else expected)


# --------------------------------------------------------------------------- tools, command


@pytest.mark.parametrize("question", UNRELATED)
async def test_recall_memory_and_memory_search_say_nothing_relevant(plugin, host, question):
    host.register_memory_kb(KB)
    populate(plugin, session="group_123")  # the chat of the tool's and the command's session
    line = await call(plugin, host, "recall_memory", {"query": question})
    best, floor = BELOW.fullmatch(line).groups()
    assert float(floor) == DEFAULT_FLOOR and float(best) < DEFAULT_FLOOR
    # Below the verdict line (the gate's decision and the floor, indexer.retrieval.verdict's words).
    verdict, *reply = (await say(command(plugin), host, f"!memory search {question}")).splitlines()
    assert verdict.startswith("[Memory] gate: ") and reply == [NONE]


async def test_recall_memory_and_memory_search_still_find_the_memory(plugin, host):
    host.register_memory_kb(KB)
    populate(plugin, session="group_123")
    _, found = parse_recall(
        await call(plugin, host, "recall_memory", {"query": "when does the book club meet?"})
    )
    assert [f.text for f in found] == ["The book club meets on Thursday at 7 pm in the library"]
    lines = (await say(command(plugin), host, "!memory search book club")).splitlines()
    assert lines[0].startswith("[Memory] gate: passed: "), lines
    assert lines[1] == "[Memory] Found 1 episode(s):", lines
    assert "book club meets on Thursday" in lines[2]


# --------------------------------------------------------------------------- the setting


def test_the_setting_defaults_to_the_indexer_floor_and_refuses_what_cannot_work():
    manifest = yaml.safe_load((PLUGIN_DIR / "manifest.yaml").read_text())
    (entry,) = [c for c in manifest["spec"]["config"] if c["name"] == "relevance_floor"]
    assert entry["default"] == DEFAULT_FLOOR and entry["type"] == "float"
    assert PluginSettings.from_config({}).relevance_floor == DEFAULT_FLOOR
    assert PluginSettings.from_config({"relevance_floor": ""}).relevance_floor == DEFAULT_FLOOR
    assert PluginSettings.from_config({"relevance_floor": "0.55"}).relevance_floor == 0.55
    for bad, says in (
        ("1.5", "between 0 and 1"),
        ("-0.1", "at least 0"),
        ("nan", "between 0 and 1"),
        ("high", "must be a number"),
    ):
        with pytest.raises(SettingsError, match=f"relevance_floor.*{says}"):
            PluginSettings.from_config({"relevance_floor": bad})


async def test_the_one_setting_moves_every_path(tmp_path, host):
    from tests.plugin.fakehost import started_plugin

    host.register_memory_kb(KB)
    # Floor 0: everything passes, so the unrelated question fills the slots again.
    low = await started_plugin(host, tmp_path / "low", relevance_floor=0.0)
    try:
        populate(low, session="group_A")
        populate(low, session="group_123")
        assert len(fenced(injected(await turn(low, host, "Tokyo flight?"))[1])) == 3
        assert parse_recall(await call(low, host, "recall_memory", {"query": "Tokyo flight?"}))[1]
        assert "Found" in await say(command(low), host, "!memory search Tokyo flight?")
    finally:
        low.memory.close()
    # Floor 1: only a perfect match passes; a close one is left out everywhere.
    high = await started_plugin(host, tmp_path / "high", relevance_floor=1.0)
    try:
        populate(high, session="group_A")
        populate(high, session="group_123")
        question = "what tea does Bob like"  # relevant (it passes the default), not a perfect match
        assert injected(await turn(high, host, question))[1] == ""
        line = await call(high, host, "recall_memory", {"query": question})
        best, floor = BELOW.fullmatch(line).groups()
        assert floor == "1.00" and DEFAULT_FLOOR <= float(best) < 1.0
        reply = await say(command(high), host, f"!memory search {question}")
        assert reply.splitlines()[1:] == [NONE], reply
        # The Memory Console page inside LangBot marks it against the same setting.
        body = {"scope": {"bot": "bot-1", "session": "group_123"}, "query": question}
        items = (await api(high, "/search", body)).data["items"]
        tea = next(i for i in items if "oolong" in i["content"])
        assert tea["passed"] is False and 0 < tea["relevance"] < 1
    finally:
        high.memory.close()


# --------------------------------------------------------------------------- one number


async def test_cli_console_and_memory_search_show_the_same_relevance(plugin, host):
    host.register_memory_kb(KB)
    populate(plugin, session="group_123")
    query = "what is Bob's favourite tea?"
    vault, engine = plugin.memory.require()
    scope = plugin.memory.scope("group_123", "bot-1")
    tea = next(s.episode for s in vault.list_episodes(scope).items if "oolong" in s.episode.body)

    # `memvault search --explain` on the same vault (read-only next to the plugin's writer).
    args = ("search", query, "--bot", "bot-1", "--session", "group_123", "--explain")
    items = run_json(*args, vault=vault.root)
    (cli,) = [i for i in items if i["id"] == tea.id]
    cli_value = cli["explain"]["absolute"]["value"]
    assert cli["passed"] is True and cli["relevance"] == round(cli_value, 4)

    ctx = ConsoleContext(vault=vault, engine=engine, floor=plugin.memory.settings.relevance_floor)
    body = {"scope": {"bot": "bot-1", "session": "group_123", "isolation": "session"}}
    body["query"] = query
    (web,) = [i for i in dispatch(ctx, "/search", body)["items"] if i["id"] == tea.id]
    assert web["passed"] is True

    reply = await say(command(plugin), host, f"!memory search {query}")
    (line,) = [line for line in reply.splitlines() if f"[{tea.id}]" in line]
    shown = re.search(r"relevance (\d\.\d{3})\)", line)
    assert shown, line

    # One number, rounded the same way (3 decimals, as the CLI's explain line prints it).
    assert f"{cli_value:.3f}" == f"{web['explain']['absolute']['value']:.3f}" == shown[1]
    assert web["relevance"] == cli["relevance"]
