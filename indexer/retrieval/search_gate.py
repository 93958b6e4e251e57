"""The message gate (indexer.gate.rules) inside a search: its vocabulary from the chat, and
what a skip does to the results.

The gate needs to know the people and the specific things of the chat. Both come from what
the search already read, at no extra index cost: the speakers of the candidate memories
(the text index holds every speaker's name, so a query naming one finds their memories),
and the query's rare terms that a memory of the scope holds (indexer.retrieval.relevance's presence
check, done for single messages). A skipped query still ranks (a person looking at
`search --explain` sees what would have come), but no result passes: nothing is injected.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from indexer.backends.records import ChunkDoc, Hit
from indexer.gate.rules import GateDecision, decide
from indexer.retrieval.relevance import Relevance, idf
from indexer.retrieval.relevance_judge import Judge

# A held query term is a "thing the chat knows" when it is this rare in the whole index:
# its idf at least this share of a word only one memory holds (at 6,000 memories: held by
# about 12 of them or fewer). Common words ("good", "name") never make a message pass.
RARE_SHARE = 0.75


def names_in(lists: Mapping[str, Sequence[Hit]], docs: Mapping[int, ChunkDoc]) -> list[str]:
    """Speaker names (and ids) of the candidate memories, each once."""
    seen: dict[str, None] = {}
    for hits in lists.values():
        for hit in hits:
            doc = docs.get(hit.chunk_id)
            if doc is None:
                continue
            for name in (doc.speaker_name, doc.speaker_id):
                if name:
                    seen.setdefault(name, None)
    return list(seen)


def known_terms(judge: Judge | None) -> frozenset[str]:
    """The query's rare terms that a memory of the scope holds."""
    if judge is None or judge.weights is None or not judge.weights.held:
        return frozenset()
    weights = judge.weights
    rare = RARE_SHARE * idf(weights.num_docs, 1)
    return frozenset(
        t.term for t in weights.terms if (t.field, t.term) in weights.held and t.weight >= rare
    )


def gate_for(
    query: str,
    lists: Mapping[str, Sequence[Hit]],
    docs: Mapping[int, ChunkDoc],
    judge: Judge | None,
) -> GateDecision:
    return decide(query, names_in(lists, docs), known_terms(judge))


def gated(relevance: Relevance, decision: GateDecision | None) -> Relevance:
    """`relevance` marked as gated when the gate skipped the query."""
    if decision is None or decision.recall:
        return relevance
    return replace(relevance, gated=True)
