"""/history, /history/diff, /injection, /audit, /export, /import: what happened in a scope."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from console.context import ConsoleContext
from console.endpoints_episodes import MAX_ID
from console.errors import ApiError
from console.requests import Body, checked_id, page_fields
from vault.files import audit
from vault.git.githistory import ScopedCommit, commit_diff, scope_history
from vault.layout.keys import ScopeId
from vault.layout.views import iso
from vault.transfer.exchange import export_scope, import_payload
from vault.writes.snapshots import read_snapshot

MAX_IMPORT_BYTES = 5_000_000


def _prefixes(ctx: ConsoleContext, scope: ScopeId, body: Body) -> list[str]:
    """The scope's folders, or one episode's file when `id` is given."""
    layout = ctx.vault.layout
    episode_id = checked_id(body.text("id", required=False, limit=MAX_ID), "episode id")
    if episode_id is not None:
        return [ctx.vault.find_episode(scope, episode_id).rel]
    folders = {layout.rel(layout.session_dir(scope)), layout.rel(layout.episodes_dir(scope))}
    return sorted(folders)


def _commit(c: ScopedCommit) -> dict[str, Any]:
    return {
        "sha": c.info.sha,
        "author": c.info.author,
        "timestamp": iso(c.info.timestamp),
        "message": c.info.message,
        "files": list(c.files),
    }


def history(ctx: ConsoleContext, body: Body) -> dict[str, Any]:
    scope = body.scope(ctx)
    limit = body.integer("limit", 50, 1, 100)
    root = ctx.vault.root
    commits = scope_history(root, _prefixes(ctx, scope, body), limit)
    return {"git": (root / ".git").exists(), "commits": [_commit(c) for c in commits]}


def history_diff(ctx: ConsoleContext, body: Body) -> dict[str, Any]:
    scope = body.scope(ctx)
    sha = body.need("sha", limit=40).lower()
    found = commit_diff(ctx.vault.root, sha, _prefixes(ctx, scope, body))
    return {
        "sha": found.info.sha,
        "message": found.info.message,
        "author": found.info.author,
        "timestamp": iso(found.info.timestamp),
        "files": list(found.files),
        "diff": found.diff,
        "truncated": found.truncated,
    }


def injection(ctx: ConsoleContext, body: Body) -> dict[str, Any] | None:
    scope = body.scope(ctx)
    return read_snapshot(ctx.vault.root, scope)


def audit_log(ctx: ConsoleContext, body: Body) -> dict[str, Any]:
    scope = body.scope(ctx)
    page = body.integer("page", 1, 1, 1_000_000)
    size = body.integer("page_size", 50, 1, 200)
    entries, problems = audit.read(ctx.vault.layout.audit_path(scope))
    entries.reverse()  # newest first
    start = (page - 1) * size
    return {
        **page_fields(len(entries), page, size),
        "items": [asdict(e) for e in entries[start : start + size]],
        "problems": [{"line": n, "message": m} for n, m in problems],
    }


def export(ctx: ConsoleContext, body: Body) -> dict[str, Any]:
    return export_scope(ctx.vault, body.scope(ctx))


def import_(ctx: ConsoleContext, body: Body) -> dict[str, Any]:
    scope = body.scope(ctx)
    payload = body.raw.get("payload")
    if not isinstance(payload, dict | list):
        raise ApiError(
            "bad_request",
            "`payload` must be the exported JSON (an object with `episodes`, or a list)",
        )
    if len(str(payload)) > MAX_IMPORT_BYTES:
        raise ApiError("bad_request", "the import is larger than 5 MB: split it into parts")
    return import_payload(ctx.vault, scope, payload, source="console")


ROUTES = {
    "/history": history,
    "/history/diff": history_diff,
    "/injection": injection,
    "/audit": audit_log,
    "/export": export,
    "/import": import_,
}
