"""Issue 12: what the model gets in one turn on LangBot 4.11 (injector, then the runner's own
`retrieve` of the MemVault KB), through the SDK's real context types and the fake host, over
a real vault, real indexes and the real embedding model.

The model request is default_prompt (the injector's blocks) + the runner's retrieval block
(our KnowledgeEngine.retrieve): each memory must reach it at most once, with one search."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langbot_plugin.api.entities import events
from langbot_plugin.api.entities.builtin.rag.context import RetrievalContext
from langbot_plugin.entities.io.actions.enums import PluginToRuntimeAction as A

from tests.plugin.fakehost import FakeHost, started_plugin
from tests.plugin.injection.test_injector import KB, injected, injector_for, remember

QUESTION = "when is my flight to Tokyo?"
# Other wordings of the same need: the runner may retrieve with a different text.
# Each of them recalls the flight or the hotel above the default floor (measured).
RELATED = (
    "Tokyo flight",
    "my flight to Tokyo",
    "flight Tokyo Tuesday",
    "where is the hotel in Tokyo",
)


def engine_for(plugin):
    from components.knowledge_engine.memvault import MemVaultKnowledgeEngine

    engine = MemVaultKnowledgeEngine()
    engine.plugin = plugin
    return engine


class Searches:
    """Counts the engine's searches (Engine.judged, where every search of the engine runs:
    Engine.search and the recall with its reason, indexer.recall.find)."""

    def __init__(self, monkeypatch, engine) -> None:
        self.count = 0
        real = engine.judged

        def counted(*args, **kwargs):
            self.count += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(engine, "judged", counted)


async def injector_turn(plugin, host, text, session="group_A", query_id=7):
    """PromptPreProcessing as LangBot 4.11 sends it: `prompt` arrives empty."""
    host.query_vars["user_message_text"] = text
    ctx = host.prompt_event(session, query_id)
    ctx.event.prompt.clear()
    (handler,) = injector_for(plugin).registered_handlers[events.PromptPreProcessing]
    await handler(ctx)
    return ctx


async def retrieve(plugin, text, session="group_A", sender="u1", kb_id=KB, top_k=5):
    """What LocalAgent's retrieve_knowledge reaches: the host's settings for this query."""
    settings = {"top_k": top_k, "session_name": session, "bot_uuid": "bot-1"}
    settings["sender_id"] = sender
    context = RetrievalContext(query=text, knowledge_base_id=kb_id, retrieval_settings=settings)
    response = await engine_for(plugin).retrieve(context)
    return [r.id for r in response.results]


def placed_ids(ctx):
    import re

    return re.findall(r"\(id:([^,)]+)", injected(ctx)[1])


@pytest.fixture
def chat(plugin, host):
    host.register_memory_kb(KB)
    ids = {
        "flight": remember(plugin, "Alice's flight to Tokyo is on Tuesday").id,
        "hotel": remember(plugin, "Alice's Tokyo hotel is near the flight terminal").id,
        "lunch": remember(plugin, "The team lunch is on Friday", speaker=("u2", "Bob")).id,
    }
    plugin.ids = ids
    return plugin


# --------------------------------------------------------------------------- route


async def test_memory_block_goes_into_default_prompt_after_the_profile(chat, host):
    ctx = await injector_turn(chat, host, QUESTION)
    assert ctx.event.prompt == []  # the host drops it: nothing may go there
    contents = [m.content for m in ctx.event.default_prompt]
    assert contents[0] == "You are a helpful bot."
    assert contents[1].startswith("# Long-term Memory")
    assert contents[2].startswith("# Relevant Memories") and "<memory-records>" in contents[2]
    assert "Alice's flight to Tokyo is on Tuesday" in contents[2]
    assert [m.role for m in ctx.event.default_prompt] == ["system"] * 3


async def test_the_route_is_one_change_for_a_host_that_keeps_prompt(chat, host, monkeypatch):
    from indexer.injection import route as prompt_route

    monkeypatch.setattr(
        prompt_route,
        "ROUTE",
        ((prompt_route.PROFILE, "default_prompt"), (prompt_route.MEMORIES, "prompt")),
    )
    ctx = await injector_turn(chat, host, QUESTION)
    assert [m.content[:19] for m in ctx.event.prompt] == ["# Relevant Memories"]
    assert len(ctx.event.default_prompt) == 2
    from vault.layout.keys import ScopeId
    from vault.writes.snapshots import read_snapshot

    snap = read_snapshot(chat.memory.settings.vault_path, ScopeId("bot-1", "group_A"))
    assert snap["placed"] == {"default_prompt": ["profile"], "prompt": ["memories"]}


# --------------------------------------------------------------------------- never twice


async def test_same_question_retrieve_serves_nothing_injected_with_one_search(
    chat, host, monkeypatch
):
    searches = Searches(monkeypatch, chat.memory.engine)
    ctx = await injector_turn(chat, host, QUESTION)
    placed = placed_ids(ctx)
    assert chat.ids["flight"] in placed
    served = await retrieve(chat, "  when is my flight   to Tokyo?")
    assert served == []  # the injector recalled this very question
    assert searches.count == 1  # one recall per turn, not two
    seen = placed + served
    assert len(seen) == len(set(seen))


async def test_without_an_injector_turn_retrieve_searches_once(chat, host, monkeypatch):
    """Before issue 12 every turn searched twice (the injector, then the runner's retrieve);
    that is still the cost, and the result, when the injector did not run."""
    searches = Searches(monkeypatch, chat.memory.engine)
    served = await retrieve(chat, QUESTION)
    assert chat.ids["flight"] in served and searches.count == 1


async def test_other_question_never_repeats_a_placed_memory(chat, host):
    ctx = await injector_turn(chat, host, QUESTION)
    placed = placed_ids(ctx)
    assert placed
    for text in RELATED:
        served = await retrieve(chat, text)
        assert not set(served) & set(placed), (text, served, placed)
        assert len(served) == len(set(served))


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    first=st.sampled_from((QUESTION, *RELATED)),
    second=st.sampled_from((QUESTION, *RELATED, "team lunch Friday")),
    third=st.sampled_from((QUESTION, *RELATED, "team lunch Friday")),
)
def test_each_memory_reaches_the_model_at_most_once_per_turn(chat, host, first, second, third):
    """Whatever the runner asks (one or two KBs, any wording): default_prompt + every
    retrieve result of the turn hold each memory at most once."""

    async def one_turn() -> tuple[list[str], list[str]]:
        ctx = await injector_turn(chat, host, first, query_id=hash((first, second, third)))
        return placed_ids(ctx), [*await retrieve(chat, second), *await retrieve(chat, third)]

    placed, served = asyncio.run(one_turn())
    assert placed  # every question above recalls the flight or the hotel
    seen = placed + served
    assert len(seen) == len(set(seen)), (first, second, third, placed, served)


# --------------------------------------------------------------------------- no injector turn


async def test_retrieve_serves_when_the_injector_did_not_run_for_this_sender(chat, host):
    ctx = await injector_turn(chat, host, QUESTION)
    assert chat.ids["flight"] in placed_ids(ctx)
    assert await retrieve(chat, QUESTION) == []  # u1's turn: already in the prompt
    # u2 (no injector turn of their own) and a request without a sender get the memory.
    assert chat.ids["flight"] in await retrieve(chat, QUESTION, sender="u2")
    assert chat.ids["flight"] in await retrieve(chat, QUESTION, sender="")


async def test_a_turn_without_a_sender_is_matched_as_langbot_sends_it(chat, host):
    # LangBot 4.11 puts str(query.sender_id) into retrieval_settings: "None" for a turn with
    # no sender, which the injector knows as "" (no speaker). The same turn must match.
    host.query_vars["sender_id"] = ""
    ctx = await injector_turn(chat, host, QUESTION)
    assert chat.ids["flight"] in placed_ids(ctx)
    assert await retrieve(chat, QUESTION, sender="None") == []


async def test_retrieve_serves_when_the_injector_raised(chat, host, monkeypatch):
    ctx = await injector_turn(chat, host, QUESTION, query_id=1)
    assert chat.ids["flight"] in placed_ids(ctx) and await retrieve(chat, QUESTION) == []

    def broken(*args, **kwargs):
        raise RuntimeError("index exploded")

    monkeypatch.setattr("components.event_listener.injector.prepare", broken)
    ctx = await injector_turn(chat, host, QUESTION, query_id=2)
    assert injected(ctx) == ("", "")
    assert chat.ids["flight"] in await retrieve(chat, QUESTION)


async def test_retrieve_serves_when_the_host_calls_of_the_injector_failed(chat, host, monkeypatch):
    await injector_turn(chat, host, QUESTION, query_id=1)
    assert await retrieve(chat, QUESTION) == []
    real = host.call_action

    async def failing(action, data, timeout=15.0, **kw):
        if action == A.GET_BOT_UUID:
            raise ConnectionError("runtime went away")
        return await real(action, data, timeout, **kw)

    monkeypatch.setattr(host, "call_action", failing)
    ctx = await injector_turn(chat, host, QUESTION, query_id=2)
    assert injected(ctx) == ("", "")
    assert chat.ids["flight"] in await retrieve(chat, QUESTION)


async def test_retrieve_serves_when_the_kb_is_only_on_the_runner(chat, host):
    await injector_turn(chat, host, QUESTION, query_id=1)
    assert await retrieve(chat, QUESTION) == []
    # The pipeline no longer lists it; the runner's config still has it. On LangBot 4.11 the
    # list follows the turn's `_knowledge_base_uuids` (e.g. a plugin before MemVault pruned
    # it), and the injector keeps the list per value of that var (kb_cache).
    host.pipeline_kbs = []
    host.query_vars["_knowledge_base_uuids"] = ["kb-other"]
    ctx = await injector_turn(chat, host, QUESTION, query_id=2)
    assert injected(ctx) == ("", "")
    assert chat.ids["flight"] in await retrieve(chat, QUESTION)


async def test_a_stale_entry_never_withholds(tmp_path, host):
    from memvault_plugin import turn_ledger

    class Clock:
        now = 0.0

        def __call__(self) -> float:
            return self.now

    clock = Clock()
    host.register_memory_kb(KB)
    plugin = await started_plugin(host, tmp_path / "memory")
    plugin.turns = turn_ledger.TurnLedger(clock=clock)
    try:
        flight = remember(plugin, "Alice's flight to Tokyo is on Tuesday").id
        await injector_turn(plugin, host, QUESTION)
        clock.now = turn_ledger.TTL_SECONDS - 1
        assert await retrieve(plugin, QUESTION) == []
        clock.now = turn_ledger.TTL_SECONDS + 1  # e.g. a later message LocalAgent retrieves for
        assert flight in await retrieve(plugin, QUESTION)
    finally:
        plugin.memory.close()


async def test_another_chat_of_the_bot_is_not_held_back_in_bot_isolation(tmp_path):
    """With isolation "bot" chats share episodes: chat A's injection must not withhold the
    same memory from chat B's retrieve (B's prompt never had it)."""
    host = FakeHost()
    host.register_memory_kb(KB)
    plugin = await started_plugin(host, tmp_path / "memory", isolation="bot")
    try:
        flight = remember(plugin, "Alice's flight to Tokyo is on Tuesday").id
        ctx = await injector_turn(plugin, host, QUESTION, session="group_A")
        assert flight in placed_ids(ctx)
        assert await retrieve(plugin, QUESTION, session="group_A") == []
        assert flight in await retrieve(plugin, QUESTION, session="group_B")
        assert flight in await retrieve(plugin, "flight Tokyo Tuesday", session="group_B")
    finally:
        plugin.memory.close()


# --------------------------------------------------------------------------- cost


async def test_turn_cost_is_one_search_not_two(chat, host, monkeypatch, capsys):
    """What a turn costs when the runner retrieves with the user's text (LocalAgent does):
    the engine's searches and the wall time of injector + retrieve, now and as before issue
    12 (reproduced by voiding the ledger entry between the two, as if it did not exist)."""
    import statistics
    import time

    from memvault_plugin import turn_ledger

    from vault.transfer.exchange import import_payload

    vault, engine = chat.memory.require()
    topics = ("flight", "hotel", "budget", "release", "lunch", "printer", "visa", "badge")
    items = [{"content": f"Note {i}: the {topics[i % 8]} item number {i}"} for i in range(400)]
    import_payload(vault, chat.memory.scope("group_A", "bot-1"), items)
    key = turn_ledger.ledger_key(chat.memory.scope("group_A", "bot-1"), "u1")
    searches = Searches(monkeypatch, engine)
    questions = [QUESTION, *RELATED, "what about the visa", "where is my badge"]
    cost: dict[str, list[float]] = {"now": [], "before": []}
    counts: dict[str, list[int]] = {"now": [], "before": []}
    for round_ in range(6):
        for mode in ("now", "before") if round_ % 2 else ("before", "now"):  # interleaved
            for n, question in enumerate(questions):
                searches.count = 0
                started = time.perf_counter()
                await injector_turn(chat, host, question, query_id=n)
                if mode == "before":
                    chat.turns.clear(key)
                await retrieve(chat, question)
                cost[mode].append((time.perf_counter() - started) * 1000)
                counts[mode].append(searches.count)
    assert set(counts["now"]) == {1} and set(counts["before"]) == {2}
    with capsys.disabled():
        for mode in ("before", "now"):
            ms = sorted(cost[mode])
            print(
                f"\nturn_cost mode={mode} turns={len(ms)} searches_per_turn="
                f"{statistics.mean(counts[mode]):.0f} p50_ms={statistics.median(ms):.1f} "
                f"p95_ms={ms[int(len(ms) * 0.95) - 1]:.1f}"
            )
