"""CJK text matching: one shared Han character is not a match, bigrams carry relevance.

Real vault, real engine (tantivy + FAISS + the embedded model). Issue 11: on the demo vault
`memvault search "读书会几点"` ranked the peanut allergy first (score 1.24) because of the
single character 点, above the book-club memory.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from indexer.backends.question_words import FINAL_PARTICLES, QUESTION_WORDS
from indexer.backends.tokenize import analyze_query
from indexer.engine import Engine
from indexer.retrieval.search_query import SearchQuery
from tests.helpers.worlds import open_world
from vault.layout.keys import ScopeId
from vault.writes.demo import GROUP, build_demo
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

BOOK_CLUB_ZH = "读书会每周五晚上七点在图书馆"
PEANUT = "李伟对花生过敏，点餐时要注意"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Vault, Engine]]:
    root = tmp_path_factory.mktemp("cjk") / "memory"
    with open_world(root) as world:
        yield world


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    root = tmp_path_factory.mktemp("demo") / "memory"
    build_demo(root)
    with Engine.open(root) as engine:
        engine.reconcile()
        yield engine


def texts(engine: Engine, query: str, scope: ScopeId, mode: str) -> list[str]:
    return [r.doc.text for r in engine.search(SearchQuery(query, scope, top_k=10, mode=mode))]


def test_demo_book_club_question_does_not_rank_the_peanut_allergy_first(demo: Engine) -> None:
    # The exact case: the book-club memory is in English, so only the vector side
    # can find it; the peanut memory shares nothing with the question but the character 点.
    assert all("花生" not in t for t in texts(demo, "读书会几点", GROUP, "text"))
    hybrid = texts(demo, "读书会几点", GROUP, "hybrid")
    assert "book club" in hybrid[0], hybrid


def test_book_club_question_ranks_the_book_club_first(world: tuple[Vault, Engine]) -> None:
    vault, engine = world
    scope = ScopeId("b1", "group_book")
    book = vault.remember(NewEpisode(scope, BOOK_CLUB_ZH))
    peanut = vault.remember(NewEpisode(scope, PEANUT, importance=5))
    for mode in ("text", "hybrid"):
        ids = [r.doc.episode_id for r in engine.search(SearchQuery("读书会几点", scope, mode=mode))]
        assert ids[0] == book.id, mode
    text_ids = [
        r.doc.episode_id for r in engine.search(SearchQuery("读书会几点", scope, mode="text"))
    ]
    assert peanut.id not in text_ids  # 点 alone is no text match


def test_one_character_query_finds_the_memory_with_that_character(
    world: tuple[Vault, Engine],
) -> None:
    vault, engine = world
    scope = ScopeId("b1", "group_cat")
    cat = vault.remember(NewEpisode(scope, "用户的猫叫小白，喜欢在窗台上睡觉"))
    vault.remember(NewEpisode(scope, "明天下午三点开会"))
    for query in ("猫", "猫 name"):
        ids = [r.doc.episode_id for r in engine.search(SearchQuery(query, scope, mode="text"))]
        assert ids[:1] == [cat.id], query


def test_shared_characters_break_ties_between_bigram_matches(
    world: tuple[Vault, Engine],
) -> None:
    vault, engine = world
    scope = ScopeId("b1", "group_tie")
    # Both hold the word 北京; only one also holds 天 and 气 of the question.
    weather = vault.remember(NewEpisode(scope, "北京今天的空气不好"))
    other = vault.remember(NewEpisode(scope, "北京烤鸭很好吃"))
    hits = engine.search(SearchQuery("北京天气", scope, mode="text"))
    ids = [r.doc.episode_id for r in hits]
    assert ids == [weather.id, other.id]


def test_english_question_finds_the_chinese_memory_in_hybrid(
    world: tuple[Vault, Engine],
) -> None:
    vault, engine = world
    scope = ScopeId("b1", "group_xlang")
    peanut = vault.remember(NewEpisode(scope, PEANUT))
    vault.remember(NewEpisode(scope, BOOK_CLUB_ZH))
    vault.remember(NewEpisode(scope, "The office printer is on the third floor."))
    ids = [
        r.doc.episode_id for r in engine.search(SearchQuery("Who is allergic to peanuts?", scope))
    ]
    assert ids[:1] == [peanut.id]


# Common Han characters; drawn distinct so "shares exactly one character" is exact. None of
# a question word (indexer.backends.question_words: the query loses those before matching).
_ASKING = set("".join(QUESTION_WORDS)) | set(FINAL_PARTICLES)
HAN = [chr(c) for c in range(0x4E00, 0x4E00 + 3000) if chr(c) not in _ASKING]
_EXAMPLES = itertools.count()


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    chars=st.lists(st.sampled_from(HAN), min_size=14, max_size=14, unique=True),
    at=st.integers(0, 3),
    single=st.integers(0, 4),
)
def test_one_shared_character_scores_below_a_shared_bigram(
    world: tuple[Vault, Engine], chars: list[str], at: int, single: int
) -> None:
    vault, engine = world
    # A fresh scope per example: earlier examples' memories must not crowd the top k.
    scope = ScopeId("b1", f"group_prop{next(_EXAMPLES)}")
    query = "".join(chars[:5])
    pad = chars[5:]  # characters the query does not hold
    # `bigram` holds query[at:at+2] inside unrelated text; `one` holds one query character
    # between unrelated ones, so it shares no bigram with the query.
    bigram = vault.remember(
        NewEpisode(scope, "".join(pad[:3]) + query[at : at + 2] + "".join(pad[3:5]))
    )
    one = vault.remember(NewEpisode(scope, "".join(pad[5:7]) + query[single] + "".join(pad[7:9])))
    found = engine.search(SearchQuery(query, scope, top_k=10, mode="text"))
    hits = {r.doc.episode_id: r.score for r in found}
    assert bigram.id in hits
    assert hits.get(one.id, float("-inf")) < hits[bigram.id]
    assert one.id not in hits


def test_a_character_of_a_longer_query_word_never_matches_alone(
    world: tuple[Vault, Engine],
) -> None:
    vault, engine = world
    scope = ScopeId("b1", "group_dot")
    vault.remember(NewEpisode(scope, "点"))
    # 点心 is no question word, so its characters stay query terms: 点 is one of them but only
    # breaks ties (indexer.backends.tokenize.Analysis.tiebreak), and the memory holds no 点心.
    asked = analyze_query("点心")
    assert "点" in asked.words and "点" not in asked.matching and asked.bigrams == ["点心"]
    assert texts(engine, "点心", scope, "text") == []
    assert texts(engine, "点", scope, "text") == ["点"]
