"""/health: red/amber/green cards from the same checks as `!memory health`.

Each card has an English `title` and `detail` lines for API readers, and `title_key` and
`lines` (code + params, vault.format.findings) the page shows in the reader's language.
"""

from __future__ import annotations

import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from console.context import ConsoleContext, Notice
from console.requests import Body
from indexer.health import (
    Check,
    embedding_check,
    files_check,
    git_check,
    hand_edits_check,
    index_checks,
    writable_check,
)
from indexer.probe import isolation_probe
from vault.format.findings import as_check
from vault.git import syncstate
from vault.health.check import check_vault

LEVELS = {"OK": "green", "WARN": "amber", "ERROR": "red"}
ORDER = ("green", "amber", "red")
TITLES = {
    "files": "Vault files",
    "location": "Vault location",
    "git": "Git history",
    "hand_edits": "Hand edits",
    "index": "Index",
    "embedding": "Embedding",
    "settings": "Settings",
    "isolation": "Isolation probe",
}
# The location card kept the key its host already sends (plugin: vault_location).
TITLE_KEYS = {"location": "health_location"}


def _line(check: Check, key: str | None = None) -> dict[str, Any]:
    line = {
        "level": LEVELS.get(check.level, "red"),
        "code": check.code,
        "params": check.params,
        "message": check.message,
    }
    return line | {"key": key} if key else line


def _card(card_id: str, checks: list[Check], keys: list[str | None] | None = None) -> dict:
    levels = [LEVELS.get(c.level, "red") for c in checks] or ["green"]
    return {
        "id": card_id,
        "title": TITLES[card_id],
        "title_key": TITLE_KEYS.get(card_id, f"health_card_{card_id}"),
        "level": max(levels, key=ORDER.index),
        "detail": [c.message for c in checks],
        "lines": [_line(c, k) for c, k in zip(checks, keys or [None] * len(checks), strict=True)],
    }


def _index_status(ctx: ConsoleContext) -> list[Check]:
    engine = ctx.engine
    if engine is None:
        why = "the index could not be opened: search is off until it is"
        return [Check("ERROR", why, "index_unavailable")]
    checks = index_checks(engine)
    watcher = engine.watcher
    if watcher is None:
        why = "no watcher in this process: hand edits wait for the next sync"
        checks.append(Check("WARN", why, "watcher_none"))
        return checks
    pending, age = watcher.backlog()
    last = watcher.last_sync_at
    level = "WARN" if age > 5 or watcher.failures else "OK"
    params: dict[str, Any] = {"pending": pending, "age": f"{age:.1f}"}
    waiting = f"watcher: {pending} change(s) waiting ({age:.1f} s), last sync"
    if last:
        params["since"] = round(time.time() - last)
        why = f"{waiting} {params['since']} s ago"
        checks.append(Check(level, why, "watcher_backlog", params))
    else:
        checks.append(Check(level, f"{waiting} not yet", "watcher_backlog_never", params))
    return checks


def _notice(notice: Notice | str) -> tuple[Check, str | None]:
    """A host's line: a Notice names its own message; plain text is shown as written."""
    if isinstance(notice, str):
        return as_check(("WARN", notice)), None
    return Check(notice.level, notice.text, "text", {"text": notice.text}), notice.key


def _location(ctx: ConsoleContext) -> list[dict[str, Any]]:
    """Where the vault is and whether the host keeps it, in the reader's language."""
    if ctx.location is None:
        return []
    check, key = _notice(ctx.location)
    card = _card("location", [check], [key])
    return [card | {"detail_key": ctx.location.key, "vars": ctx.location.vars}]


def _synced(root: Path) -> list[Check]:
    said = syncstate.check(root)  # replicas: a conflict kept twice, a failing sync
    return [said] if said is not None else []


def health(ctx: ConsoleContext, body: Body) -> dict[str, Any]:
    vault = ctx.vault
    report = check_vault(vault.root)
    cards = [
        _card("files", [writable_check(vault.root), files_check(report)]),
        *_location(ctx),
        _card("git", [git_check(vault, ctx.git_autocommit), *_synced(vault.root)]),
    ]
    if (vault.root / ".git").exists():  # before the probe writes (it never commits)
        cards.append(_card("hand_edits", [hand_edits_check(vault)]))
    cards.append(_card("index", _index_status(ctx)))
    if ctx.engine is not None:
        cards.append(_card("embedding", [embedding_check(ctx.engine)]))
    if ctx.warnings:
        notices = [_notice(w) for w in ctx.warnings]
        cards.append(_card("settings", [c for c, _ in notices], [k for _, k in notices]))
    if isinstance(body.raw.get("scope"), dict) and ctx.engine is not None:
        scope = body.scope(ctx)
        cards.append(_card("isolation", isolation_probe(vault.root, ctx.engine, scope)))
    return {
        "level": max((c["level"] for c in cards), key=ORDER.index),
        "cards": cards,
        "problems": [asdict(p) for p in report.problems],
    }


ROUTES = {"/health": health}
