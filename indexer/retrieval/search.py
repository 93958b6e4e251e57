"""Hybrid search inside one scope: candidates from both indexes, fused, weighted, grouped.

The scope is a filter inside each index query (SearchBackend.search takes the index_key),
applied before ranking; nothing here ever sees another scope's candidates. A chat's attached
KB libraries (`library_keys`) join that filter: their reference memories and the chat's are
ONE candidate pool per index, fused and scored once, so a lone weak library hit is not
rescaled to a perfect score as a list of its own would be.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from indexer.backends.backend import SearchBackend
from indexer.backends.records import ChunkDoc, Hit
from indexer.gate.rules import GateDecision
from indexer.retrieval.evidence import EVIDENCE_VERSION, query_shape
from indexer.retrieval.exact_match import EXACT_VERSION, exact_kind, tier
from indexer.retrieval.fusion import (
    CONTEXT_GAIN,
    CONTEXT_VERSION,
    CONTEXT_WINDOW_S,
    Written,
    conversation_context,
    to_unit,
)
from indexer.retrieval.ranking import RANK_VERSION, RankWeights, names_speaker, score
from indexer.retrieval.relevance import DEFAULT_FLOOR, Relevance, with_followers
from indexer.retrieval.relevance_judge import Calibrated, Judge
from indexer.retrieval.search_fusion import (
    FUSIONS,
    SHAPE_WEIGHTS,
    fuse,
    indexed_texts,
    list_quality,
)
from indexer.retrieval.search_gate import gate_for, gated

MODES = ("hybrid", "text", "vector")
CANDIDATES = 50
# Text hits read for conversation context (indexer.retrieval.fusion.conversation_context) before the
# list is cut back to the fusion depth: a reply that shares no word with the question is
# found through the question-like line next to it. 200 vs 50: LoCoMo hit@5 +0.2, R@10 +0.6.
CONTEXT_CANDIDATES = 200


@dataclass(frozen=True)
class SearchRequest:
    query: str
    index_key: str  # ScopeId.index_key: never LangBot's user_key, which can collide
    # Index keys of the KB libraries attached to THIS chat's pipeline (knowledge_store.
    # library_scope(kb).index_key): their episodes rank in the same pool as the chat's.
    library_keys: tuple[str, ...] = ()
    top_k: int = 5
    mode: str = "hybrid"
    profile_key: str | None = None  # ScopeId.profile_key: also search this session's profiles
    speaker_id: str = ""
    linked_speakers: tuple[str, ...] = ()  # the same person's other ids (ranking only)
    statuses: tuple[str, ...] = ("active",)
    now: int | None = None  # unix seconds; None = no time decay, no expiry filter
    # zconf4 = zconf-2 with each list's say scaled by its evidence (needs Calibrated).
    fusion: str = "zconf4"
    weights: RankWeights = field(default_factory=RankWeights)
    # None = SHAPE_WEIGHTS of the query's shape.
    source_weights: Mapping[str, float] | None = None

    context_gain: float = CONTEXT_GAIN  # 0 = no conversation context
    context_window_s: int = CONTEXT_WINDOW_S
    # indexer.retrieval.relevance: results below it are marked (SearchResult.relevance.passed).
    floor: float = DEFAULT_FLOOR
    # Field filters (indexer.retrieval.filters) as the chunk ids that pass, applied inside both
    # index queries; None = none asked. Profiles have none of those fields: left out then.
    allowed: frozenset[int] | None = None
    # First chunks of the episodes whose id IS the query (Engine.search reads them from the
    # manifest, within the scope, statuses and filters): found even if no index returns them.
    pinned: tuple[int, ...] = ()
    # The message gate (indexer.gate.rules): on = a message it skips passes no result.
    gate: bool = False

    @property
    def list_weights(self) -> Mapping[str, float]:
        if self.source_weights is not None:
            return self.source_weights
        return SHAPE_WEIGHTS[query_shape(self.query).shape]


@dataclass(frozen=True)
class SearchResult:
    doc: ChunkDoc  # the best-matching chunk of the episode (or the profile)
    score: float
    chunks: tuple[int, ...]
    explain: Mapping[str, Any]
    # Absolute relevance (indexer.retrieval.relevance); None when the engine gave no calibration.
    relevance: Relevance | None = None


def relevance_fields(result: SearchResult) -> dict[str, Any]:
    """`relevance` (absolute, indexer.retrieval.relevance, rounded once here) and `passed` (reaches
    the floor it was searched with): the same two fields in `search --json`, the console's
    /search and the plugin's `retrieve`, so every surface shows one number."""
    if result.relevance is None:
        return {}
    return {"relevance": round(result.relevance.value, 4), "passed": result.relevance.passed}


