"""Hybrid search inside one scope: candidates from both indexes, fused, weighted, grouped.

The scope is a filter inside each index query (SearchBackend.search takes the index_key),
applied before ranking; nothing here ever sees another scope's candidates.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from indexer.backend import SearchBackend
from indexer.fusion import (
    CONTEXT_GAIN,
    CONTEXT_VERSION,
    CONTEXT_WINDOW_S,
    RRF_VERSION,
    ZCONF_VERSION,
    Fused,
    Written,
    conversation_context,
    rrf,
    to_unit,
    zconf,
)
from indexer.ranking import RANK_VERSION, RankWeights, names_speaker, score
from indexer.records import ChunkDoc, Hit

MODES = ("hybrid", "text", "vector")
CANDIDATES = 50
# Text hits read for conversation context (indexer.fusion.conversation_context) before the
# list is cut back to the fusion depth: a reply that shares no word with the question is
# found through the question-like line next to it. 200 vs 50: LoCoMo hit@5 +0.2, R@10 +0.6.
CONTEXT_CANDIDATES = 200
# Measured on ../shared/bench with the embedded USE model (issue 3 note): the vector list
# helps Chinese and dialogue queries a lot and English fact questions little, so it gets a
# lower prior; zconf still lets a confident vector list lead. 0.3 would give MADial zh
# recall@5 +0.6 and en +1.9 but LoCoMo hit@5 -0.2, down to the stemmed-BM25 reference row:
# kept at 0.25 until a second model lifts English (bench/retrieval).
DEFAULT_WEIGHTS: Mapping[str, float] = {"text": 1.0, "vector": 0.25}


@dataclass(frozen=True)
class SearchRequest:
    query: str
    index_key: str  # ScopeId.index_key: never LangBot's user_key, which can collide
    top_k: int = 5
    mode: str = "hybrid"
    profile_key: str | None = None  # ScopeId.profile_key: also search this session's profiles
    speaker_id: str = ""
    statuses: tuple[str, ...] = ("active",)
    now: int | None = None  # unix seconds; None = no time decay, no expiry filter
    fusion: str = "zconf"
    weights: RankWeights = field(default_factory=RankWeights)
    source_weights: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    context_gain: float = CONTEXT_GAIN  # 0 = no conversation context
    context_window_s: int = CONTEXT_WINDOW_S


@dataclass(frozen=True)
class SearchResult:
    doc: ChunkDoc  # the best-matching chunk of the episode (or the profile)
    score: float
    chunks: tuple[int, ...]
    explain: Mapping[str, Any]


def _candidates(backend: SearchBackend, request: SearchRequest, depth: int) -> list[Hit]:
    hits = backend.search(
        request.query,
        request.index_key,
        depth,
        statuses=request.statuses,
        kinds=("episode",),
        now=request.now,
    )
    if request.profile_key:
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


def fuse(request: SearchRequest, lists: Mapping[str, Sequence[Hit]]) -> list[Fused]:
    if request.fusion == "rrf":
        return rrf(lists, request.source_weights)
    if request.fusion == "zconf":
        return zconf(lists, request.source_weights)
    raise ValueError(f"fusion must be rrf or zconf (got {request.fusion!r})")


def hybrid_search(
    request: SearchRequest,
    backends: Mapping[str, SearchBackend],
    lookup: Callable[[int], ChunkDoc | None],
    depth: int = CANDIDATES,
) -> list[SearchResult]:
    if request.mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)} (got {request.mode!r})")
    if not request.query.strip() or request.top_k < 1:
        return []
    sources = ("text", "vector") if request.mode == "hybrid" else (request.mode,)
    docs: dict[int, ChunkDoc | None] = {}

    def doc_of(chunk_id: int) -> ChunkDoc | None:
        if chunk_id not in docs:
            docs[chunk_id] = lookup(chunk_id)
        return docs[chunk_id]

    lists: dict[str, list[Hit]] = {}
    context: dict[int, tuple[int, float]] = {}
    for name in sources:
        if name == "text" and request.context_gain > 0:
            hits = _candidates(backends[name], request, max(depth, CONTEXT_CANDIDATES))
            hits, context = conversation_context(
                hits, _written(hits, doc_of), request.context_gain, request.context_window_s
            )
            lists[name] = hits[:depth]
        else:
            lists[name] = _candidates(backends[name], request, depth)
    fused = fuse(request, lists)
    relevance = to_unit(fused)
    # One result per episode FILE: two files stating one id (a person's copy) stay two
    # results, each with its own path, instead of whichever chunk happened to score best.
    by_episode: dict[tuple[str, str], SearchResult] = {}
    for item in fused:
        doc = doc_of(item.chunk_id)
        if doc is None:  # removed between the index answer and now
            continue
        scored = score(
            relevance[item.chunk_id],
            created_at=doc.created_at,
            importance=doc.importance,
            tags=doc.tags,
            same_speaker=bool(request.speaker_id) and doc.speaker_id == request.speaker_id,
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
        versions = {"fusion": _version(request.fusion), "rank": RANK_VERSION}
        if request.context_gain > 0 and "text" in lists:
            versions["context"] = CONTEXT_VERSION
        source, bonus = context.get(item.chunk_id, (None, 0.0))
        explain = {
            "versions": versions,
            "weights": dict(request.source_weights),
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
    ranked = sorted(by_episode.values(), key=lambda r: (-r.score, r.doc.episode_id, r.doc.path))
    return ranked[: request.top_k]


def _written(hits: Sequence[Hit], doc_of: Callable[[int], ChunkDoc | None]) -> dict[int, Written]:
    """Episode hits' time and speaker for conversation_context (profiles take no part)."""
    out: dict[int, Written] = {}
    for hit in hits:
        doc = doc_of(hit.chunk_id)
        if doc is not None and doc.kind == "episode":
            out[hit.chunk_id] = Written(doc.created_at, doc.speaker_id or doc.speaker_name)
    return out


def _version(fusion: str) -> str:
    return ZCONF_VERSION if fusion == "zconf" else RRF_VERSION
