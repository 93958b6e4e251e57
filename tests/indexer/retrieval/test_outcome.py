"""Why a recall found nothing (indexer.retrieval.outcome, through indexer.recall.find) over
a real vault and real indexes: each reason from what the search saw, in the order the module
documents, never another chat's counts; and the stored form a snapshot keeps."""

from __future__ import annotations

import pytest

from indexer.engine import Engine
from indexer.recall import find
from indexer.retrieval.filters import parse_filters
from indexer.retrieval.outcome import FORMS, KINDS, WHY_VERSION, WhyEmpty
from indexer.retrieval.search_query import SearchQuery
from vault.format.model import Speaker
from vault.layout.keys import ScopeId
from vault.writes.create import init_vault
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

CHAT = ScopeId("bot-1", "group_7")
OTHER = ScopeId("bot-1", "group_8")
EMPTY = ScopeId("bot-1", "group_9")


@pytest.fixture(scope="module")
def world(tmp_path_factory, embedder):
    root = tmp_path_factory.mktemp("outcome") / "memory"
    init_vault(root, git=False)
    vault = Vault(root, git=False)
    alice = Speaker("u1", "Alice")
    vault.remember(NewEpisode(CHAT, "Alice's flight to Tokyo is on Tuesday", speaker=alice))
    vault.remember(NewEpisode(CHAT, "Bob's favourite tea is oolong", tags=["tea"]))
    gone = vault.remember(NewEpisode(OTHER, "The launch code is 4242"))
    vault.archive(OTHER, gone.id)
    engine = Engine.open(root, embedder=embedder)
    engine.reconcile()
    yield vault, engine
    engine.close()


def why(engine, query, scope=CHAT, **kw):
    return find(engine, SearchQuery(query, scope, **kw)).why


def test_something_that_passes_has_no_reason(world):
    _, engine = world
    found = find(engine, SearchQuery("Alice's flight to Tokyo", CHAT))
    assert found.passed and found.why is None


def test_an_empty_chat_says_it_holds_no_memories_whatever_its_neighbours_hold(world):
    _, engine = world
    assert why(engine, "what is the launch code?", EMPTY) == WhyEmpty("no_memories")
    # The other chat's archived memory is counted in its own scope only.
    assert why(engine, "what is the launch code?", OTHER) == WhyEmpty(
        "no_active", "active", count=1
    )


def test_filters_that_leave_nothing_are_named(world):
    _, engine = world
    got = why(engine, "tea", filters=parse_filters(tags=["coffee"], priority="high"))
    assert got == WhyEmpty("filtered", "tags, priority")
    assert got.words() == "no memory matches the filters (tags, priority)"


def test_a_greeting_is_the_gates_and_a_weak_match_the_floors_with_the_numbers(world):
    _, engine = world
    gated = why(engine, "hi!", gate=True)
    assert (gated.kind, gated.detail, gated.words()) == ("gate", "greeting", "gate (greeting)")
    found = find(engine, SearchQuery("what is the capital of Peru?", CHAT, gate=False))
    best = max(r.relevance.value for r in found.results)
    assert found.why == WhyEmpty("floor", best=best, floor=0.44, count=len(found.results))
    assert found.why.words() == f"below the floor (best {best:.2f} < 0.44)"
    strict = why(engine, "Alice's flight to Tokyo", floor=1.0)
    assert strict.kind == "floor" and strict.floor == 1.0 and 0.44 <= strict.best < 1.0


def test_no_text_is_said_before_anything_else(world):
    _, engine = world
    assert why(engine, "   ", EMPTY) == WhyEmpty("no_text")


def test_the_stored_form_round_trips_and_a_hand_edit_cannot_break_a_reader():
    reason = WhyEmpty("floor", best=0.312345, floor=0.44, count=3)
    stored = reason.as_json()
    assert stored["version"] == WHY_VERSION and stored["best"] == 0.3123
    assert stored["words"] == "below the floor (best 0.31 < 0.44)" and stored["form"] == "floor"
    assert WhyEmpty.from_json(stored).words() == stored["words"]
    for junk in (None, [], "floor", {"kind": 3}, {}):
        assert WhyEmpty.from_json(junk) is None
    odd = WhyEmpty.from_json({"kind": "floor", "best": True, "count": -2, "detail": ["x"]})
    assert (odd.best, odd.count, odd.detail) == (None, 0, "")
    newer = WhyEmpty.from_json({"kind": "quota", "words": "the quota is used up"})
    assert newer.words() == "the quota is used up" and newer.form() == ""
    long = WhyEmpty.from_json({"kind": "error", "detail": "x" * 5000})
    assert len(long.words()) < 260


def test_every_kind_has_a_wording():
    assert {WhyEmpty(k).form() for k in KINDS} <= set(FORMS)
    assert all(WhyEmpty(k).words() and "{" not in WhyEmpty(k).words() for k in KINDS)