# One batched read of many candidates' docs (Engine.lookup -> Manifest.docs); ids it does
# not return were removed since the index answered.
Lookup = Callable[[Iterable[int]], Mapping[int, ChunkDoc]]


def _candidates(backend: SearchBackend, request: SearchRequest, depth: int) -> list[Hit]:
    hits = backend.search(
        request.query,
        (request.index_key, *request.library_keys),
        depth,
        statuses=request.statuses,
        kinds=("episode",),
        now=request.now,
        allowed=request.allowed,
    )
    if request.profile_key and request.allowed is None:
        hits += backend.search(
            request.query,
            request.profile_key,
            depth,
            statuses=("active",),
            kinds=("profile", "speaker"),
            now=request.now,
        )
        hits.sort(key=lambda h: -h.score)
    return hits


@dataclass(frozen=True)
class Judged:
    """One search's results and the message gate's decision on its query (None: the gate
    was off, or nothing was judged); indexer.retrieval.outcome says why nothing passed."""

    results: list[SearchResult]
    gate: GateDecision | None = None


def hybrid_search(
    request: SearchRequest,
    backends: Mapping[str, SearchBackend],
    lookup: Lookup,
    depth: int = CANDIDATES,
    calibrated: Calibrated | None = None,
) -> list[SearchResult]:
    return judged_search(request, backends, lookup, depth, calibrated).results


def judged_search(
    request: SearchRequest,
    backends: Mapping[str, SearchBackend],
    lookup: Lookup,
    depth: int = CANDIDATES,
    calibrated: Calibrated | None = None,
) -> Judged:
    """hybrid_search, with the gate's decision even when no candidate came back (a chat
    with no memory still says which rule skipped "hi")."""
    if request.mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)} (got {request.mode!r})")
    if not request.query.strip() or request.top_k < 1:
        return Judged([])
    sources = ("text", "vector") if request.mode == "hybrid" else (request.mode,)
    with_context = request.context_gain > 0
    found: dict[str, list[Hit]] = {}
    for name in sources:
        wide = name == "text" and with_context
        found[name] = _candidates(
            backends[name], request, max(depth, CONTEXT_CANDIDATES) if wide else depth
        )
    # Every candidate's doc in one batched read, not one SELECT per hit (~200 a query):
    # the context step needs the wide text list's, the scoring below the fused ones'.
    docs = lookup({hit.chunk_id for hits in found.values() for hit in hits} | set(request.pinned))
    lists: dict[str, list[Hit]] = {}
    context: dict[int, tuple[int, float]] = {}
    for name, hits in found.items():
        if name == "text" and with_context:
            hits, context = conversation_context(
                hits, _written(hits, docs), request.context_gain, request.context_window_s
            )
        lists[name] = hits[:depth]
    judge = None
    if calibrated is not None:
        scope = (request.index_key, *request.library_keys)
        judge = calibrated.judge(request.query, request.floor, scope=scope)
    quality = list_quality(request.fusion, lists, judge, docs)
    fused = fuse(request.fusion, lists, request.list_weights, quality, request.floor)
    relevance = to_unit(fused)
    # One result per episode FILE: two files stating one id (a person's copy) stay two
    # results, each with its own path, instead of whichever chunk happened to score best.
    by_episode: dict[tuple[str, str], SearchResult] = {}
    for item in fused:
        doc = docs.get(item.chunk_id)
        if doc is None:  # removed between the index answer and now
            continue
        scored = score(
            relevance[item.chunk_id],
            created_at=doc.created_at,
            priority=doc.priority,
            confidence=doc.confidence,
            tags=doc.tags,
            same_speaker=bool(request.speaker_id)
            and (doc.speaker_id == request.speaker_id or doc.speaker_id in request.linked_speakers),
            now=request.now,
            weights=request.weights,
            kind=doc.kind,
            named_speaker=names_speaker(request.query, doc.speaker_name),
        )
        key = (doc.episode_id, doc.path)
        previous = by_episode.get(key)
        if previous is not None and scored.score <= previous.score:
            by_episode[key] = SearchResult(
                previous.doc,
                previous.score,
                (*previous.chunks, item.chunk_id),
                previous.explain,
            )
            continue
        versions = {
            "fusion": _version(request.fusion),
            "rank": RANK_VERSION,
            "evidence": EVIDENCE_VERSION,
        }
        if request.context_gain > 0 and "text" in lists:
            versions["context"] = CONTEXT_VERSION
        source, bonus = context.get(item.chunk_id, (None, 0.0))
        explain = {
            "versions": versions,
            "weights": dict(request.list_weights),
            "shape": judge.shape.shape if judge else query_shape(request.query).shape,
            **({"evidence": quality} if request.fusion == "zconf4" else {}),
            # Part of sources.text.raw that came from the nearby line `from` (chunk id).
            "context": {"gain": request.context_gain, "bonus": bonus, "from": source},
            "fused": item.score,
            "sources": {
                name: {"rank": rank, "raw": raw, "contribution": contribution}
                for name, (rank, raw, contribution) in item.parts.items()
            },
            **scored.components,
            "score": scored.score,
        }
        chunks = (item.chunk_id, *(previous.chunks if previous else ()))
        by_episode[key] = SearchResult(doc, scored.score, chunks, explain)
    _pin(request, docs, by_episode)
    # exact_match_boost (indexer.retrieval.exact_match): an id, then a speaker or tag, the whole
    # query equals comes first; a query that equals none of them ranks exactly as before.
    ranked = sorted(
        (_exact(request.query, r) for r in by_episode.values()),
        key=lambda r: (-tier(_kind(r)), -r.score, r.doc.episode_id, r.doc.path),
    )
    if judge is None:
        return Judged(ranked[: request.top_k])
    decision = gate_for(request.query, lists, docs, judge) if request.gate else None
    judged = [_judged(r, judge, request.floor, decision) for r in ranked[: request.top_k]]
    return Judged(_followers(judged), decision)


