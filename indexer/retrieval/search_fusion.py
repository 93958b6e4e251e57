"""How hybrid search weighs its lists: each list's prior per query shape, and the evidence
or quality a fusion formula (indexer.retrieval.fusion) scales it by."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from indexer.backends.records import ChunkDoc, Hit
from indexer.retrieval.fusion import (
    RRF_VERSION,
    ZCONF3_VERSION,
    ZCONF4_VERSION,
    ZCONF_VERSION,
    Fused,
    rrf,
    zconf,
    zconf3,
    zconf4,
)
from indexer.retrieval.relevance import DEFAULT_FLOOR
from indexer.retrieval.relevance_judge import Judge

# Each list's prior per query shape (indexer.retrieval.evidence), measured on ../shared/bench with
# the embedded USE model (bench/retrieval/replay, zconf-4): for a single question the text list
# is the precise one (vector 0.25 -> 0.1: LoCoMo hit@5 64.3 -> 65.5), for a dialogue context
# the vector list finds more (0.25 -> 0.75: MADial zh recall@5 58.4 -> 61.5, en 57.5 ->
# 63.2). zconf still lets a confident list lead, and zconf-4 takes the say of a list
# without content evidence.
SHAPE_WEIGHTS: Mapping[str, Mapping[str, float]] = {
    "message": {"text": 1.0, "vector": 0.1},
    "dialogue": {"text": 1.0, "vector": 0.75},
}
DEFAULT_WEIGHTS = SHAPE_WEIGHTS["message"]
# Text hits whose content share is the text list's evidence (zconf-4): the best of them.
EVIDENCE_HITS = 3


FUSIONS = {
    "rrf": RRF_VERSION,
    "zconf": ZCONF_VERSION,
    "zconf3": ZCONF3_VERSION,
    "zconf4": ZCONF4_VERSION,
}


def fuse(
    fusion: str,
    lists: Mapping[str, Sequence[Hit]],
    weights: Mapping[str, float],
    quality: Mapping[str, float] | None = None,
    floor: float = DEFAULT_FLOOR,
) -> list[Fused]:
    """`quality`: zconf3's absolute relevance of each list's best hit, zconf4's content
    evidence of each list (None = all trusted)."""
    if fusion == "rrf":
        return rrf(lists, weights)
    if fusion == "zconf":
        return zconf(lists, weights)
    if fusion == "zconf3":
        return zconf3(lists, weights, quality or {}, floor)
    if fusion == "zconf4":
        return zconf4(lists, weights, quality or {})
    raise ValueError(f"fusion must be one of {', '.join(FUSIONS)} (got {fusion!r})")


def list_quality(
    fusion: str,
    lists: Mapping[str, Sequence[Hit]],
    judge: Judge | None,
    docs: Mapping[int, ChunkDoc],
) -> dict[str, float]:
    """What `fuse` weighs each list by: zconf3's best-hit relevance, zconf4's evidence."""
    if fusion == "zconf3":
        return _quality(lists, judge, docs)
    if fusion == "zconf4":
        return _evidence(lists, judge, docs)
    return {}


def _quality(
    lists: Mapping[str, Sequence[Hit]],
    judge: Judge | None,
    docs: Mapping[int, ChunkDoc],
) -> dict[str, float]:
    """Absolute relevance of each list's best hit, for zconf3."""
    out: dict[str, float] = {}
    if judge is None:
        return out
    for name, hits in lists.items():
        if not hits:
            continue
        if name == "vector":
            out[name] = judge.vector(hits[0].score) or 0.0
        elif (doc := docs.get(hits[0].chunk_id)) is not None:
            out[name] = judge.text(indexed_texts(doc), (doc.speaker_name,)) or 0.0
    return out


def _evidence(
    lists: Mapping[str, Sequence[Hit]],
    judge: Judge | None,
    docs: Mapping[int, ChunkDoc],
) -> dict[str, float]:
    """zconf4: the text list's content evidence, the best among its first EVIDENCE_HITS."""
    hits = lists.get("text") or ()
    if judge is None or not hits:
        return {}
    best = 0.0
    for hit in hits[:EVIDENCE_HITS]:
        if (doc := docs.get(hit.chunk_id)) is not None:
            best = max(best, judge.content(indexed_texts(doc), (doc.speaker_name,)))
    return {"text": best}


def indexed_texts(doc: ChunkDoc) -> tuple[str, ...]:
    # What the text index holds for a chunk (indexer.backends.text_index adds speaker and tags).
    return (doc.text, doc.speaker_name, *doc.tags)
