"""Supersede on correction: a new memory tagged correction, fact-update or clarification
marks older active memories of the same scope that say nearly the same thing as superseded.

"Nearly the same" is a cosine threshold calibrated per embedding model, because models put
unrelated texts at very different similarities (USE around 0.1, some e5 models at 0.8-0.9,
where upstream's fixed 0.85 would supersede unrelated memories). The threshold is the
model's mean similarity of mutually unrelated sentences plus SIGMAS standard deviations,
and never below the most similar unrelated pair plus MARGIN (indexer.backends.calibration).
"""

from __future__ import annotations

import logging

from indexer.backends.calibration import Calibration, calibrate, calibration_sentences
from indexer.engine import Engine
from indexer.retrieval.search import SearchRequest
from vault.errors import BadInput
from vault.format.model import CORRECTION_TAGS, Episode
from vault.format.tags import tag_keys
from vault.layout.keys import ScopeId
from vault.layout.store import AmbiguousIdError
from vault.writes.operations import Vault

log = logging.getLogger(__name__)

__all__ = ["Calibration", "calibrate", "calibration_sentences", "supersede_on_correction"]

SUPERSEDE_VERSION = "calibrated-1"
CANDIDATES = 8


def is_correction(episode: Episode) -> bool:
    return bool(set(tag_keys(episode.tags)) & CORRECTION_TAGS)


def near_duplicates(engine: Engine, scope: ScopeId, episode: Episode) -> list[tuple[str, float]]:
    """Active episodes of the scope at or above the model's threshold, most similar first."""
    threshold = calibrate(engine.embedder).threshold
    request = SearchRequest(query=episode.body, index_key=scope.index_key, top_k=CANDIDATES,
                            mode="vector", fusion="rrf")  # fmt: skip
    found: dict[str, float] = {}
    for result in engine.run(request):
        cosine = result.explain["sources"]["vector"]["raw"]
        if result.doc.episode_id != episode.id and cosine is not None and cosine >= threshold:
            found[result.doc.episode_id] = max(cosine, found.get(result.doc.episode_id, -1.0))
    return sorted(found.items(), key=lambda item: -item[1])


def supersede_on_correction(
    engine: Engine, vault: Vault, scope: ScopeId, episode: Episode
) -> list[str]:
    """Mark near-duplicates of a correction superseded (file writes, committed to git)."""
    if not is_correction(episode) or episode.status != "active":
        return []
    done = []
    for old_id, cosine in near_duplicates(engine, scope, episode):
        try:
            vault.supersede(scope, old_id, episode.id)
        except AmbiguousIdError as exc:  # a person's copy: never guess which file is meant
            log.warning("supersede=skipped old=%s reason=duplicate_id error=%r", old_id, str(exc))
            continue
        except BadInput as exc:  # a secret in it (never committed), or newer than the correction
            log.warning("supersede=skipped old=%s reason=refused error=%r", old_id, str(exc))
            continue
        log.info("supersede=applied old=%s new=%s cosine=%.3f", old_id, episode.id, cosine)
        done.append(old_id)
    return done
