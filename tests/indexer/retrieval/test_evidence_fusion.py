"""Issue 21's pure pieces, golden: the query shape and incidental terms
(indexer.retrieval.evidence),
zconf-4 (fusion follows the list with content evidence), rel-3 (absent-term demand, the
vector side across scripts and for dialogues) and the one wording of the verdict."""

import pytest

from indexer.backends.records import Hit
from indexer.backends.tokenize import analyze_query
from indexer.retrieval import relevance as rel
from indexer.retrieval.evidence import cross_script, incidental, query_shape, script
from indexer.retrieval.fusion import FULL_EVIDENCE, evidence_trust, zconf, zconf4
from indexer.retrieval.relevance_judge import Calibrated, Judge
from indexer.retrieval.verdict import floor_words, gate_words, verdict_words

DIALOGUE = '<BOD>\n<Bart>: "I went skiing!"\n<Assistant>: "Fun!"\n<Bart>: "It was cold."\n'


def test_a_dialogue_needs_two_tagged_lines_and_only_then_names_anyone():
    shape = query_shape(DIALOGUE)
    assert (shape.shape, shape.script) == ("dialogue", "latin")
    assert "bart" in shape.names
    one = query_shape("Note: buy milk")
    assert (one.shape, one.names) == ("message", frozenset())
    assert query_shape("Alice: hi\nBob: 你好吗").shape == "dialogue"


def test_script_and_cross_script():
    assert script("李伟下周三要在上海做演讲") == "cjk"
    assert script("Alice 去北京出差三天") == "cjk"  # more Han than Latin letters
    assert script("Alice moved her trip") == "latin"
    assert script("12:30 !!") == ""
    english = query_shape("who is speaking in Shanghai")
    assert cross_script(english, "李伟下周三要在上海做产品发布会的演讲。")
    assert not cross_script(english, "Li Wei speaks in Shanghai")
    assert not cross_script(query_shape("2026?"), "李伟")  # no script: never crossed


def test_incidental_terms_are_names_numbers_and_anything_across_scripts():
    assert incidental("bart", {"bart"})
    assert incidental("2023")
    assert incidental("ski", (), crossed=True)
    assert not incidental("ski", {"bart"})


def test_evidence_trust_golden():
    assert evidence_trust(0.0) == 0.0
    assert evidence_trust(FULL_EVIDENCE / 2) == pytest.approx(0.5)
    assert evidence_trust(0.9) == 1.0


def test_zconf4_follows_the_vector_list_when_text_matched_only_names():
    # The text list ranks 1 first on a name alone; the vector list is sure about 2.
    text = [Hit(1, 9.0), Hit(3, 8.0), Hit(2, 1.0)]
    vector = [Hit(2, 0.6), Hit(4, 0.3), Hit(1, 0.25)]
    weights = {"text": 1.0, "vector": 0.1}
    assert zconf({"text": text, "vector": vector}, weights)[0].chunk_id == 1
    fused = zconf4({"text": text, "vector": vector}, weights, {"text": 0.0})
    assert [f.chunk_id for f in fused][:2] == [2, 4]
    assert fused[0].parts["text"][2] == 0.0  # text had no say at all
    # With content evidence the text list keeps its full say: zconf exactly.
    full = zconf4({"text": text, "vector": vector}, weights, {"text": 0.8})
    assert [(f.chunk_id, f.score) for f in full] == [
        (f.chunk_id, f.score) for f in zconf({"text": text, "vector": vector}, weights)
    ]


def test_zconf4_with_no_evidence_anywhere_keeps_the_priors():
    text, vector = [Hit(1, 2.0), Hit(2, 1.0)], [Hit(2, 0.5), Hit(1, 0.4)]
    fused = zconf4({"text": text, "vector": []}, {"text": 1.0}, {"text": 0.0})
    assert [f.chunk_id for f in fused] == [1, 2]
    assert zconf4({"text": text, "vector": vector}, {}, {}) == zconf(
        {"text": text, "vector": vector}, {}
    )


