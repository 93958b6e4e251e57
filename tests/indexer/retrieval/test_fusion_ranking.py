"""Golden tests: exact numbers for small inputs, so any change to a formula shows up here."""

import pytest

from indexer.backends.records import Hit
from indexer.retrieval.fusion import Written, conversation_context, rrf, to_unit, zconf
from indexer.retrieval.ranking import (
    RankWeights,
    names_speaker,
    recency_factor,
    recency_hint,
    score,
)

TEXT = [Hit(1, 9.0), Hit(2, 3.0), Hit(3, 2.0)]
VECTOR = [Hit(2, 0.80), Hit(4, 0.79), Hit(1, 0.78)]


def test_rrf_golden():
    fused = rrf({"text": TEXT, "vector": VECTOR}, {"text": 1.0, "vector": 1.0}, k=3)
    got = [(f.chunk_id, round(f.score, 6)) for f in fused]
    assert got == [(2, 0.45), (1, 0.416667), (4, 0.2), (3, 0.166667)]
    assert fused[0].parts["text"] == (2, 3.0, pytest.approx(0.2))
    assert fused[2].parts["text"] == (None, None, 0.0)


def test_zconf_golden():
    # text: z = [1, -1], confidence 1.5; vector: three hits 0.9/0.6/0.3 -> z = [1.2247, 0,
    # -1.2247], confidence 1.7247; chunk 3 is missing from text and gets text's lowest z.
    text = [Hit(1, 4.0), Hit(2, 0.0)]
    vector = [Hit(2, 0.9), Hit(1, 0.6), Hit(3, 0.3)]
    fused = zconf({"text": text, "vector": vector}, {})
    wt, wv = 1.5 / 3.224745, 1.724745 / 3.224745
    assert [(f.chunk_id, round(f.score, 4)) for f in fused] == [
        (1, round(wt * 1 + wv * 0, 4)),
        (2, round(wt * -1 + wv * 1.224745, 4)),
        (3, round(wt * -1 + wv * -1.224745, 4)),
    ]
    assert fused[0].parts["text"][:2] == (1, 4.0)


def test_zconf_single_exact_text_hit_is_not_buried():
    # One text hit (a rare word): it must beat the middle of the vector list it is
    # missing from, and documents the text list lacks must not get its bonus.
    vector = [Hit(10 + i, 0.9 - i / 100) for i in range(10)]
    fused = zconf({"text": [Hit(99, 7.5)], "vector": vector}, {"text": 1.0, "vector": 0.25})
    order = [f.chunk_id for f in fused]
    assert order.index(99) <= 1
    assert fused[order.index(99)].parts["text"][2] > 0
    assert all(f.parts["text"][2] == 0.0 for f in fused if f.chunk_id != 99)


def test_zconf_trusts_the_list_whose_top_stands_out():
    # The text list is sure about chunk 1; the vector list is nearly flat. zconf follows
    # text; equal-weight RRF puts chunk 2 (first in the flat list) on top.
    text = [Hit(1, 9.0), Hit(2, 3.0)] + [Hit(10 + i, 1.0) for i in range(8)]
    vector = [Hit(2, 0.800), Hit(20, 0.799), Hit(1, 0.798)] + [
        Hit(30 + i, 0.797 - i / 1000) for i in range(7)
    ]
    assert zconf({"text": text, "vector": vector}, {})[0].chunk_id == 1
    assert rrf({"text": text, "vector": vector}, {}, k=3)[0].chunk_id == 2


def test_zconf_missing_doc_gets_the_lists_lowest_z():
    fused = {
        f.chunk_id: f for f in zconf({"a": [Hit(1, 1.0), Hit(2, 0.0)], "b": [Hit(3, 5.0)]}, {})
    }
    assert fused[3].parts["a"][0] is None and fused[3].parts["a"][2] < 0


def test_empty_lists_fuse_to_nothing():
    assert zconf({"text": [], "vector": []}, {}) == []
    assert rrf({}, {}) == []


