"""The knowledge engine's `retrieve` without the host: one search in the chat's scope plus
the KB's library (or none, when the injector already ran the same one this turn), minus
what the model already has, and the record of it in the turn's injection snapshot. Pure of
LangBot's transport, so it runs in one worker-thread hop (see turn_ledger for the rules).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from langbot_plugin.api.entities.builtin.provider.message import ContentElement
from langbot_plugin.api.entities.builtin.rag.context import RetrievalResultEntry

from indexer.engine import Engine
from indexer.injection import prompting
from indexer.retrieval.ranking import FACTORS, RankWeights
from indexer.retrieval.search import SearchResult, relevance_fields
from indexer.retrieval.search_query import SearchQuery
from vault.layout.keys import ScopeId
from vault.persons import identity_of
from vault.writes.operations import Vault
from vault.writes.snapshots import update_snapshot

from . import knowledge_store as ks
from . import turn_ledger as tl
from .memory_service import relevant

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RetrieveInput:
    kb_id: str
    query: str
    scope: ScopeId
    library: ScopeId | None
    sender_id: str
    top_k: int
    half_life_days: float
    floor: float
    now: int
    # The message gate (setting recall_gate), as injection runs it: the runner retrieves for
    # every message, so "thanks!" must not bring memories in by this door either.
    gate: bool
    # Setting linked_people: the sender's linked person's other ids rank as the speaker.
    linked_people: bool = False


@dataclass(frozen=True)
class Served:
    results: tuple[SearchResult, ...]  # what goes back to the host, best first
    withheld: tuple[str, ...]  # passed the floor but the model already has them
    searched: bool
    found: int  # what the search returned (0 without a search)
    snapshot_updated: bool


def serve(
    vault: Vault,
    engine: Engine,
    req: RetrieveInput,
    plan: tl.RetrievePlan,
    turn: tl.InjectorTurn | None,
) -> Served:
    results: list[SearchResult] = []
    withheld = plan.withheld
    found: list[SearchResult] = []
    if plan.search:
        found = engine.search(  # the chat's memory and this KB's library: one ranking
            SearchQuery(
                req.query,
                req.scope,
                # Ask for as many more as will be dropped, so the model still gets top_k.
                top_k=req.top_k + len(plan.exclude),
                speaker_id=req.sender_id,
                linked_speakers=identity_of(
                    vault.layout, req.scope.bot, req.sender_id, req.linked_people
                ).senders[1:],
                now=req.now,
                weights=RankWeights(half_life_days=req.half_life_days),
                libraries=ks.present_libraries(vault, [req.library] if req.library else []),
                floor=req.floor,
                gate=req.gate,
            ),
        )
        # The plugin's one floor, as injection and recall_memory use it: nothing relevant,
        # nothing retrieved (LangBot then adds no knowledge to the prompt).
        passed = relevant(found)
        results = [r for r in passed if r.doc.episode_id not in plan.exclude][: req.top_k]
        withheld = tuple(r.doc.episode_id for r in passed if r.doc.episode_id in plan.exclude)
    updated = False
    if turn is not None:
        updated = _record(vault, req, turn, results, withheld, plan.search)
    return Served(tuple(results), withheld, plan.search, len(found), updated)


def _record(
    vault: Vault,
    req: RetrieveInput,
    turn: tl.InjectorTurn,
    results: list[SearchResult],
    withheld: tuple[str, ...],
    searched: bool,
) -> bool:
    """Add this call to the snapshot of the injector turn it belongs to (never a newer one)."""
    at = prompting.iso(datetime.now(UTC).replace(microsecond=0))
    served_ids = [r.doc.episode_id for r in results]

    def update(snapshot: dict) -> dict:
        previous = snapshot.get("retrieve")
        record = tl.retrieve_record(previous, req.kb_id, served_ids, withheld, searched, at)
        return {**snapshot, "retrieve": record}

    try:
        return update_snapshot(vault.root, req.scope, turn.query_id, update)
    except (OSError, ValueError) as exc:
        log.warning("memvault=snapshot_failed scope=%s error=%r", req.scope.session_key, str(exc))
        return False


def content_of(doc: Any) -> str:
    """The chunk's text without the speaker prefix the indexer adds for matching."""
    prefix = f"{doc.speaker_name}: " if doc.speaker_name else ""
    return doc.text[len(prefix) :] if prefix and doc.text.startswith(prefix) else doc.text


def entry(
    result: SearchResult, now: int, sender: str, scope: ScopeId, library: ScopeId | None
) -> RetrievalResultEntry:
    doc = result.doc
    # By the injective index key: LangBot's user_key of a library could equal a chat's.
    origin = "chat" if doc.index_key == scope.index_key else "library"
    shown = library if origin == "library" and library is not None else scope
    components = {
        k: v for k, v in result.explain.items() if k in ("relevance", *FACTORS, "age_days", "fused")
    }
    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(doc.created_at))
    similarity = max(0.0, min(1.0, result.score))
    metadata = {
        "episode_id": doc.episode_id,
        "path": doc.path,
        "content": content_of(doc),
        "speaker_id": doc.speaker_id,
        "speaker_name": doc.speaker_name,
        "tags": list(doc.tags),
        "importance": doc.importance,
        "status": doc.status,
        "created_at": created if doc.created_at else "",
        "user_key": shown.user_key,  # LangBot's key, as upstream shows it
        "scope_key": scope.session_key,
        "origin": origin,  # chat: the chat's own memory; library: uploaded to this KB
        "score": result.score,
        "score_components": components,
        **relevance_fields(result),  # absolute relevance, as `memvault search` shows it
    }
    return RetrievalResultEntry(
        id=doc.episode_id,
        content=[
            ContentElement.from_text(
                prompting.display(prompting.recalled_from(result), now, sender)
            )
        ],
        metadata=metadata,
        distance=1.0 - similarity,
        score=similarity,
    )
