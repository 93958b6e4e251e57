"""Fusing ranked lists from the text and vector indexes: small, pure, versioned.

Two formulas, both measured on ../shared/bench (see bench/retrieval):
- `rrf`: weighted reciprocal rank fusion, sum w / (k + rank). Needs a small k (2-5 here);
  k=60 flattens ranks.
- `zconf`: z-score each list, weight each list by how far its best hit stands out from the
  rest (a list that is confident about its top hit counts more), missing = that list's
  lowest z. A weak list (e.g. a vector model on a language it handles badly) then stops
  dragging a strong one down, which equal-weight RRF does.
- `zconf3` (zconf-3): zconf, but a list whose best hit is below the relevance floor on the
  absolute scale (indexer.retrieval.relevance) gets at most its share of the floor times the say of
  a list that reached it: a list that matched nothing meaningful (a clueless text list when
  the words of question and memory differ) cannot outweigh the one that did match,
  however far its top z-score stands out.
- `zconf4` (zconf-4): zconf, where a list's say is scaled by its EVIDENCE
(indexer.retrieval.evidence):
  the share of a full match its best hits hold in content terms. A text list that matched
  only names, numbers or, across scripts, anything at all (an English question against
  Chinese memories) has no say, so the ranking follows the vector list; a text list with
  content matches keeps its full say. Measured on ../shared/bench (bench/retrieval/replay):
  English-on-Chinese hybrid hit@5 58.1 -> 79.4 (= vector alone), Chinese-on-English 46.7 ->
  77.0, same-language sets unchanged by this step.
And one step before fusion:
- `conversation_context`: a text hit also gains a share of the best text score of another
  speaker's memory written close in time (the turn it answers or that answers it), so a
  reply like "I adopted her two years ago" ranks for "how did Jolene get her pet?" when
  the question it answers matched.
Change a formula = bump its version, so a stored ranking says which formula made it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from indexer.backends.records import Hit

RRF_VERSION = "rrf-1"
ZCONF_VERSION = "zconf-2"
ZCONF3_VERSION = "zconf-3"
ZCONF4_VERSION = "zconf-4"
# zconf-4: a list whose best hits hold this content share keeps its full say (0.2-0.8 gave
# the same hit@5 on every public set; the middle is kept for paraphrases).
FULL_EVIDENCE = 0.5
CONTEXT_VERSION = "ctx-1"
# Measured on ../shared/bench (bench/retrieval/tune5.py, text top 200, same settings for
# every dataset): gain 0.3 lifted LoCoMo hybrid hit@5 60.0 -> 63.0 and recall@10 62.6 ->
# 65.2; MADial (one speaker, independent memories) unchanged.
CONTEXT_GAIN = 0.3
CONTEXT_WINDOW_S = 1800


@dataclass(frozen=True)
class Written:
    """What conversation_context needs to know about a hit's memory."""

    created_at: int  # unix seconds
    speaker: str  # speaker id (or name); "" = unknown, never context


def conversation_context(
    hits: Sequence[Hit],
    written: Mapping[int, Written],
    gain: float = CONTEXT_GAIN,
    window_s: int = CONTEXT_WINDOW_S,
) -> tuple[list[Hit], dict[int, tuple[int, float]]]:
    """(hits rescored and re-sorted, {chunk_id: (context chunk_id, bonus)} for the gainers).

    A hit's new score is its own plus `gain` x the best score among the other hits written
    by another known speaker within `window_s` seconds of it. Hits missing from `written`
    (profiles, removed chunks) neither give nor take context. Ties keep chunk id order.
    """
    if gain <= 0 or len(hits) < 2:
        return list(hits), {}
    known = [h for h in hits if (w := written.get(h.chunk_id)) is not None and w.speaker]
    known.sort(key=lambda h: (written[h.chunk_id].created_at, h.chunk_id))
    times = [written[h.chunk_id].created_at for h in known]
    bonus: dict[int, tuple[int, float]] = {}
    lo = 0
    for hit in known:
        me = written[hit.chunk_id]
        while times[lo] < me.created_at - window_s:
            lo += 1
        best: Hit | None = None
        for other in known[lo:]:
            if written[other.chunk_id].created_at > me.created_at + window_s:
                break
            if other is hit or written[other.chunk_id].speaker == me.speaker:
                continue
            if best is None or (other.score, -other.chunk_id) > (best.score, -best.chunk_id):
                best = other
        if best is not None and best.score > 0:
            bonus[hit.chunk_id] = (best.chunk_id, gain * best.score)
    rescored = [Hit(h.chunk_id, h.score + bonus.get(h.chunk_id, (0, 0.0))[1]) for h in hits]
    rescored.sort(key=lambda h: (-h.score, h.chunk_id))
    return rescored, bonus


@dataclass(frozen=True)
class Fused:
    chunk_id: int
    score: float
    # Per source: (rank from 1 or None if absent, raw score or None, contribution)
    parts: Mapping[str, tuple[int | None, float | None, float]]


def rrf(
    lists: Mapping[str, Sequence[Hit]],
    weights: Mapping[str, float],
    k: float = 3.0,
) -> list[Fused]:
    scores: dict[int, float] = {}
    parts: dict[int, dict[str, tuple[int | None, float | None, float]]] = {}
    for source, hits in lists.items():
        weight = weights.get(source, 1.0)
        for rank, hit in enumerate(hits, start=1):
            contribution = weight / (k + rank)
            scores[hit.chunk_id] = scores.get(hit.chunk_id, 0.0) + contribution
            parts.setdefault(hit.chunk_id, {})[source] = (rank, hit.score, contribution)
    for by_source in parts.values():
        for source in lists:
            by_source.setdefault(source, (None, None, 0.0))
    return _sorted(scores, parts)


