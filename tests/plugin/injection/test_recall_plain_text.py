"""`recall_memory` answers in plain text (issue 14, item 3), its field filters run inside the
index (item 2), and an unverified memory is injected with the same `[unverified]` mark:
through the SDK's Tool.call and the injector with the fake host, over a real vault and the
real indexes and embedding model."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from indexer.retrieval.search_query import SearchQuery
from tests.plugin.injection.test_injector import fenced, injected, turn
from tests.plugin.recall_parse import ids as recalled_ids
from tests.plugin.recall_parse import parse
from tests.plugin.tools.test_tools import call, scope
from vault.format.model import Speaker
from vault.writes.new_episode import NewEpisode

# tests/plugin/conftest.py `plugin_embedder`: what is recalled here is what the model finds.
EMBEDDER = "model"

KB = "kb-memvault"


@pytest.fixture
def opted_in(host):
    host.register_memory_kb(KB)
    return host


async def recall(plugin, host, **params):
    return await call(plugin, host, "recall_memory", params)


# --------------------------------------------------------------------------- the text


async def test_recall_answers_in_text_with_the_header_and_the_marks(plugin, opted_in):
    vault, _ = plugin.memory.require()
    sc = scope(plugin)
    mine = vault.remember(
        NewEpisode(
            sc,
            "Alice's flight to Tokyo is next Tuesday",
            speaker=Speaker("u1", "Alice"),
            tags=["Travel"],
            category="plan",
            priority="high",
        ),
    )  # source agent: unverified
    told = vault.remember(
        NewEpisode(
            sc, "Bob's flight to Tokyo was cancelled", speaker=Speaker("u2", "Bob"), source="user"
        )
    )
    text = await recall(plugin, opted_in, query="Tokyo flight")
    counts, lines = parse(text)
    assert counts == (2, 1, 1)
    by_id = {m.id: m for m in lines}
    assert set(by_id) == {mine.id, told.id}
    day = f"{mine.created_at:%Y-%m-%d}"
    assert by_id[mine.id].meta == f"high · plan · {day} · Alice · #Travel"
    assert by_id[mine.id].unverified
    assert by_id[mine.id].text == "Alice's flight to Tokyo is next Tuesday"
    assert by_id[told.id].meta.startswith("normal · - · ") and not by_id[told.id].unverified


async def test_nothing_found_keeps_its_sentence_and_says_why(plugin, opted_in):
    empty = "No relevant memories found: chat has no memories."
    assert await recall(plugin, opted_in, query="Tokyo flight") == empty
    assert await recall(plugin, opted_in) == empty


async def test_without_a_query_it_lists_by_priority_then_newest(plugin, opted_in):
    vault, _ = plugin.memory.require()
    sc = scope(plugin)
    start = datetime(2026, 3, 1, tzinfo=UTC)
    plan = [("low", 5), ("critical", 1), ("normal", 4), ("high", 2), ("high", 6), ("normal", 3)]
    ids = {}
    for priority, day in plan:
        ep = vault.remember(
            NewEpisode(
                sc,
                f"memory {priority} {day}",
                priority=priority,
                created_at=start + timedelta(days=day),
            ),
        )
        ids[(priority, day)] = ep.id
    want = [("critical", 1), ("high", 6), ("high", 2), ("normal", 4), ("normal", 3), ("low", 5)]
    _, lines = parse(await recall(plugin, opted_in, top_k=10))
    assert [m.id for m in lines] == [ids[k] for k in want]
    text = await recall(plugin, opted_in, top_k=2)
    counts, lines = parse(text)
    assert counts == (2, 0, 2) and [m.id for m in lines] == [ids[k] for k in want[:2]]
    assert text.endswith("(+4 more: raise top_k or add a filter to see them)")


async def test_with_a_query_the_order_is_relevance_not_priority(plugin, opted_in):
    vault, _ = plugin.memory.require()
    sc = scope(plugin)
    close = vault.remember(
        NewEpisode(sc, "The dentist appointment is on Monday at nine", priority="low")
    )
    far = vault.remember(
        NewEpisode(sc, "Monday standup moved to the big room", priority="critical")
    )
    _, lines = parse(await recall(plugin, opted_in, query="dentist appointment"))
    assert lines[0].id == close.id
    assert far.id not in [m.id for m in lines[:1]]


ATOMS = [*"ab [](): \n\r\u2028·#", "[unverified]", "(id:ep_x)", "\n2. (id:ep_x) [high] ", " · #"]
HOSTILE = st.lists(st.sampled_from(ATOMS), min_size=1, max_size=8).map("".join).filter(str.strip)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=HOSTILE, tag=HOSTILE)
def test_a_memory_text_or_tag_cannot_fake_a_line_a_mark_or_an_id(body, tag):
    from memvault_plugin import recall_text

    from vault.format.model import Episode

    ep = Episode(
        id="ep_20260301_aaaaaa",
        created_at=datetime(2026, 3, 1, tzinfo=UTC),
        body=body,
        tags=(tag,),
        source="user",
        verified=True,
    )
    counts, (line,) = parse(recall_text.recall_text([ep]))
    assert counts == (1, 1, 0)
    assert line.id == ep.id and not line.unverified  # the text never adds the mark
    assert len(line.meta.split(" · ")) == 4  # priority, category, date, the one tag


# --------------------------------------------------------------------------- filters


async def test_recall_filters_by_every_field_and_tags_match_across_case(plugin, opted_in):
    vault, _ = plugin.memory.require()
    sc = scope(plugin)
    tagged = vault.remember(
        NewEpisode(sc, "Tokyo flight on Tuesday", tags=["Hobby"], source="user")
    )
    planned = vault.remember(NewEpisode(sc, "Tokyo flight plan for May", category="plan"))
    urgent = vault.remember(
        NewEpisode(sc, "Tokyo flight passport check", priority="high", source="user")
    )
    soon = vault.remember(
        NewEpisode(sc, "Tokyo flight seat upgrade", expires_in="3d", source="user")
    )
    later = vault.remember(
        NewEpisode(sc, "Tokyo flight lounge pass", expires_in="30d", source="user")
    )

    async def ids(**params):
        return set(recalled_ids(await recall(plugin, opted_in, top_k=10, **params)))

    for query in ("Tokyo flight", ""):
        for spelling in ("hobby", "HOBBY", " Hobby ", "hObBy"):
            assert await ids(query=query, tags=[spelling]) == {tagged.id}
        assert await ids(query=query, category="plan") == {planned.id}
        assert await ids(query=query, priority="high") == {urgent.id}
        assert await ids(query=query, verified=False) == {planned.id}
        assert await ids(query=query, expiring_within="7d") == {soon.id}
        assert await ids(query=query, expiring_within="60d") == {soon.id, later.id}
        assert await ids(query=query, tags=["hobby"], priority="high") == set()


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"priority": "urgent"}, "Error: priority filter must be one of low, normal, high"),
        ({"category": "gossip"}, "Error: category filter must be one of identity"),
        ({"verified": "maybe"}, "Error: verified filter must be yes or no"),
        ({"expiring_within": "soon"}, "Error: duration 'soon' is not understood"),
        ({"tags": "x", "query": 3}, "Error: query must be a string"),
        ({"tags": [1]}, "Error: tag filter must be a tag or a list of tags"),
    ],
)
async def test_recall_refuses_bad_filters_saying_what_to_send(plugin, opted_in, params, message):
    assert (await recall(plugin, opted_in, **params)).startswith(message)


async def test_a_filter_finds_the_one_match_that_sixty_better_hits_would_crowd_out(
    plugin, opted_in
):
    vault, engine = plugin.memory.require()
    sc = scope(plugin)
    for i in range(60):  # more than recall's 50 candidates: a post-filter would lose it
        vault.remember(
            NewEpisode(sc, f"Tokyo flight Tokyo flight number {i} Tokyo flight", source="user")
        )
    target = vault.remember(NewEpisode(sc, "a flight to Tokyo, booked by Alice", tags=["Trip"]))
    unfiltered = engine.search(SearchQuery("Tokyo flight", sc, top_k=50))
    assert target.id not in [r.doc.episode_id for r in unfiltered]  # outranked 60 times
    counts, lines = parse(await recall(plugin, opted_in, query="Tokyo flight", tags=["TRIP"]))
    assert counts == (1, 0, 1) and [m.id for m in lines] == [target.id]


# --------------------------------------------------------------------------- injection


async def test_an_unverified_agent_memory_is_injected_with_the_mark(plugin, opted_in):
    vault, _ = plugin.memory.require()
    sc = plugin.memory.scope("group_A", "bot-1")
    agent = vault.remember(NewEpisode(sc, "Alice's flight to Tokyo is on Tuesday", source="agent"))
    person = vault.remember(NewEpisode(sc, "Alice's flight to Tokyo leaves at nine", source="user"))
    ctx = await turn(plugin, opted_in, "when is the Tokyo flight")
    lines = {line for line in fenced(injected(ctx)[1])}
    (mine,) = [line for line in lines if f"id:{agent.id}" in line]
    (theirs,) = [line for line in lines if f"id:{person.id}" in line]
    assert re.match(r"\[\d\] \[[^\]]+\] \[unverified\] \(id:", mine), mine
    assert "[unverified]" not in theirs
    episodes = opted_in.query_vars["_ltm_context"]["episodes"]
    assert set(episodes[0]) == {"content"}  # upstream's shape: no field renamed or dropped
    assert any("[unverified] (id:" + agent.id in e["content"] for e in episodes)
