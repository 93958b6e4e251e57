"""Tool `recall_memory`: search or list the chat's memory with filters; plain-text answer.

With a query: one hybrid search inside the scope and the libraries of the KBs attached to
the pipeline (one ranking, indexer.retrieval.search). The field filters (tags, category, priority,
verified, expiring_within) are part of that index query (indexer.retrieval.filters), so they never
thin out a top-k; the older speaker/time/importance/source filters are applied to the
candidates afterwards (it fetches more when they are set). Only the episode files of the
results are read, for what the index does not hold (full text, superseded_by). Without a
query it lists the chat's memories that pass the filters, by priority then newest first.
The answer is text for the model (recall_text.py): a header with the verified counts, then
one line per memory with its priority, category, date, `[unverified]` mark and id.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from langbot_plugin.api.definition.components.tool.tool import Tool
from langbot_plugin.api.entities.builtin.provider import session as provider_session
from memvault_plugin import knowledge_store as ks
from memvault_plugin import pipeline_memory as pm
from memvault_plugin.error_reply import replies_errors
from memvault_plugin.recall_params import Recall, parse_recall
from memvault_plugin.recall_text import by_priority, nothing, recall_text

from indexer.engine import Engine
from indexer.recall import find
from indexer.retrieval.outcome import (
    FILTERED,
    NO_ACTIVE,
    NO_MATCH,
    NO_MEMORIES,
    WhyEmpty,
    filter_names,
)
from indexer.retrieval.ranking import RankWeights
from indexer.retrieval.relevance import DEFAULT_FLOOR
from indexer.retrieval.search_query import SearchQuery
from vault.format.model import Episode, FormatError
from vault.layout.keys import ScopeId
from vault.layout.store import read_episode_file
from vault.writes.operations import Vault

log = logging.getLogger(__name__)

FILTERED_CANDIDATES = 200
# Ids MemVault writes carry their date, which is also their folder: ep_YYYYMMDD_xxxxxx.
_DATED_ID = re.compile(r"ep_(\d{4})(\d{2})(\d{2})_[A-Za-z0-9]+")


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
    ask: Recall,
    half_life_days: float,
    libraries: Sequence[ScopeId] = (),
    floor: float = DEFAULT_FLOOR,
) -> tuple[list[Episode], WhyEmpty | None]:
    """The memories to show, best first (the exact id first, whatever the filters), and
    why there are none when there are none (the search's own reason: indexer.recall)."""
    found: list[Episode] = []
    seen: set[str] = set()
    exact = _by_id(vault, scope, ask.query)
    if exact is not None:  # upstream: the exact id comes first, whatever the filters
        found.append(exact)
        seen.add(exact.id)
    if ask.status == "deleted":  # deletion removes the file: nothing is ever "deleted" here
        return found[: ask.top_k], None if found else WhyEmpty(NO_ACTIVE, "deleted")
    fetch = max(ask.top_k, 4 * ask.top_k, 50)
    if ask.filters.any():
        fetch = max(fetch, FILTERED_CANDIDATES)
    outcome = find(
        engine,
        SearchQuery(
            ask.query,
            scope,
            top_k=fetch,
            statuses=(ask.status,),
            weights=RankWeights(half_life_days=half_life_days),
            libraries=ks.present_libraries(vault, libraries),
            floor=floor,
            filters=ask.fields,
            # No message gate (recall_gate) here: the model called the tool because it wants
            # memory, so its query is a request to recall by definition, whatever it looks like
            # ("thanks" may be the very thing it searches for). The gate is for automatic recall.
            gate=False,
        ),
    )
    # The plugin's one floor, as injection uses it; the filters then pick among these.
    left_out = 0  # relevant, but not what the tool's own filters ask for
    for result in outcome.passed:
        if len(found) >= ask.top_k:
            break
        if result.doc.episode_id in seen:
            continue
        try:
            episode = read_episode_file(vault.layout, vault.root / result.doc.path).episode
        except (OSError, FormatError):
            continue  # changed since it was indexed; the watcher will catch up
        if episode.status != ask.status or not ask.filters.admits(episode):
            left_out += 1
            continue
        seen.add(episode.id)
        found.append(episode)
    if found:
        return found[: ask.top_k], None
    if outcome.why is None and left_out:
        return [], WhyEmpty(FILTERED, ", ".join(ask.filters.names()), count=left_out)
    return [], outcome.why or WhyEmpty(NO_MATCH)


def listing(
    vault: Vault, scope: ScopeId, ask: Recall, libraries: Sequence[ScopeId] = ()
) -> tuple[list[Episode], int, WhyEmpty | None]:
    """No query: every memory of the chat (and its attached libraries) that passes the
    filters, read from the files, by priority then newest first; (shown, left out, and
    why none when none)."""
    if ask.status == "deleted":
        return [], 0, WhyEmpty(NO_ACTIVE, "deleted")
    now = vault.clock()
    kept: list[Episode] = []
    held = recallable = 0
    for where in (scope, *ks.present_libraries(vault, libraries)):
        for stored in vault.load_episodes(where)[0]:
            ep = stored.episode
            held += 1
            if ep.status != ask.status or (ask.status == "active" and ep.is_expired(now)):
                continue  # an expired memory is not recalled, as search leaves it out
            recallable += 1
            if ask.filters.admits(ep) and ask.fields.admits(ep, now):
                kept.append(ep)
    ordered = by_priority(kept)
    why = None
    if not ordered:
        names = (*filter_names(ask.fields), *ask.filters.names())
        why = (
            WhyEmpty(NO_MEMORIES)
            if not held
            else WhyEmpty(NO_ACTIVE, ask.status, count=held)
            if not recallable
            else WhyEmpty(FILTERED, ", ".join(names))
        )
    return ordered[: ask.top_k], max(0, len(ordered) - ask.top_k), why


class RecallMemory(Tool):
    @replies_errors("recall_memory")
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
        ask = parse_recall(params)
        if isinstance(ask, str):
            return ask

        memory = await self.plugin.settled()
        vault, engine, scope = pm.open_for_tool(memory, session, turn, "recall_memory", query_id)
        log.info(
            "memvault=recall_searching query_id=%s kb_id=%s user_key=%s top_k=%d status=%s "
            "filters=%s fields=%s query_len=%d",
            query_id,
            turn.kb_id,
            scope.user_key,
            ask.top_k,
            ask.status,
            ask.filters.any(),
            ask.fields.any(),
            len(ask.query),
        )
        libraries = tuple(ks.library_scope(kb_id) for kb_id in turn.attached)
        more = 0
        if ask.query:
            results, why = await memory.run(
                search,
                vault,
                engine,
                scope,
                ask,
                memory.settings.half_life_days,
                libraries,
                memory.settings.relevance_floor,
            )
        else:
            results, more, why = await memory.run(listing, vault, scope, ask, libraries)
        log.info(
            "memvault=recall_completed query_id=%s kb_id=%s result_count=%d more=%d why=%s",
            query_id,
            turn.kb_id,
            len(results),
            more,
            why.kind if why else "-",
        )
        # Nothing: one line that tells the model why (below the floor, no memories, ...).
        return recall_text(results, more) if results else nothing(why)