def _zscores(hits: Sequence[Hit]) -> tuple[list[float], float, float]:
    """(z of each hit, z for a document the list lacks, the list's confidence).

    Confidence is how far the top hit stands out, plus 0.5. A list whose scores are all
    equal (typically one single text hit: a rare word, a ticket id) has no spread to
    measure: its hits count as standing out by one deviation and the documents it lacks
    as average, so an exact match is not drowned by the other list's neighbours.
    """
    values = [h.score for h in hits]
    mean = sum(values) / len(values)
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    if std == 0:
        return [1.0] * len(values), 0.0, 1.5
    z = [(v - mean) / std for v in values]
    return z, min(z), max(0.0, z[0]) + 0.5


def trust(quality: float, floor: float) -> float:
    """zconf-3's share of a list's say: its best hit's absolute relevance over the floor,
    at most 1 (a list at or above the floor keeps its full say)."""
    if floor <= 0:
        return 1.0
    return min(1.0, max(0.0, quality) / floor)


def zconf3(
    lists: Mapping[str, Sequence[Hit]],
    weights: Mapping[str, float],
    quality: Mapping[str, float],
    floor: float,
) -> list[Fused]:
    """zconf where a list whose best hit is below the floor (`quality[source]`, missing =
    trusted) has at most trust() x the say (confidence x weight) of the weakest list that
    reached it. When no list reached the floor, or all did, this is zconf exactly."""
    say = {s: _zscores(h)[2] * weights.get(s, 1.0) for s, h in lists.items() if h}
    good = [say[s] for s in say if quality.get(s, floor) >= floor]
    if not good or len(good) == len(say):
        return zconf(lists, weights)
    cap = min(good)
    scaled = dict(weights)
    for source, value in say.items():
        q = quality.get(source, floor)
        if q < floor and value > 0:
            scaled[source] = weights.get(source, 1.0) * min(1.0, cap * trust(q, floor) / value)
    return zconf(lists, scaled)


def evidence_trust(evidence: float, full: float = FULL_EVIDENCE) -> float:
    """zconf-4's share of a list's say: its evidence over `full`, within [0, 1] (the same
    ramp as zconf-3's trust, on the evidence scale)."""
    return trust(evidence, full)


def zconf4(
    lists: Mapping[str, Sequence[Hit]],
    weights: Mapping[str, float],
    evidence: Mapping[str, float],
) -> list[Fused]:
    """zconf with each list's weight x evidence_trust(evidence[source]) (missing = full say).
    When every list lacks evidence, their relative weights stand (zconf exactly)."""
    trust = {s: evidence_trust(evidence[s]) if s in evidence else 1.0 for s in lists}
    if not any(trust[s] > 0 for s, hits in lists.items() if hits):
        return zconf(lists, weights)
    return zconf(lists, {s: weights.get(s, 1.0) * trust[s] for s in lists})


def zconf(
    lists: Mapping[str, Sequence[Hit]],
    weights: Mapping[str, float],
) -> list[Fused]:
    stats: dict[str, tuple[dict[int, float], float, float]] = {}
    for source, hits in lists.items():
        if not hits:
            continue
        z, floor, confidence = _zscores(hits)
        by_id = {h.chunk_id: zi for h, zi in zip(hits, z, strict=True)}
        stats[source] = (by_id, floor, confidence * weights.get(source, 1.0))
    total = sum(c for _, _, c in stats.values()) or 1.0
    ranks = {
        s: {h.chunk_id: (r, h.score) for r, h in enumerate(hits, 1)} for s, hits in lists.items()
    }
    ids = {cid for by_id, _, _ in stats.values() for cid in by_id}
    scores: dict[int, float] = {}
    parts: dict[int, dict[str, tuple[int | None, float | None, float]]] = {}
    for cid in ids:
        score = 0.0
        parts[cid] = {}
        for source in lists:
            if source not in stats:
                parts[cid][source] = (None, None, 0.0)
                continue
            by_id, floor, conf = stats[source]
            contribution = (conf / total) * by_id.get(cid, floor)
            score += contribution
            rank, raw = ranks[source].get(cid, (None, None))
            parts[cid][source] = (rank, raw, contribution)
        scores[cid] = score
    return _sorted(scores, parts)


def _sorted(
    scores: Mapping[int, float],
    parts: Mapping[int, Mapping[str, tuple[int | None, float | None, float]]],
) -> list[Fused]:
    order = sorted(scores, key=lambda cid: (-scores[cid], cid))
    return [Fused(cid, scores[cid], dict(parts[cid])) for cid in order]


def to_unit(fused: Sequence[Fused]) -> dict[int, float]:
    """Fused scores mapped onto (0, 1], best = 1, so later weights multiply a comparable
    relevance whatever the formula's scale."""
    if not fused:
        return {}
    top, bottom = fused[0].score, fused[-1].score
    span = top - bottom
    if span <= 0:
        return {f.chunk_id: 1.0 for f in fused}
    return {f.chunk_id: 0.05 + 0.95 * (f.score - bottom) / span for f in fused}
