"""Absolute relevance: how well one memory matches one query, on a scale that means the same
for every query, scope and vault (unlike fusion's rank-normalised score, whose best hit is
always 1). Pure and versioned; `explain()` keeps every component.

- text: the share of the query's idf weight whose terms the memory holds, where a memory
  holding TEXT_SATURATION of weight counts as a full match however long the query is (a
  whole pasted dialogue cannot be covered by one memory; two rare shared words can), and a
  query lighter than TEXT_EVIDENCE x the weight of a term only one memory holds ("thanks!",
  "hi") must still match that much: a full match of one common word is little evidence,
  a word of one memory is enough. Only a vault of EVIDENCE_DOCS memories or more gets the
  whole minimum (it fades in linearly): in a small one idf cannot tell a common word from
  the topic (five memories of one team meeting all say "meeting"). A query term that is
  the memory's own speaker name counts NAME_WEIGHT (in a chat's scope the speakers' names
  are on every turn: "what did Caroline research?" must match more than "Caroline" in
  Caroline's memories). Stop words never reach the query (indexer.backends.tokenize drops them); a
  character of a longer CJK run carries no weight (tokenize's tie-breakers: one shared 点
  is not evidence), one typed alone (猫) does; a term absent from the whole index weighs
  the most and matches nothing, so "what's 17 times 23?" covers little.
- vector: cosine placed between the embedding model's mean cosine of unrelated sentences
  (0) and its near-duplicate line (1), both from indexer.backends.calibration.
- combined: TEXT_SHARE x text + (1 - TEXT_SHARE) x vector (a side not measured counts 0),
  or VECTOR_ALONE x vector if more, so a near-duplicate meaning passes without shared
  words (an English question, a Chinese memory); a memory passes when it reaches the
  floor. (A product of the two sides was measured and rejected: a quarter of LoCoMo's
  answers are no vector candidate at all.)

rel-3 adds, each measured on ../shared/bench through bench/retrieval/replay:
- incidental terms (indexer.retrieval.evidence: names, bare numbers, any word across scripts) count
  NAME_WEIGHT on the text side;
- per query shape (SHAPE_VECTOR): a dialogue context's vector scale comes down and its vector
  side counts alone in full; a memory in another script than the query takes its vector side
  alone in full (CROSS_ALONE);
- a single message's words that other chats use but this chat never did raise what a full
  match needs (ABSENT_WEIGHT; the scope check lives in indexer.retrieval.relevance_judge);
- runners-up (with_followers): after a result that reached the floor, the next ones pass
  from FOLLOW_SHARE of it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from indexer.backends import tokenize
from indexer.backends.calibration import Calibration
from indexer.retrieval.evidence import incidental

RELEVANCE_VERSION = "rel-3"
# The one default floor (plugin setting overrides it): chosen on the measured curve in
# bench/retrieval/abstain.py (bench/results/relevance.json).
DEFAULT_FLOOR = 0.44
# Measured on ../shared/bench (bench/retrieval/abstain.py; rel-1 grid C 6-12, share
# 0.4-0.6; rel-2 replay grid evidence 0-1.5, name weight 0-1, share 0.5-0.8, floor
# 0.3-0.55): these kept injected hit@5 within 2 points of plain hit@5 on LoCoMo and MADial
# zh/en while abstaining the most; rel-1 (no evidence minimum, names at full weight, share
# 0.6, floor 0.4) abstained 57 % / 3 % on LoCoMo chat / swapped questions, rel-2 65 / 14.
TEXT_SATURATION = 8.0
TEXT_EVIDENCE = 1.0
EVIDENCE_DOCS = 1000
NAME_WEIGHT = 0.5
TEXT_SHARE = 0.65
# Vector relevance 0.8 alone reaches the default floor (cost on the curve: 0.4 points of
# abstention on LoCoMo chat, 0.6 on swapped questions, no hit@5).
VECTOR_ALONE = 0.55
# rel-3: a single message's terms that other chats use but this one never did count
# ABSENT_WEIGHT x their weight on top of a full match (QueryWeights.absent). LoCoMo's
# questions asked in the next conversation (names swapped) abstained 15.8 % -> 41.3 %,
# injected hit@5 63.4 -> 62.0 (bench/retrieval/replay; 0.25: 32.9 % / 62.6, 0.6: 49.0 / 61.5).
ABSENT_WEIGHT = 0.4
# rel-3: a query and a memory in different scripts (indexer.retrieval.evidence) share only names, so
# the vector side alone counts fully: "who is speaking in Shanghai" finds 李伟下周三要在上海
# 做产品发布会的演讲 at vector 0.6, which rel-2 scaled to 0.33, below the floor.
CROSS_ALONE = 1.0
# rel-3: once a result reached the floor, the others of its search pass from this share of
# it (with_followers). 0.75 lifted LoCoMo injected hit@5 62.0 -> 63.9 (plain 65.5) and the
# cross-language sets to their hybrid hit@5; abstention is unchanged by construction.
FOLLOW_SHARE = 0.75
# rel-3, per query shape (indexer.retrieval.evidence): `reach` = how far the vector scale's `one`
# comes down towards `zero`, `alone` = the share of the vector side that passes with no text
# match. A dialogue context's best cosine is lower for the same match and crosses languages
# (an English dialogue, Chinese memories: the text side shares only names), so its vector
# side counts fully on a scale brought down 0.6 of the way: English-on-Chinese injected
# hit@5 0.6 -> 78.1 (hybrid 79.4), Chinese-on-English 0.7 -> 75.7 (77.0). A single message
# keeps rel-2's calibration (everyday chat is single messages).
SHAPE_VECTOR: Mapping[str, tuple[float, float]] = {
    "message": (0.0, VECTOR_ALONE),
    "dialogue": (0.6, 1.0),
}
WORD_FIELD = "text"
BIGRAM_FIELD = "text_cjk2"


@dataclass(frozen=True)
class QueryTerm:
    field: str  # WORD_FIELD | BIGRAM_FIELD
    term: str
    weight: float  # idf x kind factor


@dataclass(frozen=True)
class QueryWeights:
    terms: tuple[QueryTerm, ...]
    evidence: float = 0.0  # evidence_minimum() of the index
    # Weight of the terms other chats use but no memory of this one holds (rel-3, single
    # messages only): what the question asks about is not something this chat talked of.
    absent: float = 0.0
    held: frozenset[tuple[str, str]] = frozenset()  # terms a memory of the scope holds
    num_docs: int = 0  # memories in the index the weights were computed on

    @property
    def total(self) -> float:
        return sum(t.weight for t in self.terms)

    @property
    def needed(self) -> float:
        """The matched weight that counts as a full text match for this query."""
        return full_match(self.total, self.evidence) + ABSENT_WEIGHT * self.absent

    def share(self, matched: float) -> float:
        """`matched` weight as a share of a full text match (text_share), at most 1."""
        return text_share(matched, self.total, self.evidence, self.absent)


@dataclass(frozen=True)
class VectorScale:
    """Cosine -> (0..1): `zero` = the model's mean cosine of unrelated texts, `one` = its
    near-duplicate line."""

    zero: float
    one: float

    @classmethod
    def of(cls, calibration: Calibration) -> VectorScale:
        return cls(calibration.mean, calibration.threshold)

    def for_shape(self, shape: str) -> VectorScale:
        """The scale for a query of `shape`: `one` SHAPE_VECTOR's reach of the way down."""
        reach = SHAPE_VECTOR.get(shape, (0.0, VECTOR_ALONE))[0]
        return VectorScale(self.zero, self.one - reach * (self.one - self.zero))


