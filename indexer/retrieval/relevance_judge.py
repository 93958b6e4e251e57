"""Judging one query's candidates on indexer.retrieval.relevance's absolute scale: the query's
weighted terms, its shape (indexer.retrieval.evidence), the scope check of its terms, and the
model's cosine
scale. `Calibrated` is what a search engine supplies; `Judge` is one query's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from indexer.backends import tokenize
from indexer.retrieval.evidence import QueryShape, cross_script, query_shape
from indexer.retrieval.relevance import (
    BIGRAM_FIELD,
    CROSS_ALONE,
    DEFAULT_FLOOR,
    NAME_WEIGHT,
    SHAPE_VECTOR,
    VECTOR_ALONE,
    WORD_FIELD,
    QueryWeights,
    Relevance,
    VectorScale,
    doc_terms,
    matched_weight,
    query_weights,
    relevance,
    vector_relevance,
)


@dataclass(frozen=True)
class Judge:
    """Everything one query needs to judge its candidates: its weighted terms (None = no
    text side), the model's cosine scale (None = no vector side) and the floor."""

    weights: QueryWeights | None
    scale: VectorScale | None
    floor: float = DEFAULT_FLOOR
    shape: QueryShape = field(default_factory=lambda: query_shape(""))

    @property
    def alone(self) -> float:
        return SHAPE_VECTOR.get(self.shape.shape, (0.0, VECTOR_ALONE))[1]

    def _names(self, names: Iterable[str]) -> frozenset[tuple[str, str]]:
        # The memory's speaker and the dialogue's speakers: names in either are incidental.
        return doc_terms(names) | {(WORD_FIELD, n) for n in self.shape.names}

    def _crossed(self, texts: Iterable[str]) -> bool:
        return cross_script(self.shape, next(iter(texts), ""))

    def _matched(
        self, weights: QueryWeights, texts: tuple[str, ...], names: Iterable[str], weight: float
    ) -> float:
        """The query weight the memory holds, its incidental terms counting `weight`."""
        crossed = self._crossed(texts)
        return matched_weight(weights, doc_terms(texts), self._names(names), weight, crossed)

    def text(self, texts: Iterable[str], names: Iterable[str] = ()) -> float | None:
        """`texts`: what the text index holds for the memory (its text first); `names`: its
        speaker's."""
        if self.weights is None:
            return None
        return self.weights.share(self._matched(self.weights, tuple(texts), names, NAME_WEIGHT))

    def content(self, texts: Iterable[str], names: Iterable[str] = ()) -> float:
        """The share of a full match the memory holds in CONTENT terms (incidental ones count
        nothing): a text list's evidence for indexer.retrieval.fusion's zconf-4."""
        if self.weights is None:
            return 0.0
        return self.weights.share(self._matched(self.weights, tuple(texts), names, 0.0))

    def vector(self, cosine: float | None) -> float | None:
        if self.scale is None or cosine is None:
            return None
        return vector_relevance(cosine, self.scale)

    def judge(
        self, texts: Iterable[str], cosine: float | None, names: Iterable[str] = ()
    ) -> Relevance:
        vector = self.vector(cosine)
        if self.weights is None:
            return replace(relevance(None, vector, self.floor, self.alone), shape=self.shape.shape)
        texts = tuple(texts)
        weights = self.weights
        matched = self._matched(weights, texts, names, NAME_WEIGHT)
        # Across scripts the text side can only ever match names: the vector side decides.
        alone = CROSS_ALONE if self._crossed(texts) else self.alone
        rel = relevance(weights.share(matched), vector, self.floor, alone)
        return replace(
            rel, matched=matched, query_weight=weights.total, needed=weights.needed,
            shape=self.shape.shape,
        )  # fmt: skip


PRESENCE_TERMS = 32  # query terms checked against the scope (_with_absent)


def _with_absent(
    weights: QueryWeights,
    freq: Mapping[tuple[str, str], int],
    presence: Presence,
    scope: Sequence[str],
) -> QueryWeights:
    """`weights` with `absent` = the weight of its terms the index holds elsewhere but no
    memory of `scope` does (a term no memory anywhere holds may be a typo: not counted),
    and `held` = the terms a memory of `scope` holds."""
    known = [t for t in weights.terms if freq.get((t.field, t.term), 0) > 0]
    # One index query a term: a pasted essay checks its PRESENCE_TERMS weightiest only (the
    # rest could not move a match capped at TEXT_SATURATION anyway).
    known = sorted(known, key=lambda t: -t.weight)[:PRESENCE_TERMS]
    held = presence([(t.field, t.term) for t in known], scope)
    absent = sum(t.weight for t in known if (t.field, t.term) not in held)
    return QueryWeights(weights.terms, weights.evidence, absent, held, weights.num_docs)


TermStats = Callable[[Iterable[tuple[str, str]]], tuple[int, dict[tuple[str, str], int]]]
# (terms, the scope's index keys) -> the terms some memory of the scope holds.
Presence = Callable[[Iterable[tuple[str, str]], Sequence[str]], frozenset[tuple[str, str]]]


@dataclass(frozen=True)
class Calibrated:
    """What a search engine supplies so each query can be judged: the text index's term
    statistics and the embedding model's cosine scale."""

    term_stats: TermStats
    scale: VectorScale
    presence: Presence | None = None  # None: no scope check (every term counts as held)

    def judge(
        self,
        query: str,
        floor: float = DEFAULT_FLOOR,
        *,
        text: bool = True,
        scope: Sequence[str] = (),
    ) -> Judge:
        """`scope`: the index keys searched, for the absent-term demand (messages only)."""
        weights = None
        shape = query_shape(query)
        if text:
            analysis = tokenize.analyze_query(query)
            keys = [(WORD_FIELD, t) for t in analysis.words]
            keys += [(BIGRAM_FIELD, t) for t in analysis.bigrams]
            num_docs, freq = self.term_stats(keys)
            weights = query_weights(analysis, num_docs, freq)
            if self.presence is not None and scope and shape.shape == "message":
                weights = _with_absent(weights, freq, self.presence, scope)
        return Judge(weights, self.scale.for_shape(shape.shape), floor, shape)
