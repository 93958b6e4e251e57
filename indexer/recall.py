"""One recall with its reason: `find(engine, ask)` is Engine.search plus, when nothing
passes the floor, why (indexer.retrieval.outcome), from what that very search saw: the
message gate's decision, the relevances, the index's state and (only when no candidate came
back) how many memories the searched scopes hold. Automatic injection (indexer.injection.
turn), the Memory Console's recall test and the recall_memory tool recall through here.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from indexer.engine import Engine
from indexer.retrieval.outcome import Found, explain, filter_names
from indexer.retrieval.search_query import SearchQuery

_EPISODES = "json_extract(doc, '$.kind') = 'episode'"


def find(engine: Engine, ask: SearchQuery) -> Found:
    request = engine.request(ask)
    judged = engine.judged(request)
    keys = (request.index_key, *request.library_keys)
    clock = request.now if request.now is not None else int(time.time())
    # The field filters let no memory of these scopes through (an empty allowed set).
    shut = request.allowed is not None and not request.allowed
    why = explain(
        ask.query,
        judged.results,
        judged.gate,
        ask.floor,
        ready=index_ready(engine),
        counts=lambda: counts(engine, keys, request.statuses, clock),
        statuses=request.statuses,
        filters=filter_names(ask.filters) if shut and ask.filters is not None else (),
    )
    return Found(tuple(judged.results), why, judged.gate)


def index_ready(engine: Engine) -> bool:
    """False while the writer's start-up sync (the first full reconcile of the watcher) has
    not finished: memories on disk may not be searchable yet. A reader (no watcher) cannot
    tell and says ready."""
    return engine.watcher is None or engine.watcher.ready.is_set()


def counts(
    engine: Engine, keys: Sequence[str], statuses: Sequence[str], now: int
) -> tuple[int, int]:
    """(episodes, episodes with one of `statuses` not expired at `now`) of these scopes."""
    total = engine.manifest.scope_count(keys, _EPISODES)
    where = (
        f"{_EPISODES} AND json_extract(doc, '$.status') IN ({','.join('?' * len(statuses))})"
        " AND (json_extract(doc, '$.expires_at') = 0 OR json_extract(doc, '$.expires_at') > ?)"
    )
    return total, engine.manifest.scope_count(keys, where, [*statuses, now])