@dataclass(frozen=True)
class Relevance:
    text: float | None  # None = not measured (no text side in this search)
    vector: float | None  # None = the memory was not a vector candidate
    value: float
    floor: float
    matched: float | None = None  # idf weight of the query terms the memory holds
    query_weight: float | None = None  # idf weight of all the query's terms
    needed: float | None = None  # matched weight that counts as a full text match
    # The message gate (indexer.gate.rules) skipped episode recall for this query: nothing
    # passes, whatever the value.
    gated: bool = False
    shape: str = "message"  # indexer.retrieval.evidence: the query shape whose calibration applied
    # Another result of the same search reached the floor and this one reaches
    # FOLLOW_SHARE of it (with_followers): it passes as that memory's runner-up.
    follows: bool = False

    @property
    def passed(self) -> bool:
        return not self.gated and (passes(self.value, self.floor) or self.follows)

    def explain(self) -> dict[str, Any]:
        return {
            "version": RELEVANCE_VERSION,
            "text": self.text,
            "vector": self.vector,
            "matched": self.matched,
            "query_weight": self.query_weight,
            "needed": self.needed,
            "value": self.value,
            "floor": self.floor,
            "shape": self.shape,
            "gated": self.gated,
            "follows": self.follows,
            "passed": self.passed,
        }


def idf(num_docs: int, doc_freq: int) -> float:
    """BM25's idf as tantivy computes it; a term in no document gets the largest weight."""
    n = max(num_docs, doc_freq, 1)
    return math.log(1.0 + (n - doc_freq + 0.5) / (doc_freq + 0.5))


