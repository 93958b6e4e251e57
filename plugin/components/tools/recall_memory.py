"""Tool `recall_memory`: search the chat's memory with filters; upstream messages and JSON.

One hybrid search inside the scope and the libraries of the KBs attached to the pipeline
(one ranking, indexer.search) fetches more candidates than asked (filters are applied
to them afterwards), then only the episode files of the results that pass are read, for the
fields the index does not hold (source, superseded_by, full text).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import knowledge_store as ks
import pipeline_memory as pm
import prompting
from langbot_plugin.api.definition.components.tool.tool import Tool
from langbot_plugin.api.entities.builtin.provider import session as provider_session
from memory_service import relevant

from indexer.engine import Engine
from indexer.ranking import RankWeights
from indexer.relevance import DEFAULT_FLOOR
from vault.keys import ScopeId
from vault.model import Episode, FormatError
from vault.operations import Vault
from vault.store import read_episode_file

log = logging.getLogger(__name__)

STATUSES = ("active", "superseded", "archived", "deleted")
FILTERED_CANDIDATES = 200
# Ids MemVault writes carry their date, which is also their folder: ep_YYYYMMDD_xxxxxx.
_DATED_ID = re.compile(r"ep_(\d{4})(\d{2})(\d{2})_[A-Za-z0-9]+")


class BadTimestamp(ValueError):
    pass


def parse_time(text: str) -> int | None:
    """Unix seconds of an ISO-8601 time (`Z` and dates allowed; naive means UTC)."""
    if not text:
        return None
    try:
        when = datetime.fromisoformat(text.strip().replace("z", "Z"))
    except ValueError:
        raise BadTimestamp(
            f"invalid timestamp '{text}'. Use ISO-8601 such as 2026-03-14T00:00:00Z"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return int(when.timestamp())


@dataclass(frozen=True)
class Filters:
    speaker_id: str
    speaker_name: str
    after: int | None
    before: int | None
    importance_min: int | None
    source: str

    def any(self) -> bool:
        return bool(
            self.speaker_id
            or self.speaker_name
            or self.after is not None
            or self.before is not None
            or self.importance_min is not None
            or self.source
        )

    def admits(self, episode: Episode) -> bool:
        speaker = episode.speaker
        created = int(episode.created_at.timestamp())
        return (
            (not self.speaker_id or (speaker is not None and speaker.id == self.speaker_id))
            and (
                not self.speaker_name
                or (
                    speaker is not None
                    and (speaker.name or "").casefold() == self.speaker_name.casefold()
                )
            )
            and (self.after is None or created >= self.after)
            and (self.before is None or created <= self.before)
            and (self.importance_min is None or episode.importance >= self.importance_min)
            and (not self.source or episode.source == self.source)
        )


def item(episode: Episode, score: float) -> dict[str, Any]:
    """Upstream's result object."""
    speaker = episode.speaker
    return {
        "id": episode.id,
        "content": episode.body,
        "tags": list(episode.tags),
        "importance": episode.importance,
        "timestamp": prompting.iso(episode.created_at),
        "sender_id": speaker.id if speaker else "",
        "sender_name": (speaker.name or "") if speaker else "",
        "source": episode.source,
        "status": episode.status,
        "superseded_by": episode.superseded_by or "",
        "score": round(score, 4),
    }


def _by_id(vault: Vault, scope: ScopeId, query: str) -> Episode | None:
    """The episode whose id the query is, found by its dated path (no folder scan)."""
    match = _DATED_ID.fullmatch(query)
    if not match:
        return None
    try:
        day = datetime(*(int(g) for g in match.groups()), tzinfo=UTC)
        path = vault.layout.new_episode_path(scope, query, day)
        if not path.is_file():
            return None
        episode = read_episode_file(vault.layout, path).episode
    except (ValueError, OSError, FormatError):
        return None
    return episode if episode.id == query else None


