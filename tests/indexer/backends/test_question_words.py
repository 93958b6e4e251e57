"""Chinese question words leave a query before its bigrams are formed
(indexer.backends.question_words),
as English stop words do: "读书会几点" must find the book club as well as "book club meeting
time" does (newcomer walk-through: 0.32 relevance, below the floor, because 几点 and the
boundary bigram 会几 occur in no memory and weighed the most). Real vault and engine."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from indexer.backends.question_words import (
    FINAL_PARTICLES,
    QUESTION_WORDS,
    strip_question_words,
)
from indexer.backends.tokenize import analyze_query
from indexer.engine import Engine
from indexer.retrieval.search_query import SearchQuery
from tests.helpers.worlds import open_world
from vault.layout.keys import ScopeId
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

BOOK_CLUB = "读书会每周五晚上七点在图书馆"
OTHERS = (
    "李伟对花生过敏，点餐时要注意",
    "明天下午三点开会，地点在三楼会议室",
    "小红的生日是六月十二号",
    "办公室的打印机在二楼",
    "王老师下周去上海出差",
)


@pytest.mark.parametrize(
    ("query", "bigrams"),
    [
        ("读书会几点", ["读书", "书会"]),  # 会几 and 几点 gone
        ("读书会什么时候开始", ["读书", "书会", "开始"]),
        ("為什麼讀書會改期了呢", ["讀書", "書會", "會改", "改期", "期了"]),
        ("你去北京吗？", ["你去", "去北", "北京"]),
        ("吗啡是什么", ["吗啡", "啡是"]),  # 吗 starting a word is no particle
        ("去酒吧", ["去酒", "酒吧"]),  # 吧 is left alone: 酒吧 is a word
        ("了解一下", ["了解", "解一", "一下"]),
        ("book club 几点", []),
    ],
)
def test_question_words_leave_the_query_terms(query: str, bigrams: list[str]) -> None:
    assert analyze_query(query).bigrams == bigrams


def test_a_character_left_alone_by_a_question_word_stays_a_tiebreaker() -> None:
    # 现在几点了 -> "现在 了": 了 was part of the typed run, not a word typed on its own
    analysis = analyze_query("现在几点了")
    assert analysis.bigrams == ["现在"] and "了" in analysis.tiebreak


QUESTION_CHARS = set("".join(QUESTION_WORDS)) | set(FINAL_PARTICLES)
PLAIN_HAN = st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF).filter(
    lambda c: c not in QUESTION_CHARS
)


@given(st.lists(st.one_of(PLAIN_HAN, st.sampled_from(QUESTION_WORDS), st.just(" ")), max_size=12))
def test_no_question_word_survives_and_nothing_else_changes(parts: list[str]) -> None:
    query = "".join(parts)
    out = strip_question_words(query)
    assert not any(w in out for w in QUESTION_WORDS)
    # everything else stays, in order: only question words became spaces
    assert re.sub(r"\s+", "", out) == re.sub(r"\s+", "", "".join(
        p for p in parts if p not in QUESTION_WORDS
    ))  # fmt: skip


@given(st.text(PLAIN_HAN, max_size=12))
def test_a_query_without_question_words_is_unchanged(text: str) -> None:
    assert strip_question_words(text) == text


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Vault, Engine]]:
    with open_world(tmp_path_factory.mktemp("qw") / "memory") as world:
        yield world


@pytest.mark.parametrize("question", ["读书会几点", "读书会什么时候？", "请问读书会几点"])
def test_a_chinese_question_finds_its_memory_above_the_floor(world, question: str) -> None:
    vault, engine = world
    scope = ScopeId("b1", "group_book")
    if not vault.load_episodes(scope)[0]:
        for text in (BOOK_CLUB, *OTHERS):
            vault.remember(NewEpisode(scope, text))
    for mode in ("hybrid", "text"):  # text alone too: the words carry it, not the vector
        (first, *_) = engine.search(SearchQuery(question, scope, top_k=5, mode=mode))
        assert first.doc.text == BOOK_CLUB, mode
        assert first.relevance is not None and first.relevance.passed, (mode, first.relevance)


def test_a_question_only_of_question_words_matches_nothing_by_text(world) -> None:
    vault, engine = world
    scope = ScopeId("b1", "group_book")
    assert engine.search(SearchQuery("什么时候？", scope, top_k=5, mode="text")) == []