def query_weights(
    analysis: tokenize.Analysis, num_docs: int, doc_freq: Mapping[tuple[str, str], int]
) -> QueryWeights:
    """Weighted query terms; `doc_freq` maps (field, term) to its document frequency
    (missing = 0)."""
    # indexer.backends.tokenize's tie-breakers (characters of a longer CJK run) are no evidence.
    tiebreak = set(analysis.tiebreak)
    terms = [
        QueryTerm(WORD_FIELD, t, idf(num_docs, doc_freq.get((WORD_FIELD, t), 0)))
        for t in analysis.words
        if t not in tiebreak
    ] + [
        QueryTerm(BIGRAM_FIELD, t, idf(num_docs, doc_freq.get((BIGRAM_FIELD, t), 0)))
        for t in analysis.bigrams
    ]
    kept = tuple(t for t in terms if t.weight > 0)
    return QueryWeights(kept, evidence_minimum(num_docs), num_docs=num_docs)


def evidence_minimum(num_docs: int) -> float:
    """The matched weight a light query still needs for a full text match: TEXT_EVIDENCE x
    a word of one memory, faded in up to EVIDENCE_DOCS memories."""
    return TEXT_EVIDENCE * idf(num_docs, 1) * min(1.0, max(num_docs, 0) / EVIDENCE_DOCS)


def doc_terms(texts: Iterable[str]) -> frozenset[tuple[str, str]]:
    """(field, term) of everything the text index holds for a memory (text, speaker, tags)."""
    out: set[tuple[str, str]] = set()
    for text in texts:
        if text:
            out.update((WORD_FIELD, t) for t in tokenize.word_tokens(text))
            out.update((BIGRAM_FIELD, t) for t in tokenize.cjk_bigrams(text))
    return frozenset(out)


def matched_weight(
    weights: QueryWeights,
    terms: frozenset[tuple[str, str]],
    names: frozenset[tuple[str, str]] = frozenset(),
    incidental_weight: float = NAME_WEIGHT,
    crossed: bool = False,
) -> float:
    """Weight of the query terms the memory holds; an incidental one (a name of `names`, a
    bare number, any word when `crossed`: indexer.retrieval.evidence) counts `incidental_weight` of
    its weight."""
    words = {term for kind, term in names if kind == WORD_FIELD}
    return sum(
        t.weight
        * (
            incidental_weight
            if (t.field, t.term) in names
            or (t.field == WORD_FIELD and incidental(t.term, words, crossed))
            else 1.0
        )
        for t in weights.terms
        if (t.field, t.term) in terms
    )


def full_match(total: float, minimum: float = 0.0) -> float:
    """The query's weight capped at TEXT_SATURATION, but at least `minimum`."""
    return max(min(total, TEXT_SATURATION), minimum)


def text_share(matched: float, total: float, minimum: float = 0.0, absent: float = 0.0) -> float:
    """Matched weight over full_match(total, minimum) + ABSENT_WEIGHT x absent, at most 1."""
    if total <= 0:
        return 0.0
    return min(1.0, matched / (full_match(total, minimum) + ABSENT_WEIGHT * absent))


def text_relevance(
    weights: QueryWeights,
    terms: frozenset[tuple[str, str]],
    names: frozenset[tuple[str, str]] = frozenset(),
) -> float:
    """How much of the query's weight the memory's terms cover, in [0, 1]."""
    return weights.share(matched_weight(weights, terms, names))


def vector_relevance(cosine: float, scale: VectorScale) -> float:
    span = scale.one - scale.zero
    if span <= 0:
        return 0.0
    return min(1.0, max(0.0, (cosine - scale.zero) / span))


def combine(text: float | None, vector: float | None, alone: float = VECTOR_ALONE) -> float:
    both = TEXT_SHARE * (text or 0.0) + (1.0 - TEXT_SHARE) * (vector or 0.0)
    return max(both, alone * (vector or 0.0))


def passes(relevance: float, floor: float = DEFAULT_FLOOR) -> bool:
    return relevance >= floor


def with_followers(found: Sequence[Relevance]) -> list[Relevance]:
    """One search's relevances in rank order, where a result that reaches FOLLOW_SHARE x
    the floor passes too when a result ranked above it reached the floor: that one says the
    chat holds something about the question, its runners-up are the rest of that
    conversation (a multi-hop question needs several turns). Whether anything passes at
    all, and the best-ranked result that does, are still the floor's decision."""
    out, seen = [], False
    for r in found:
        if seen and not r.passed and not r.gated and r.value >= FOLLOW_SHARE * r.floor:
            r = replace(r, follows=True)
        seen = seen or r.passed
        out.append(r)
    return out


def relevance(
    text: float | None,
    vector: float | None,
    floor: float = DEFAULT_FLOOR,
    alone: float = VECTOR_ALONE,
) -> Relevance:
    return Relevance(text, vector, combine(text, vector, alone), floor)