def _weights(query: str, freq: dict, num_docs: int = 2000) -> rel.QueryWeights:
    return rel.query_weights(analyze_query(query), num_docs, freq)


def test_a_word_other_chats_use_but_this_one_never_did_raises_the_demand():
    freq = {(rel.WORD_FIELD, "church"): 5, (rel.WORD_FIELD, "friend"): 300}
    weights = _weights("activities with church friends", freq)
    judge = Judge(weights, None)

    def present(keys, scope):
        return frozenset(k for k in keys if k[1] != "church")  # the chat never said church

    stats = lambda keys: (2000, {k: freq.get(k, 0) for k in keys})  # noqa: E731
    cal = Calibrated(stats, rel.VectorScale(0.1, 0.6), present)
    demanding = cal.judge("activities with church friends", scope=("k",))
    memory = ["Nate: old friends and their activities"]
    plain, asked = judge.judge(memory, None), demanding.judge(memory, None)
    absent = rel.idf(2000, 5)
    assert demanding.weights.absent == pytest.approx(absent)
    assert asked.needed == pytest.approx(plain.needed + rel.ABSENT_WEIGHT * absent)
    assert asked.text == pytest.approx(asked.matched / asked.needed)
    assert asked.value < plain.value
    # A dialogue context gets no such demand (it is about many things at once).
    assert cal.judge(DIALOGUE, scope=("k",)).weights.absent == 0.0


def test_across_scripts_the_vector_side_counts_fully():
    scale = rel.VectorScale(zero=0.1, one=0.6)
    cal = Calibrated(lambda keys: (10, {}), scale)
    judge = cal.judge("who is speaking in Shanghai")
    same = judge.judge(["Li Wei gives a talk"], 0.4)
    crossed = judge.judge(["李伟下周三要在上海做演讲"], 0.4)
    assert crossed.value == pytest.approx(0.6)  # (0.4 - 0.1) / 0.5
    assert same.value == pytest.approx(rel.VECTOR_ALONE * 0.6)
    assert crossed.passed and not same.passed


def test_a_dialogues_vector_scale_comes_down():
    scale = rel.VectorScale(zero=0.1, one=0.6)
    assert scale.for_shape("message") == scale
    assert scale.for_shape("dialogue") == rel.VectorScale(0.1, pytest.approx(0.3))
    judge = Calibrated(lambda keys: (10, {}), scale).judge(DIALOGUE)
    got = judge.judge(["Bart went skiing"], 0.25)
    assert got.vector == pytest.approx(0.75) and got.shape == "dialogue"


def test_verdict_words_are_one_wording():
    gate = {"recall": False, "reason": "greeting", "rule": "social.greeting", "version": "g"}
    absolute = {"floor": 0.44, "shape": "message", "value": 0.2, "passed": False}
    assert gate_words(gate) == "gate: skipped: greeting"
    assert gate_words(None) == "gate: off"
    dialogue = floor_words({**absolute, "shape": "dialogue"})
    assert dialogue == "floor 0.44 for a dialogue (runners-up 0.33)"
    assert verdict_words([{"gate": gate, "absolute": absolute}]) == (
        "gate: skipped: greeting; floor 0.44 for a single message (runners-up 0.33)"
    )
    assert verdict_words([{"absolute": absolute}]).startswith("gate: off; floor 0.44")
    assert verdict_words([]) == ""


def test_runners_up_pass_only_after_a_result_that_reached_the_floor():
    def r(value: float, gated: bool = False) -> rel.Relevance:
        return rel.Relevance(None, None, value, 0.44, gated=gated)

    got = rel.with_followers([r(0.34), r(0.5), r(0.34), r(0.32), r(0.9)])
    assert [x.passed for x in got] == [False, True, True, False, True]
    assert [x.follows for x in got] == [False, False, True, False, False]
    assert not any(x.passed for x in rel.with_followers([r(0.9, True), r(0.5, True)]))
    assert [x.passed for x in rel.with_followers([r(0.3), r(0.2)])] == [False, False]