def _pin(
    request: SearchRequest,
    docs: Mapping[int, ChunkDoc],
    by_episode: dict[tuple[str, str], SearchResult],
) -> None:
    """Add the pinned episodes (the query is their id) that no index returned."""
    for chunk_id in request.pinned:
        doc = docs.get(chunk_id)
        if doc is None or (doc.episode_id, doc.path) in by_episode:
            continue
        explain = {"versions": {"rank": RANK_VERSION}, "sources": {}, "score": 0.0}
        by_episode[(doc.episode_id, doc.path)] = SearchResult(doc, 0.0, (chunk_id,), explain)


def _exact(query: str, result: SearchResult) -> SearchResult:
    kind = exact_kind(query, result.doc)
    if kind is None:
        return result
    explain = {**result.explain, "exact": {"version": EXACT_VERSION, "match": kind}}
    return SearchResult(result.doc, result.score, result.chunks, explain, result.relevance)


def _followers(results: list[SearchResult]) -> list[SearchResult]:
    """indexer.retrieval.relevance.with_followers over one search's results."""
    rels = [r.relevance for r in results if r.relevance is not None]
    if len(rels) < len(results):
        return results
    out = []
    for result, rel in zip(results, with_followers(rels), strict=True):
        if rel is not result.relevance:
            explain = {**result.explain, "absolute": rel.explain()}
            result = SearchResult(result.doc, result.score, result.chunks, explain, rel)
        out.append(result)
    return out


def _kind(result: SearchResult) -> str | None:
    exact = result.explain.get("exact")
    return exact["match"] if exact else None


def _judged(
    result: SearchResult, judge: Judge, floor: float, decision: GateDecision | None
) -> SearchResult:
    gate = {"gate": decision.explain()} if decision is not None else {}
    if _kind(result) is not None:  # the query IS its id, speaker or tag: relevant by definition
        rel = Relevance(text=None, vector=None, value=1.0, floor=floor, shape=judge.shape.shape)
        explain = {**result.explain, **gate, "absolute": rel.explain()}
        return SearchResult(result.doc, result.score, result.chunks, explain, rel)
    cosine = result.explain["sources"].get("vector", {}).get("raw")
    rel = judge.judge(indexed_texts(result.doc), cosine, (result.doc.speaker_name,))
    rel = gated(rel, decision)
    explain = {**result.explain, **gate, "absolute": rel.explain()}
    return SearchResult(result.doc, result.score, result.chunks, explain, rel)


def _written(hits: Sequence[Hit], docs: Mapping[int, ChunkDoc]) -> dict[int, Written]:
    """Episode hits' time and speaker for conversation_context (profiles take no part)."""
    out: dict[int, Written] = {}
    for hit in hits:
        doc = docs.get(hit.chunk_id)
        if doc is not None and doc.kind == "episode":
            out[hit.chunk_id] = Written(doc.created_at, doc.speaker_id or doc.speaker_name)
    return out


def _version(fusion: str) -> str:
    return FUSIONS.get(fusion, fusion)
