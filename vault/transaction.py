"""One memory operation's bookkeeping: what it wrote, its audit lines, its single commit."""

from __future__ import annotations

import logging
import os
import secrets
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from vault import audit, gitlock, gitlog, gitrepo, gitstate, tempfiles
from vault.keys import ScopeId
from vault.layout import STATE_DIR, Layout
from vault.names import ID_FILE, ensure_id_file, is_hashed
from vault.redact import redact
from vault.safewrite import announcing

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
    git: bool = False  # journal what it writes (vault.gitstate) for the commit
    op_id: str = field(default_factory=lambda: secrets.token_hex(6))
    announced: set[str] = field(default_factory=set)
    # Where the audit lines go when not the session's log (a person's key events: the
    # chat's log is read by everyone in the chat, vault.event_ops).
    audit_at: Path | None = None

    def intend(self, layout: Layout, path: Path) -> None:
        """Journal `path` before it is written, so a kill after the write still commits it."""
        try:
            rel = layout.rel(path)
        except ValueError:
            return  # outside the vault: not ours to commit
        if not self.git or rel in self.announced or rel.split("/", 1)[0] == STATE_DIR:
            return  # .memvault is git-ignored derived state, never committed
        self.announced.add(rel)
        message = f"{self.name} {self.scope.session_key} (interrupted)"
        try:
            gitstate.record_pending(layout.state_dir, self.op_id, message, [rel])
        except OSError as exc:  # .memvault not writable: the write itself still goes on
            log.warning("git=pending_not_recorded path=%s error=%r", rel, str(exc))

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
        rels = sorted({layout.rel(p) for p in self.written})
        try:
            gitstate.record_pending(layout.state_dir, self.op_id, message, rels, final=True)
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
    with announcing(lambda path: txn.intend(layout, path)):
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
        txn.intend(layout, audit_path)
    for marker in _new_markers(layout, scope):
        txn.intend(layout, marker)
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
    # operation. It is journaled first, so a kill or a failure here is made up by the next
    # operation's commit, and recorded, so a failure that persists is shown (not just logged).
    state = layout.state_dir
    rels = sorted({layout.rel(p) for p in txn.written})
    earlier = _still_pending([op for op in gitstate.read_pending(state) if op.op != txn.op_id])
    paths = _committable(layout.root, rels, gitstate.pending_paths(earlier))
    if earlier:
        # one line per earlier operation: the message of its last journal line
        messages = {op.op: op.message.splitlines()[0] for op in earlier if op.message}
        message = message.rstrip("\n")
        message += "\n\nAlso commits what earlier operations saved but could not commit:\n"
        message += "".join(f"- {m}\n" for m in messages.values())
    try:
        gitlog.commit_paths(layout.root, paths, message, repair_index=bool(earlier))
    except (gitlog.GitCommitError, ValueError, OSError) as exc:
        txn.commit_error = str(exc)
        log.warning("git=commit_failed scope=%s error=%r", txn.scope.session_key, str(exc))
        try:
            # every path and the real message, for the commit that makes this one up
            txn.settle(layout, message.split("\n", 1)[0], always=True)
            gitstate.record_failure(state, str(exc), paths)
        except OSError as state_exc:
            log.warning("git=failure_not_recorded error=%r", str(state_exc))
        return
    try:
        gitstate.committed(state)
    except OSError as exc:  # the next commit replays the journal: a no-op, harmless
        log.warning("git=pending_not_cleared error=%r", str(exc))


def _still_pending(ops: list[gitstate.PendingOp]) -> list[gitstate.PendingOp]:
    """The journal without operations whose last word is that they wrote nothing (one that
    failed and put back what it had written): there is nothing of theirs to make up."""
    last_final = {op.op: op for op in ops if op.final}
    done = {key for key, op in last_final.items() if not op.paths}
    return [op for op in ops if op.op not in done]


def _committable(root: Path, own: list[str], earlier: list[str]) -> list[str]:
    """This operation's paths plus the earlier ones that are still plain files (or gone).

    The journal is a file anyone can edit: an entry that is not a vault path, or a path a
    person has since turned into a folder or a symlink, is dropped, so one bad line cannot
    block every commit from now on.
    """
    paths = list(own)
    for rel in dict.fromkeys(earlier):
        if rel in paths or rel.split("/", 1)[0] == STATE_DIR:
            continue  # .memvault is git-ignored derived state: never committed
        try:
            gitrepo.git_path(rel)
            mode = os.lstat(root / rel).st_mode
        except ValueError:
            log.warning("git=pending_path_dropped path=%r reason=not_a_vault_path", rel)
            continue
        except (FileNotFoundError, NotADirectoryError):
            paths.append(rel)  # deleted by the earlier operation (forget): commit that
            continue
        if stat.S_ISREG(mode):
            paths.append(rel)
        else:
            log.warning("git=pending_path_dropped path=%r reason=not_a_regular_file", rel)
    return paths


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


def _new_markers(layout: Layout, scope: ScopeId) -> list[Path]:
    """The `.id` files _id_markers is about to write (to journal them first)."""
    return [
        folder / ID_FILE
        for folder, _ in _scope_folders(layout, scope)
        if folder.is_dir() and is_hashed(folder.name) and not (folder / ID_FILE).exists()
    ]


def _id_markers(layout: Layout, scope: ScopeId) -> list[Path]:
    """`.id` files next to folders whose names had to be hashed (see vault.names)."""
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
