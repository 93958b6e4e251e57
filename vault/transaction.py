"""One memory operation's bookkeeping: what it wrote, its audit lines, its single commit."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from vault import audit, gitlog
from vault.keys import ScopeId
from vault.layout import Layout
from vault.names import ensure_id_file

log = logging.getLogger(__name__)


def now_utc() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


@dataclass
class Txn:
    """What one operation wrote, for its audit lines and its single commit."""

    scope: ScopeId
    source: str
    query_id: int | str | None
    written: list[Path] = field(default_factory=list)
    entries: list[audit.AuditEntry] = field(default_factory=list)

    def record(self, operation: str, target_type: str, target_id: str, summary: str) -> None:
        self.entries.append(
            audit.make_entry(
                operation,
                target_type,
                target_id,
                summary,
                source=self.source,
                query_id=self.query_id,
            )
        )


def finish(txn: Txn, name: str, layout: Layout, *, git: bool) -> None:
    """Append the audit lines, then commit exactly the files this operation wrote."""
    scope = txn.scope
    audit_path = layout.audit_path(scope)
    for entry in txn.entries:
        audit.append(audit_path, entry)
    if txn.entries:
        txn.written.append(audit_path)
    txn.written.extend(_id_markers(layout, scope))
    if git and txn.written:
        target = txn.entries[0].target_id if txn.entries else ""
        message = f"{name} {scope.session_key} {target}".rstrip()
        body = "\n".join(f"{e.operation}: {e.summary}" for e in txn.entries)
        _commit(layout, txn, f"{message}\n\n{body}\n" if body else message)
    log.info(
        "op=%s scope=%s files=%d source=%s", name, scope.session_key, len(txn.written), txn.source
    )


def _commit(layout: Layout, txn: Txn, message: str) -> None:
    # The files are written and are the truth; a failed commit must not undo or fail the
    # operation, only leave the files uncommitted for the person's next `git commit`.
    try:
        gitlog.commit_paths(layout.root, sorted({layout.rel(p) for p in txn.written}), message)
    except (gitlog.GitCommitError, ValueError, OSError) as exc:
        log.warning("git=commit_failed scope=%s error=%r", txn.scope.session_key, str(exc))


def _id_markers(layout: Layout, scope: ScopeId) -> list[Path]:
    """`.id` files next to folders whose names had to be hashed (see vault.names)."""
    folders = [(layout.session_dir(scope), scope.session)]
    if scope.bot:
        folders.append((layout.bot_dir(scope.bot), scope.bot))
    written = [ensure_id_file(f, value) for f, value in folders if f.is_dir()]
    return [p for p in written if p is not None]


def notify(callback: Callable[[list[str]], None], rels: list[str]) -> None:
    # The files are already safe on disk; an index hiccup must not fail the operation
    # (the watcher or the next reconcile catches up).
    try:
        callback(rels)
    except Exception as exc:
        log.warning("index=sync_failed paths=%d error=%r", len(rels), str(exc))
