"""/episodes, /search, /episode and its curate actions: the L2 files of one scope."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from console.context import ConsoleContext
from console.endpoints_fields import body_filters, edit_fields
from console.errors import ApiError, require_engine
from console.requests import Body, checked_id, page_fields
from indexer.retrieval.search import MODES, relevance_fields
from indexer.retrieval.search_query import SearchQuery
from indexer.retrieval.verdict import verdict_words
from vault.format.model import STATUSES, FormatError
from vault.layout.keys import ScopeId
from vault.layout.store import StoredEpisode, page_of, read_episode_file
from vault.layout.views import episode_full
from vault.writes.episode_edit import edit_episode

PAGE_SIZE = 20
MAX_ID = 200


def _id(body: Body) -> str:
    value = checked_id(body.need("id", limit=MAX_ID), "episode id")
    assert value is not None
    return value


def _full(ctx: ConsoleContext, stored: StoredEpisode) -> dict[str, Any]:
    """E, plus `expired`: still `active` in its file but past expires_at by this vault's
    clock, so recall and search leave it out (the page marks it)."""
    return {**episode_full(stored), "expired": stored.episode.is_expired(ctx.vault.clock())}


def _find(ctx: ConsoleContext, scope: ScopeId, body: Body) -> StoredEpisode:
    return ctx.vault.find_episode(scope, _id(body))


def _checked(stored: StoredEpisode, expected: str | None) -> None:
    if expected is not None and stored.sha != expected:
        raise ApiError(
            "conflict",
            f"{stored.rel} changed on disk since you opened it: reload it and apply your "
            "change again",
        )


def episodes(ctx: ConsoleContext, body: Body) -> dict[str, Any]:
    scope = body.scope(ctx)
    status = body.choice("status", (*STATUSES, "all"), "active")
    page = body.integer("page", 1, 1, 1_000_000)
    size = body.integer("page_size", PAGE_SIZE, 1, 100)
    filters = body_filters(body)
    # One pass over the files gives the page and the files that could not be read.
    found, problems = ctx.vault.load_episodes(scope)
    if filters.any():  # before paging: every page is full of matches
        now = ctx.vault.clock()
        found = [s for s in found if filters.admits(s.episode, now)]
    listed = page_of(found, status=status, page=page, page_size=size)
    return {
        **page_fields(listed.total, listed.page, size),
        "items": [_full(ctx, s) for s in listed.items],
        "problems": [p.as_json() for p in problems],
    }


def search(ctx: ConsoleContext, body: Body) -> dict[str, Any]:
    scope = body.scope(ctx)
    query = body.need("query", limit=2000)
    mode = body.choice("mode", MODES, "hybrid")
    top_k = body.integer("top_k", 10, 1, 50)
    status = body.choice("status", (*STATUSES, "all"), "active")
    statuses = STATUSES if status == "all" else (status,)
    filters = body_filters(
        body
    )  # inside the index query, before ranking (indexer.retrieval.filters)
    gate = body.choice("gate", ("on", "off"), "on" if ctx.gate else "off") == "on"
    engine = require_engine(ctx)
    results = engine.search(
        SearchQuery(
            query,
            scope,
            top_k=top_k,
            mode=mode,
            statuses=statuses,
            floor=ctx.floor,
            filters=filters,
            gate=gate,
        ),
    )
    layout = ctx.vault.layout
    items = []
    for result in results:
        doc = result.doc
        # The index filters by index_key before ranking; checking again costs nothing and
        # keeps a damaged index from ever showing another chat's memory here.
        if doc.kind != "episode" or doc.index_key != scope.index_key:
            continue
        try:
            item = _full(ctx, read_episode_file(layout, ctx.vault.root / doc.path))
        except (OSError, FormatError):
            continue  # deleted or broken since it was indexed: the watcher catches up
        item["score"] = result.score
        # Ranked like `memvault search`, each marked: relevance and whether it reaches the
        # floor recall uses (explain.absolute holds its components).
        item.update(relevance_fields(result))
        item["explain"] = dict(result.explain)
        items.append(item)
    # The gate's decision and the floor that applied, in the words every surface shows.
    verdict = verdict_words([r.explain for r in results])
    return {"query": query, "mode": mode, "items": items, "verdict": verdict}


def episode(ctx: ConsoleContext, body: Body) -> dict[str, Any]:
    return _full(ctx, _find(ctx, body.scope(ctx), body))


@contextmanager
def _current(ctx: ConsoleContext, scope: ScopeId, body: Body) -> Iterator[StoredEpisode]:
    """The episode as on disk, under the vault lock, if it is the version the page showed."""
    expected = body.sha()
    with ctx.vault.lock.hold():
        stored = _find(ctx, scope, body)
        _checked(stored, expected)
        yield stored


def _status(status: str) -> Any:
    def change(ctx: ConsoleContext, body: Body) -> dict[str, Any]:
        scope = body.scope(ctx)
        with _current(ctx, scope, body) as stored:
            done = ctx.vault.change_status(
                scope, stored.episode.id, status, source="console", expected_hash=stored.sha
            )
        # `note`: why a restore left it superseded (vault.writes.lifecycle), else "".
        return {**_full(ctx, ctx.vault.find_episode(scope, stored.episode.id)), "note": done.note()}

    return change


def delete(ctx: ConsoleContext, body: Body) -> dict[str, Any]:
    scope = body.scope(ctx)
    with _current(ctx, scope, body) as stored:
        gone = ctx.vault.forget(scope, stored.episode.id, source="console")
    # `kept`: the commit that saved changes git did not hold yet (a hand edit), else null.
    return {**_full(ctx, stored), "kept": gone.kept, "kept_outside_git": list(gone.aside),
            "note": gone.note()}  # fmt: skip


def edit(ctx: ConsoleContext, body: Body) -> dict[str, Any]:
    scope = body.scope(ctx)
    expected = body.sha()
    if expected is None:
        raise ApiError("bad_request", "`expected_sha256` is missing: send the sha256 shown")
    stored = edit_episode(
        ctx.vault,
        scope,
        _id(body),
        expected_hash=expected,
        content=body.text("content", required=False),
        tags=body.strings("tags"),
        fields=edit_fields(ctx, body),
    )
    return _full(ctx, stored)


def verify(ctx: ConsoleContext, body: Body) -> dict[str, Any]:
    scope = body.scope(ctx)
    stored = edit_episode(ctx.vault, scope, _id(body), expected_hash=body.sha(), verified=True)
    return _full(ctx, stored)


ROUTES = {
    "/episodes": episodes,
    "/search": search,
    "/episode": episode,
    "/episode/archive": _status("archived"),
    "/episode/restore": _status("active"),
    "/episode/delete": delete,
    "/episode/edit": edit,
    "/episode/verify": verify,
}
