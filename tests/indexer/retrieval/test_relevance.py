"""Absolute relevance (indexer.retrieval.relevance) and zconf-3 (indexer.retrieval.fusion): golden
numbers for
small inputs, class properties, and what a user sees on a real vault (real model, indexes)."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from indexer.backends.records import Hit
from indexer.backends.tokenize import Analysis, analyze_query
from indexer.engine import Engine
from indexer.retrieval import relevance as rel
from indexer.retrieval.fusion import trust, zconf, zconf3
from indexer.retrieval.search_query import SearchQuery
from vault.layout.keys import ScopeId
from vault.writes.create import init_vault
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

# -- golden -------------------------------------------------------------------------------


def test_idf_golden_and_unknown_term_weighs_most():
    assert rel.idf(100, 10) == pytest.approx(math.log(1 + 90.5 / 10.5))
    assert rel.idf(100, 0) > rel.idf(100, 1) > rel.idf(100, 50)


def test_single_cjk_characters_weigh_nothing_next_to_bigrams():
    weights = rel.query_weights(analyze_query("读书会几点"), 1000, {})
    assert {t.field for t in weights.terms} == {rel.BIGRAM_FIELD}
    peanut = rel.doc_terms(["李伟对花生过敏，点餐时要注意"])  # shares only 点
    club = rel.doc_terms(["读书会每周五晚上七点开始"])  # shares 读书, 书会
    assert rel.text_relevance(weights, peanut) == 0.0
    # 2 of 4 equally rare bigrams, total 4 x idf(1000, 0) = 30.4 > saturation 8 -> capped.
    assert rel.text_relevance(weights, club) == pytest.approx(1.0)


def test_a_character_typed_alone_still_counts():
    weights = rel.query_weights(analyze_query("猫"), 10, {("text", "猫"): 1})
    assert [t.term for t in weights.terms] == ["猫"]
    assert rel.text_relevance(weights, rel.doc_terms(["我的猫叫咪咪"])) == 1.0
    mixed = rel.query_weights(analyze_query("猫 北京"), 10, {})
    assert {t.term for t in mixed.terms} == {"猫", "北京"}


def test_text_share_golden():
    # Query weight 4 (below saturation): matched 1 -> 0.25; weight 20 caps at 8 -> 2/8.
    assert rel.text_share(1.0, 4.0) == 0.25
    assert rel.text_share(2.0, 20.0) == 0.25
    assert rel.text_share(9.0, 20.0) == 1.0
    assert rel.text_share(0.0, 0.0) == 0.0


def test_vector_relevance_golden():
    scale = rel.VectorScale(zero=0.1, one=0.6)
    assert rel.vector_relevance(0.35, scale) == pytest.approx(0.5)
    assert rel.vector_relevance(0.05, scale) == 0.0
    assert rel.vector_relevance(0.9, scale) == 1.0


def test_combined_golden_and_floor():
    # rel-2: 0.65 x 0.6 + 0.35 x 0.2 = 0.46 passes the default floor 0.44; with vector 0.1
    # (0.425) it does not.
    r = rel.relevance(0.6, 0.2)
    assert r.value == pytest.approx(0.46)
    assert not rel.relevance(0.6, 0.1).passed
    assert r.passed and rel.passes(0.44) and not rel.passes(0.4399)
    assert rel.relevance(None, None).value == 0.0
    assert r.explain()["version"] == rel.RELEVANCE_VERSION
    assert r.explain()["passed"] is True


unit = st.floats(0, 1, allow_nan=False)


@given(unit, unit, unit, unit)
def test_combined_is_bounded_and_monotone(t1, t2, v1, v2):
    lo = rel.combine(min(t1, t2), min(v1, v2))
    hi = rel.combine(max(t1, t2), max(v1, v2))
    assert 0.0 <= lo <= hi <= 1.0 + 1e-12


words = st.sampled_from(["coffee", "tokyo", "flight", "alic", "cat", "北京", "咖啡", "开会"])


@given(st.lists(words, min_size=1, max_size=6), st.sets(words), st.sets(words))
def test_text_relevance_bounded_and_grows_with_what_the_memory_holds(query, doc, extra):
    analysis = Analysis(
        words=[w for w in dict.fromkeys(query) if w.isascii()],
        bigrams=[w for w in dict.fromkeys(query) if not w.isascii()],
    )
    weights = rel.query_weights(analysis, 50, {})

    def terms(ws):
        return frozenset((rel.WORD_FIELD if w.isascii() else rel.BIGRAM_FIELD, w) for w in ws)

    small = rel.text_relevance(weights, terms(doc))
    assert 0.0 <= small <= rel.text_relevance(weights, terms(doc | extra)) <= 1.0
    assert rel.text_relevance(weights, terms(query)) == pytest.approx(1.0)


def test_zconf3_golden_clueless_list_cannot_outweigh_the_matching_one():
    # Text is sure of chunk 1 (z spread) but its best hit covers 0.1 of the query; the
    # vector list's best (chunk 2) is relevant. zconf-2 follows text, zconf-3 vector.
    text = [Hit(1, 9.0), Hit(2, 3.0)] + [Hit(10 + i, 1.0) for i in range(8)]
    vector = [Hit(2, 0.6), Hit(3, 0.5), Hit(1, 0.2)]
    weights = {"text": 1.0, "vector": 0.25}
    assert zconf({"text": text, "vector": vector}, weights)[0].chunk_id == 1
    fused = zconf3({"text": text, "vector": vector}, weights, {"text": 0.1, "vector": 0.7}, 0.4)
    assert fused[0].chunk_id == 2
    # Says (confidence x weight): text 3.40659 x 1.0, vector 1.48058 x 0.25 = 0.370145.
    # Text (0.1 / 0.4 of the floor) gets 0.25 x the vector's say: weight 0.092536 / 3.40659.
    same = zconf({"text": text, "vector": vector}, {"text": 0.0271639, "vector": 0.25})
    assert [(f.chunk_id, round(f.score, 5)) for f in fused] == [
        (f.chunk_id, round(f.score, 5)) for f in same
    ]


def test_zconf3_equals_zconf2_when_every_list_is_relevant_or_all_are_clueless():
    text = [Hit(1, 4.0), Hit(2, 0.0)]
    vector = [Hit(2, 0.9), Hit(1, 0.6), Hit(3, 0.3)]
    lists = {"text": text, "vector": vector}
    base = [(f.chunk_id, f.score) for f in zconf(lists, {})]
    for quality in ({"text": 0.9, "vector": 0.5}, {"text": 0.0, "vector": 0.0}, {}):
        assert [(f.chunk_id, f.score) for f in zconf3(lists, {}, quality, 0.4)] == base
    assert trust(0.2, 0.4) == 0.5 and trust(0.8, 0.4) == 1.0 and trust(0.1, 0.0) == 1.0


# -- on a real vault ----------------------------------------------------------------------

SCOPE = ScopeId("bot-1", "group_rel")
MEMORIES = [
    "Group B secret codename is Falcon",
    "李伟对花生过敏，点餐时要注意",
    "读书会每周五晚上七点在图书馆三楼开始",
    "Alice adopted a grey cat named Miso last spring",
    "The quarterly report is due on the fifth of March",
    "王芳下个月要去上海出差参加产品发布会",
    "Bob plays the violin in a community orchestra on Sundays",
]


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    root = tmp_path_factory.mktemp("rel") / "memory"
    init_vault(root, git=False)
    vault = Vault(root, git=False)
    eng = Engine.open(root)
    eng.attach(vault)
    for text in MEMORIES:
        vault.remember(NewEpisode(SCOPE, text))
    yield eng
    eng.close()


def _search(engine, query, **kw):
    return engine.search(SearchQuery(query, SCOPE, decay=False, **kw))


@pytest.mark.parametrize("query", ["Tokyo flight?", "hi", "what's 17 times 23?", "thanks!"])
def test_unrelated_message_in_a_populated_chat_passes_nothing(engine, query):
    results = _search(engine, query)
    assert all(r.relevance is not None and not r.relevance.passed for r in results), [
        (r.doc.text, r.relevance) for r in results
    ]


def test_one_shared_character_is_not_relevant_but_the_matching_memory_is(engine):
    by_text = {r.doc.text: r.relevance for r in _search(engine, "读书会几点", top_k=7)}
    assert by_text[MEMORIES[2]].passed
    assert not by_text[MEMORIES[1]].passed
    assert by_text[MEMORIES[1]].text == 0.0


def test_matching_question_passes_with_both_components_explained(engine):
    results = _search(engine, "what is the name of Alice's cat?")
    top = results[0]
    assert top.doc.text == MEMORIES[3]
    assert top.relevance.passed
    shown = top.explain["absolute"]
    assert shown["passed"] is True and shown["floor"] == rel.DEFAULT_FLOOR
    assert shown["text"] > 0 and shown["vector"] > 0
    assert shown["value"] == pytest.approx(rel.combine(shown["text"], shown["vector"]))


def test_english_question_finds_a_chinese_memory_through_the_vector_side(engine):
    results = _search(engine, "Who is allergic to peanuts?", mode="vector")
    assert results[0].doc.text == MEMORIES[1]
    assert results[0].relevance.vector > 0