def search(
    vault: Vault,
    engine: Engine,
    scope: ScopeId,
    query: str,
    top_k: int,
    status: str,
    filters: Filters,
    half_life_days: float,
    libraries: Sequence[ScopeId] = (),
    floor: float = DEFAULT_FLOOR,
) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    seen: set[str] = set()
    exact = _by_id(vault, scope, query)
    if exact is not None:  # upstream: the exact id comes first, whatever the filters
        found.append(item(exact, 1.0))
        seen.add(exact.id)
    if status == "deleted":  # deletion removes the file: nothing is ever "deleted" here
        return found[:top_k]
    fetch = max(top_k, 4 * top_k, 50)
    if filters.any():
        fetch = max(fetch, FILTERED_CANDIDATES)
    results = engine.search(
        query,
        scope,
        top_k=fetch,
        statuses=(status,),
        weights=RankWeights(half_life_days=half_life_days),
        libraries=ks.present_libraries(vault, libraries),
        floor=floor,
    )
    # The plugin's one floor, as injection uses it; the filters then pick among these.
    for result in relevant(results):
        if len(found) >= top_k:
            break
        if result.doc.episode_id in seen:
            continue
        try:
            episode = read_episode_file(vault.layout, vault.root / result.doc.path).episode
        except (OSError, FormatError):
            continue  # changed since it was indexed; the watcher will catch up
        if episode.status != status or not filters.admits(episode):
            continue
        seen.add(episode.id)
        found.append(item(episode, result.score))
    return found[:top_k]


def _text_param(params: dict[str, Any], name: str) -> str | None:
    value = params.get(name, "")
    if value is None:
        return ""
    return value.strip() if isinstance(value, str) else None


class RecallMemory(Tool):
    async def call(
        self, params: dict[str, Any], session: provider_session.Session, query_id: int
    ) -> str:
        log.info(
            "memvault=tool_called tool=recall_memory query_id=%s params_keys=%s",
            query_id,
            ",".join(sorted(params)),
        )
        turn = await pm.tool_call(self.plugin, session, query_id)
        if (refusal := pm.opt_in_error(turn)) is not None:
            return refusal
        query = params.get("query", "")
        if not isinstance(query, str) or not query.strip():
            return "Error: query is required."
        top_k = params.get("top_k", 5)
        if top_k is None:
            top_k = 5
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k <= 0:
            return "Error: top_k must be a positive integer."
        texts: dict[str, str] = {}
        for name in ("speaker_id", "speaker_name", "time_after", "time_before", "source"):
            value = _text_param(params, name)
            if value is None:
                return f"Error: {name} must be a string."
            texts[name] = value
        status = params.get("status", "active")
        if status is None:
            status = "active"
        if not isinstance(status, str):
            return "Error: status must be a string."
        status = status.strip().lower() or "active"
        if status not in STATUSES:
            return "Error: status must be one of active, superseded, archived, or deleted."
        importance_min = params.get("importance_min")
        if importance_min is not None and (
            isinstance(importance_min, bool)
            or not isinstance(importance_min, int)
            or not 1 <= importance_min <= 5
        ):
            return "Error: importance_min must be an integer between 1 and 5."
        try:
            filters = Filters(
                speaker_id=texts["speaker_id"],
                speaker_name=texts["speaker_name"],
                after=parse_time(texts["time_after"]),
                before=parse_time(texts["time_before"]),
                importance_min=importance_min,
                source=texts["source"],
            )
        except BadTimestamp as exc:
            return f"Error: {exc}"

        memory = self.plugin.memory
        opened = pm.open_for_tool(memory, session, turn, "recall_memory", query_id)
        if isinstance(opened, str):
            return opened
        vault, engine, scope = opened
        log.info(
            "memvault=recall_searching query_id=%s kb_id=%s user_key=%s top_k=%d status=%s "
            "speaker_id=%s speaker_name=%s source=%s importance_min=%s time_after=%s "
            "time_before=%s query_len=%d",
            query_id,
            turn.kb_id,
            scope.user_key,
            top_k,
            status,
            filters.speaker_id,
            filters.speaker_name,
            filters.source,
            importance_min,
            texts["time_after"],
            texts["time_before"],
            len(query),
        )
        results = await memory.run(
            search,
            vault,
            engine,
            scope,
            query.strip(),
            top_k,
            status,
            filters,
            memory.settings.half_life_days,
            tuple(ks.library_scope(kb_id) for kb_id in turn.attached),
            memory.settings.relevance_floor,
        )
        log.info(
            "memvault=recall_completed query_id=%s kb_id=%s result_count=%d",
            query_id,
            turn.kb_id,
            len(results),
        )
        if not results:
            return "No relevant memories found."
        return json.dumps(results, ensure_ascii=False)
