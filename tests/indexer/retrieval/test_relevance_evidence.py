"""rel-2 (indexer.retrieval.relevance): a light query needs a minimum of evidence, and the memory's
own
speaker name is weak evidence. Golden numbers and class properties."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from indexer.backends.tokenize import analyze_query
from indexer.retrieval import relevance as rel
from indexer.retrieval.relevance_judge import Judge

N = 5882  # LoCoMo's turns: a chat that has talked a lot


def test_a_fully_matched_common_word_is_not_a_full_match():
    # "thanks!" against "Thanks, Melanie!" in a chat where 600 turns thank someone: rel-1
    # called this a full text match (0.6 alone passed its floor); now it is one common
    # word's share of TEXT_EVIDENCE x the weight of a word only one memory holds.
    weights = rel.query_weights(analyze_query("thanks!"), N, {("text", "thank"): 600})
    turn = rel.doc_terms(["Thanks, Melanie!"])
    expected = rel.idf(N, 600) / (rel.evidence_minimum(N))
    assert rel.text_relevance(weights, turn) == pytest.approx(expected)
    assert expected < 0.3
    assert weights.needed == pytest.approx(rel.evidence_minimum(N))
    assert not rel.relevance(rel.text_relevance(weights, turn), 0.5).passed


def test_rare_words_still_make_a_full_match():
    freq = {("text", "tokyo"): 3, ("text", "flight"): 4}
    weights = rel.query_weights(analyze_query("Tokyo flight?"), N, freq)
    memory = rel.doc_terms(["Alice's flight to Tokyo leaves on Friday"])
    assert rel.text_relevance(weights, memory) == 1.0
    # In a chat this large a word of one memory weighs 8.27 > TEXT_SATURATION: it rules.
    assert weights.needed == pytest.approx(rel.evidence_minimum(N))
    assert weights.needed > rel.TEXT_SATURATION


def test_the_evidence_minimum_fades_in_with_the_vaults_size():
    # N = 5882: the weight of a word one memory holds (8.27); a vault of 5 memories, all on
    # one topic, cannot tell a common word from the topic: a full match stays full.
    assert rel.evidence_minimum(N) == pytest.approx(rel.idf(N, 1))
    assert rel.evidence_minimum(500) == pytest.approx(0.5 * rel.idf(500, 1))
    weights = rel.query_weights(
        analyze_query("team meeting"), 5, dict.fromkeys([("text", "team"), ("text", "meet")], 5)
    )
    assert rel.text_relevance(weights, rel.doc_terms(["The team meeting moved"])) == 1.0
    sizes = [rel.evidence_minimum(n) for n in (0, 1, 10, 100, 1000, 10_000)]
    assert sizes == sorted(sizes) and sizes[0] == 0.0


def test_the_memorys_own_speaker_name_counts_name_weight():
    freq = {("text", "carolin"): 50, ("text", "research"): 5}
    weights = rel.query_weights(analyze_query("what did Caroline research?"), 100, freq)
    judge = Judge(weights, None)
    texts = ["Caroline: I researched adoption agencies", "Caroline"]
    named = judge.judge(texts, None, ["Caroline"])
    plain = judge.judge(texts, None)
    name, word = rel.idf(100, 50), rel.idf(100, 5)
    assert plain.matched == pytest.approx(name + word)
    assert named.matched == pytest.approx(rel.NAME_WEIGHT * name + word)
    assert named.text == pytest.approx(named.matched / named.needed)
    assert named.explain()["needed"] == pytest.approx(max(name + word, rel.evidence_minimum(100)))
    # A turn that holds only the name: "Caroline" on every one of her turns is no evidence
    # that this one is about research.
    only_name = judge.text(["Caroline: hi there", "Caroline"], ["Caroline"])
    assert only_name == pytest.approx(rel.NAME_WEIGHT * name / named.needed)


def test_a_near_duplicate_meaning_passes_without_shared_words():
    # 0.55 x 0.9 = 0.495 (vector alone) >= 0.44; 0.55 x 0.75 = 0.4125 is not; text adds.
    assert rel.relevance(None, 0.9).value == pytest.approx(0.495)
    assert rel.relevance(0.0, 0.9).passed
    assert not rel.relevance(0.0, 0.75).passed
    assert rel.relevance(0.3, 0.8).value == pytest.approx(0.65 * 0.3 + 0.35 * 0.8)


words = st.sampled_from(["coffee", "tokyo", "flight", "carolin", "melani", "北京", "咖啡"])
freqs = st.integers(0, 200)


@given(st.lists(words, min_size=1, max_size=6), st.sets(words), st.sets(words), freqs)
def test_names_and_the_evidence_minimum_never_raise_relevance(query, doc, names, df):
    analysis = analyze_query(" ".join(query))
    keys = [(rel.WORD_FIELD, t) for t in analysis.words]
    keys += [(rel.BIGRAM_FIELD, t) for t in analysis.bigrams]
    weights = rel.query_weights(analysis, 200, dict.fromkeys(keys, df))
    held = rel.doc_terms([" ".join(doc)])
    named = rel.doc_terms([" ".join(names)])
    with_names = rel.text_relevance(weights, held, named)
    assert 0.0 <= with_names <= rel.text_relevance(weights, held) <= 1.0
    matched = rel.matched_weight(weights, held)
    minimum = weights.evidence
    assert rel.text_share(matched, weights.total, minimum) <= rel.text_share(matched, weights.total)
