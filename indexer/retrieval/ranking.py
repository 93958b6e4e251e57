"""Weights applied after fusion, like LongTermMemory: recency, priority, confidence, speaker,
corrections.

Pure and versioned; `explain` keeps every factor so a person can see why a memory ranked.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from vault.format.model import PRIORITIES
from vault.format.tags import tag_key

# rank-3: Synapse's priority replaces LongTermMemory's importance as the weight
# (an old file's importance maps onto a priority: vault.format.model.importance_priority), and
# confidence is a small factor. A normal memory at the neutral confidence (0.7, below) scores
# as before; profiles take neither factor (they have no priority or confidence).
RANK_VERSION = "rank-3"
SECONDS_PER_DAY = 86_400
UPDATE_TAGS = frozenset(
    {
        "correction",
        "clarification",
        "profile-update",
        "preference-change",
        "fact-update",
        "更正",
        "修正",
        "纠正",
        "偏好变化",
    }
)


# The multiplied components of `score`, in explain order (age_days is shown, not multiplied).
FACTORS: tuple[str, ...] = (
    "recency",
    "priority",
    "confidence",
    "speaker",
    "named_speaker",
    "update",
)


def is_update(tags: Iterable[str]) -> bool:
    """Whether a tag marks a correction (any case: vault.format.tags.tag_key)."""
    return any(tag_key(t) in UPDATE_TAGS for t in tags)


@dataclass(frozen=True)
class RankWeights:
    half_life_days: float = 30.0
    # A memory never loses more than this share of its relevance to age: an old fact that
    # matches well still beats a new one that barely matches.
    decay_floor: float = 0.5
    # low / normal / high / critical. critical also goes into every turn's prompt
    # (Engine.critical); in a recall it ranks like high. high = 1.2 is about importance
    # 4-5's old 1.16-1.24 and low = importance 1's 0.9, so an old file keeps about its
    # weight (importance 3 no longer outranks 2: both map to normal).
    priority: tuple[float, ...] = field(default=(0.9, 1.0, 1.2, 1.2))  # by PRIORITIES
    # factor = 1 + confidence_weight * (confidence - confidence_neutral): the default of a
    # memory no person vouched for (agent, import: 0.7) is exactly 1.0, one a person stated
    # (1.0) 1.03, a doubtful one (0.2) 0.95. Small: it breaks near-ties, never buries a match.
    # Neutral at 0.7, not 1.0: every benchmark memory is an import at 0.7, and even a uniform
    # factor below 1 reorders float near-ties (measured: LoCoMo text hit@5 65.49 -> 65.43).
    confidence_weight: float = 0.1
    confidence_neutral: float = 0.7
    same_speaker: float = 1.12
    update_tag: float = 1.08
    # The query names the memory's speaker ("What did John get promoted to?" and John's own
    # line vs Maria's "Congrats on the promotion, John!"). Measured on ../shared/bench:
    # LoCoMo hybrid hit@5 +0.6, recall@10 +0.6 alone at 1.2; with conversation context 1.3
    # gave hit@5 64.3 vs 63.9 at 1.2 (bench/retrieval/tune5.py); MADial unchanged.
    named_speaker: float = 1.3


@dataclass(frozen=True)
class Scored:
    score: float
    components: dict[str, float]


def recency_factor(age_days: float, weights: RankWeights) -> float:
    if weights.half_life_days <= 0:
        return 1.0
    decay = math.exp(-math.log(2) * max(0.0, age_days) / weights.half_life_days)
    return weights.decay_floor + (1.0 - weights.decay_floor) * decay


def recency_hint(age_days: float | None) -> str:
    if age_days is None:
        return ""
    for limit, hint in ((1, "fresh"), (7, "recent"), (30, "still-relevant"), (90, "older")):
        if age_days < limit:
            return hint
    return "old"


@lru_cache(maxsize=1024)
def _name_pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w){re.escape(name)}(?!\w)", re.IGNORECASE)


def names_speaker(query: str, speaker_name: str) -> bool:
    """Whether `query` mentions `speaker_name` as a whole word, any case ("Caroline's"
    counts; "Carolines" does not). Names shorter than 2 characters never count."""
    name = speaker_name.strip()
    if len(name) < 2:
        return False
    return _name_pattern(name).search(query) is not None


def score(
    relevance: float,
    *,
    created_at: int,
    tags: Iterable[str],
    same_speaker: bool,
    now: int | None,
    weights: RankWeights = RankWeights(),
    kind: str = "episode",
    named_speaker: bool = False,
    priority: str = "normal",
    confidence: float | None = None,
) -> Scored:
    """relevance in (0, 1] from fusion; `now` None = no time decay (benchmarks)."""
    components: dict[str, float] = {"relevance": relevance}
    if kind == "episode" and now is not None and created_at:
        age_days = (now - created_at) / SECONDS_PER_DAY
        components["age_days"] = round(age_days, 2)
        components["recency"] = recency_factor(age_days, weights)
    if kind == "episode":
        level = PRIORITIES.index(priority) if priority in PRIORITIES else 1
        components["priority"] = weights.priority[level]
        sure = weights.confidence_neutral if confidence is None else min(1.0, max(0.0, confidence))
        components["confidence"] = 1.0 + weights.confidence_weight * (
            sure - weights.confidence_neutral
        )
    components["speaker"] = weights.same_speaker if same_speaker else 1.0
    components["named_speaker"] = weights.named_speaker if named_speaker else 1.0
    components["update"] = weights.update_tag if is_update(tags) else 1.0
    total = relevance
    for name in FACTORS:
        total *= components.get(name, 1.0)
    return Scored(total, components)
