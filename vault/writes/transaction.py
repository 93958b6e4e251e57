"""One memory operation's bookkeeping: what it wrote, its audit lines, its single commit."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from vault.files import audit, tempfiles
from vault.files.regular import read_regular
from vault.files.safewrite import announcing, content_hash
from vault.git import gitlock, gitlog, gitplan, gitstate
from vault.layout.keys import ScopeId
from vault.layout.layout import STATE_DIR, Layout
from vault.layout.names import ID_FILE, ensure_id_file, is_hashed
from vault.redaction.redact import redact

log = logging.getLogger(__name__)


def now_utc() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


@dataclass(frozen=True)
class CommitFailure:
    """An operation whose files are saved but not committed (the CLI exits 1 with this)."""

    saved: tuple[str, ...]  # vault-relative, the operation's own files first
    reason: str

    def message(self) -> str:
        return (
            f"memory saved in {self.saved[0]}, but not committed to git: {self.reason}; "
            "the next memory operation commits it once that is fixed"
        )


@dataclass
class Txn:
    """What one operation wrote, for its audit lines and its single commit."""

    scope: ScopeId
    source: str
    query_id: int | str | None
    written: list[Path] = field(default_factory=list)
    entries: list[audit.AuditEntry] = field(default_factory=list)
    commit_error: str | None = None  # set when the files are saved but the commit failed
    name: str = ""
    git: bool = False  # journal what it writes (vault.git.gitstate) for the commit
    op_id: str = field(default_factory=lambda: secrets.token_hex(6))
    # vault-relative path -> sha256 of what this operation last announced writing there
    # (None: deleting it); the journal holds the same, so a commit can tell its bytes.
    announced: dict[str, str | None] = field(default_factory=dict)
    # Where the audit lines go when not the session's log (a person's key events: the
    # chat's log is read by everyone in the chat, vault.events.event_ops).
    audit_at: Path | None = None

    def intend(self, layout: Layout, path: Path, digest: str | None) -> None:
        """Journal `path` and the sha256 of the bytes about to be written there (None: about
        to be deleted) before the write, so a kill after the write still commits it, and
        only while it holds those bytes (vault.git.gitplan)."""
        try:
            rel = layout.rel(path)
        except ValueError:
            return  # outside the vault: not ours to commit
        if not self.git or rel.split("/", 1)[0] == STATE_DIR:
            return  # .memvault is git-ignored derived state, never committed
        if rel in self.announced and self.announced[rel] == digest:
            return
        self.announced[rel] = digest  # a second write of the path: its newest bytes count
        message = f"{self.name} {self.scope.session_key} (interrupted)"
        try:
            gitstate.record_pending(layout.state_dir, self.op_id, message, {rel: digest})
        except OSError as exc:  # .memvault not writable: the write itself still goes on
            log.warning("git=pending_not_recorded path=%s error=%r", rel, str(exc))

    def files(self, layout: Layout) -> gitstate.Files:
        """What the operation really wrote: path -> the sha256 it announced there."""
        files: gitstate.Files = {}
        for rel in dict.fromkeys(layout.rel(p) for p in self.written):
            if rel in self.announced:
                files[rel] = self.announced[rel]
            elif rel.split("/", 1)[0] != STATE_DIR:
                # Never announced: nothing says which bytes are ours, so nothing is committed.
                log.warning("git=unannounced_write path=%r op=%s", rel, self.name)
        return files

    def commit_failure(self, layout: Layout) -> CommitFailure | None:
        if self.commit_error is None or not self.written:
            return None
        saved = tuple(dict.fromkeys(layout.rel(p) for p in self.written))
        return CommitFailure(saved, self.commit_error)

    def settle(self, layout: Layout, message: str, *, always: bool = False) -> None:
        """Journal what the operation really wrote, replacing its intents (an intent can
        name a file it then did not write: a name already taken, an error midway).
        `always`: also when nothing was announced (a file removed without remove_file)."""
        if not self.git or not (self.announced or always):
            return
        try:
            files = self.files(layout)
            gitstate.record_pending(layout.state_dir, self.op_id, message, files, final=True)
        except OSError as exc:
            log.warning("git=pending_not_recorded error=%r", str(exc))

    def record(self, operation: str, target_type: str, target_id: str, summary: str) -> None:
        # Redacted: the summary quotes memory text (a person's hand-written file too, on
        # archive or forget) and becomes the audit line and the commit message.
        self.entries.append(
            audit.make_entry(
                operation,
                target_type,
                target_id,
                redact(summary).text,
                source=self.source,
                query_id=self.query_id,
            )
        )


@contextmanager
def journaled(txn: Txn, layout: Layout) -> Iterator[Txn]:
    """Journal each file before it is written; on an error, what was really written."""
    with announcing(lambda path, digest: txn.intend(layout, path, digest)):
        try:
            yield txn
        except BaseException:
            # what it wrote before failing is saved: the next commit makes it up
            txn.settle(layout, f"{txn.name} {txn.scope.session_key} (failed)")
            raise


def finish(txn: Txn, name: str, layout: Layout, *, git: bool) -> None:
    """Append the audit lines, then commit exactly the files this operation wrote."""
    scope = txn.scope
    audit_path = txn.audit_at or layout.audit_path(scope)
    if txn.entries:
        # An append: the file will hold what it holds now plus these lines.
        added = b"".join(audit.line(e) for e in txn.entries)
        txn.intend(layout, audit_path, content_hash(_current(audit_path) + added))
    for marker, value in _new_markers(layout, scope):
        txn.intend(layout, marker, content_hash(value.encode("utf-8")))
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


def _current(path: Path) -> bytes:
    try:
        return read_regular(path)
    except FileNotFoundError:
        return b""
    except OSError:
        return b""  # a link or a FIFO there: the append refuses it and says so


def _commit(layout: Layout, txn: Txn, message: str) -> None:
    # The files are written and are the truth; a failed commit must not undo or fail the
    # operation. It is journaled first, so a kill or a failure here is made up by the next
    # operation's commit, and recorded, so a failure that persists is shown (not just logged).
    # Only bytes MemVault wrote are committed (vault.git.gitplan): one pass over the journal.
    state = layout.state_dir
    plan = gitplan.plan(gitstate.read_pending(state), txn.op_id, txn.files(layout))
    message = gitplan.message_with_earlier(message, plan)
    paths = list(plan.expected)
    left: list[str] = []
    try:
        gitlog.commit_paths(
            layout.root,
            paths,
            message,
            repair_index=plan.made_up,
            expected=plan.accepts(),
            left=left,
        )
    except (gitlog.GitCommitError, ValueError, OSError) as exc:
        txn.commit_error = str(exc)
        log.warning("git=commit_failed scope=%s error=%r", txn.scope.session_key, str(exc))
        gitplan.report(left, plan)
        try:
            first = message.split("\n", 1)[0]
            if gitplan.should_compact(plan, left):
                gitplan.compact(state, plan, left, txn.op_id, first)
            else:  # every path and the real message, for the commit that makes this one up
                txn.settle(layout, first, always=True)
            kept = set(left)
            gitstate.record_failure(state, str(exc), [p for p in paths if p not in kept])
        except OSError as state_exc:
            log.warning("git=failure_not_recorded error=%r", str(state_exc))
        return
    gitplan.report(left, plan)
    try:
        gitstate.committed(state)
    except OSError as exc:  # the next commit replays the journal: a no-op, harmless
        log.warning("git=pending_not_cleared error=%r", str(exc))


def recover_on_open(layout: Layout, *, git: bool) -> None:
    """A writer's first operation (under the writer lock): sweep what dead writers left
    (temp files, index lock pins)."""
    try:
        tempfiles.sweep_stale_temps(layout.root, locked=True)
        git_dir = layout.root / ".git"
        if git and git_dir.is_dir():
            gitlock.sweep_pins(str(git_dir))
    except OSError as exc:  # a read-only vault: the write itself will say so
        log.warning("vault=recovery_skipped error=%r", str(exc))


def _scope_folders(layout: Layout, scope: ScopeId) -> list[tuple[Path, str]]:
    folders = [(layout.session_dir(scope), scope.session)]
    if scope.bot:
        folders.append((layout.bot_dir(scope.bot), scope.bot))
    return folders


def _new_markers(layout: Layout, scope: ScopeId) -> list[tuple[Path, str]]:
    """The `.id` files _id_markers is about to write, and what (to journal them first)."""
    return [
        (folder / ID_FILE, value)
        for folder, value in _scope_folders(layout, scope)
        if folder.is_dir() and is_hashed(folder.name) and not (folder / ID_FILE).exists()
    ]


def _id_markers(layout: Layout, scope: ScopeId) -> list[Path]:
    """`.id` files next to folders whose names had to be hashed (see vault.layout.names)."""
    folders = _scope_folders(layout, scope)
    written = [ensure_id_file(f, value) for f, value in folders if f.is_dir()]
    return [p for p in written if p is not None]


def notify(callback: Callable[[list[str]], None], rels: list[str]) -> None:
    # The files are already safe on disk; an index hiccup must not fail the operation
    # (the watcher or the next reconcile catches up).
    try:
        callback(rels)
    except Exception as exc:
        log.warning("index=sync_failed paths=%d error=%r", len(rels), str(exc))
