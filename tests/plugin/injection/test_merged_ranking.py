"""A chat's memory and its attached libraries' reference memory rank in ONE list (injection,
the KB's retrieve, recall_memory), through the fake host over a real vault, the real model
and real indexes. Ranking them as separate lists scored each list on its own: a lone
unrelated library record was rescaled to the top score and injected next to the answer."""

from __future__ import annotations

import time

from langbot_plugin.api.entities.builtin.rag.context import RetrievalContext

from indexer.injection.turn import TurnInput, recall
from tests.plugin.fakehost import FakeHost
from tests.plugin.injection.test_injector import KB, fenced, injected, remember, turn
from tests.plugin.recall_parse import parse as parse_recall
from tests.plugin.tools.test_tools import call
from vault.writes.new_episode import NewEpisode

QUERY = "when is Alice's flight to Tokyo"
FLIGHT = "Alice's flight to Tokyo is on Tuesday"
PRINTER = "The office printer is on the third floor"
OTHER_CHAT = "Alice's flight to Tokyo was moved to Friday"


def _library(plugin, text: str, kb_id: str = KB) -> None:
    from memvault_plugin import knowledge_store

    vault, _ = plugin.memory.require()
    vault.remember(NewEpisode(knowledge_store.library_scope(kb_id), text))


def _world(plugin, host: FakeHost) -> None:
    host.register_memory_kb(KB)
    # No speaker on the chat memory: no same-speaker or named-speaker factor lifts it, so
    # the scores compare the two memories' relevance alone.
    remember(plugin, FLIGHT, speaker=None)
    remember(plugin, "Bob's favourite tea is oolong", speaker=None)
    _library(plugin, PRINTER)
    remember(plugin, OTHER_CHAT, session="group_B", speaker=None)


def _recalled(plugin, session: str = "group_A") -> list:
    from memvault_plugin import knowledge_store

    vault, engine = plugin.memory.require()
    turn_input = TurnInput(
        query_id=1,
        session_name=session,
        kb_id=KB,
        libraries=(knowledge_store.library_scope(KB),),
        scope=plugin.memory.scope(session, "bot-1"),
        sender_id="u1",
        sender_name="Alice",
        text=QUERY,
        is_command=False,
    )
    return recall(vault, engine, turn_input, plugin.memory.settings, int(time.time()))


def _below(score: float, best: float) -> bool:
    # "Below" = clearly less relevant, not a tie broken by order: at most half the score.
    return score <= 0.5 * best


async def test_an_unrelated_library_record_ranks_below_the_chat_memory(plugin, host):
    _world(plugin, host)
    found = _recalled(plugin)
    contents = [r.content for r in found]
    assert contents[0] == FLIGHT, contents
    flight = found[0].score
    for record in found:
        if record.content == PRINTER:
            assert _below(record.score, flight), (record.score, flight)
    # What the prompt got: the flight first; the printer line, if there at all, after it.
    lines = fenced(injected(await turn(plugin, host, QUERY))[1])
    assert "Tokyo is on Tuesday" in lines[0], lines
    assert not any("printer" in line for line in lines[:1])


async def test_a_relevant_library_record_is_still_recalled_first(plugin, host):
    _world(plugin, host)
    found = _recalled(plugin)  # warm: both kinds of memory are indexed
    assert found
    lines = fenced(injected(await turn(plugin, host, "which floor is the office printer on"))[1])
    assert "third floor" in lines[0], lines


async def test_another_chats_memory_never_enters_the_merged_pool(plugin, host):
    _world(plugin, host)
    found = _recalled(plugin)
    assert FLIGHT in [r.content for r in found]
    assert OTHER_CHAT not in [r.content for r in found]
    system, recalled = injected(await turn(plugin, host, QUERY))
    assert "Tuesday" in recalled and "Friday" not in system + recalled
    # And from the other chat: its own memory, never group_A's.
    other = [r.content for r in _recalled(plugin, "group_B")]
    assert other[0] == OTHER_CHAT and FLIGHT not in other


async def test_a_library_of_a_kb_not_attached_here_is_never_searched(plugin, host):
    _world(plugin, host)
    host.register_memory_kb("kb-elsewhere")  # exists, but not in this pipeline
    _library(plugin, "Alice's flight to Tokyo is in first class", kb_id="kb-elsewhere")
    system, recalled = injected(await turn(plugin, host, QUERY))
    assert "Tuesday" in recalled and "first class" not in system + recalled


async def test_retrieve_ranks_chat_and_library_in_one_list(plugin, host):
    from components.knowledge_engine.memvault import MemVaultKnowledgeEngine

    _world(plugin, host)
    engine = MemVaultKnowledgeEngine()
    engine.plugin = plugin
    response = await engine.retrieve(
        RetrievalContext(
            query=QUERY,
            knowledge_base_id=KB,
            retrieval_settings={"session_name": "group_A", "bot_uuid": "bot-1", "top_k": 5},
        )
    )
    entries = [(e.metadata["content"], e.metadata["origin"], e.score) for e in response.results]
    assert entries[0][:2] == (FLIGHT, "chat"), entries
    assert all(content != OTHER_CHAT for content, _, _ in entries)
    for content, origin, score in entries:
        if content == PRINTER:
            assert origin == "library" and _below(score, entries[0][2]), entries


async def test_recall_memory_searches_the_attached_library_in_the_same_ranking(plugin, host):
    _world(plugin, host)
    _, found = parse_recall(
        await call(plugin, host, "recall_memory", {"query": QUERY}, launcher_id="A")
    )
    contents = [r.text for r in found]  # relevance order: the library's below the chat's
    assert contents[0] == FLIGHT and OTHER_CHAT not in contents, contents
    _, library_only = parse_recall(
        await call(
            plugin, host, "recall_memory", {"query": "office printer floor"}, launcher_id="A"
        )
    )
    assert library_only[0].text == PRINTER
