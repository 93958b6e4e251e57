"""/health: red/amber/green cards from the same checks as `!memory health`."""

from __future__ import annotations

import time
from dataclasses import asdict
from typing import Any

from console.context import ConsoleContext
from console.requests import Body
from indexer.health import (
    Check,
    embedding_check,
    files_check,
    git_check,
    index_checks,
    writable_check,
)
from indexer.probe import isolation_probe
from vault.check import check_vault

LEVELS = {"OK": "green", "WARN": "amber", "ERROR": "red"}
ORDER = ("green", "amber", "red")


def _card(key: str, title: str, checks: list[Check]) -> dict[str, Any]:
    levels = [LEVELS.get(level, "red") for level, _ in checks] or ["green"]
    return {
        "id": key,
        "title": title,
        "level": max(levels, key=ORDER.index),
        "detail": [d for _, d in checks],
    }


def _index_status(ctx: ConsoleContext) -> list[Check]:
    engine = ctx.engine
    if engine is None:
        return [("ERROR", "the index could not be opened: search is off until it is")]
    checks = index_checks(engine)
    watcher = engine.watcher
    if watcher is None:
        checks.append(("WARN", "no watcher in this process: hand edits wait for the next sync"))
        return checks
    pending, age = watcher.backlog()
    last = watcher.last_sync_at
    since = f"{time.time() - last:.0f} s ago" if last else "not yet"
    level = "WARN" if age > 5 or watcher.failures else "OK"
    checks.append((level, f"watcher: {pending} change(s) waiting ({age:.1f} s), last sync {since}"))
    return checks


def health(ctx: ConsoleContext, body: Body) -> dict[str, Any]:
    vault = ctx.vault
    report = check_vault(vault.root)
    cards = [
        _card("files", "Vault files", [writable_check(vault.root), files_check(report)]),
        _card("git", "Git history", [git_check(vault, ctx.git_autocommit)]),
        _card("index", "Index", _index_status(ctx)),
    ]
    if ctx.engine is not None:
        cards.append(_card("embedding", "Embedding", [embedding_check(ctx.engine)]))
    if ctx.warnings:
        cards.append(_card("settings", "Settings", [("WARN", w) for w in ctx.warnings]))
    if isinstance(body.raw.get("scope"), dict) and ctx.engine is not None:
        scope = body.scope(ctx)
        cards.append(
            _card("isolation", "Isolation probe", isolation_probe(vault.root, ctx.engine, scope))
        )
    return {
        "level": max((c["level"] for c in cards), key=ORDER.index),
        "cards": cards,
        "problems": [asdict(p) for p in report.problems],
    }


ROUTES = {"/health": health}