def test_to_unit_maps_best_to_one():
    unit = to_unit(rrf({"t": TEXT}, {}))
    assert unit[1] == 1.0 and unit[3] == pytest.approx(0.05)


def test_recency_factor_golden():
    w = RankWeights(half_life_days=30, decay_floor=0.5)
    assert recency_factor(0, w) == 1.0
    assert recency_factor(30, w) == pytest.approx(0.75)
    assert recency_factor(60, w) == pytest.approx(0.625)
    assert recency_factor(10_000, w) == pytest.approx(0.5)
    assert [recency_hint(d) for d in (0.5, 3, 20, 60, 400, None)] == [
        "fresh",
        "recent",
        "still-relevant",
        "older",
        "old",
        "",
    ]


def test_score_golden_and_explain():
    now = 1_800_000_000
    s = score(
        0.8,
        created_at=now - 30 * 86_400,
        priority="high",
        confidence=0.7,
        tags=["Correction"],
        same_speaker=True,
        now=now,
    )
    assert s.score == pytest.approx(0.8 * 0.75 * 1.2 * 1.0 * 1.12 * 1.08)
    assert s.components == {
        "relevance": 0.8,
        "age_days": 30.0,
        "recency": pytest.approx(0.75),
        "priority": 1.2,
        "confidence": 1.0,  # 0.7, the default of an agent's memory, is neutral
        "speaker": 1.12,
        "named_speaker": 1.0,
        "update": 1.08,
    }
    plain = score(0.8, created_at=0, tags=[], same_speaker=False, now=None)
    assert plain.score == 0.8 and "recency" not in plain.components


def test_profiles_do_not_decay():
    now = 1_800_000_000
    s = score(1.0, created_at=1, tags=[], same_speaker=False, now=now, kind="profile")
    assert s.score == 1.0


def test_conversation_context_golden():
    # 1 and 2 are two speakers' lines 10 minutes apart; 3 is 1's speaker again; 4 is an
    # hour later. 2 gains 0.3 x 1's score; 1 gains 0.3 x 2's; 3 (same speaker as 1, other
    # than 2) gains from 2; 4 is outside every window; 5 is a profile (no `written`).
    hits = [Hit(1, 10.0), Hit(3, 4.0), Hit(2, 2.0), Hit(4, 1.0), Hit(5, 0.5)]
    written = {
        1: Written(1_000, "alice"),
        2: Written(1_600, "bob"),
        3: Written(1_700, "alice"),
        4: Written(1_700 + 3_600, "bob"),
    }
    got, bonus = conversation_context(hits, written, gain=0.3, window_s=1_800)
    assert [(h.chunk_id, round(h.score, 6)) for h in got] == [
        (1, 10.6),
        (2, 5.0),
        (3, 4.6),
        (4, 1.0),
        (5, 0.5),
    ]
    assert bonus == {1: (2, pytest.approx(0.6)), 2: (1, 3.0), 3: (2, pytest.approx(0.6))}


def test_conversation_context_off_or_one_speaker_changes_nothing():
    hits = [Hit(1, 3.0), Hit(2, 1.0)]
    same = {1: Written(0, "user"), 2: Written(0, "user")}
    assert conversation_context(hits, same) == (hits, {})
    both = {1: Written(0, "a"), 2: Written(0, "b")}
    assert conversation_context(hits, both, gain=0.0) == (hits, {})
    unknown = {1: Written(0, ""), 2: Written(0, "b")}
    assert conversation_context(hits, unknown)[1] == {}


def test_names_speaker():
    assert names_speaker("What did John get promoted to?", "John")
    assert names_speaker("What is caroline's identity?", "Caroline")
    assert not names_speaker("What did Johnny do?", "John")
    assert not names_speaker("anything", "")
    assert not names_speaker("a b c", "a")
    assert names_speaker("用户 Bart 喜欢什么", "Bart")


def test_score_named_speaker_factor():
    s = score(0.5, created_at=0, tags=[], same_speaker=False, now=None, named_speaker=True)
    assert s.score == pytest.approx(0.5 * 1.3)
    assert s.components["named_speaker"] == 1.3
