"""Which journaled paths a commit takes: only those that still hold what MemVault wrote.

The git journal (vault.git.gitstate) names, per path, the sha256 of the bytes MemVault wrote
there, or None where it deleted the path. A commit takes a path only while the file holds
exactly such bytes (a deleted path only while it is still absent), compared on the very
bytes that go into the commit (vault.git.gitrepo.snapshot). Everything else is left as it is in
the working tree, uncommitted, dropped from the journal and said: a journal line naming
README.md or a person's notes, a killed writer's intent for a file it never wrote that a
person wrote later, a memory a person edited since MemVault wrote it.

A line of an older MemVault names paths without what it wrote there: it cannot be told from
a person's edit, so it is never committed (unverified: left, dropped and said the same way;
a person who knows the file is MemVault's commits it).

Linear in the journal's length: dicts and sets, one pass each; a journal left long by
commits that keep failing is compacted to one line.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from vault.files.procs import Owner
from vault.git import gitrepo, gitstate
from vault.git.gitstate import Files, PendingOp
from vault.layout.layout import STATE_DIR

log = logging.getLogger(__name__)

SHOWN = 3  # paths named in a warning; the count says the rest
MESSAGES_SHOWN = 20  # earlier operations listed in a made-up commit's message
COMPACT_LINES = 1_000  # a failed commit rewrites a journal longer than this
VERSIONS_KEPT = 8  # per path, the newest versions MemVault wrote that a commit accepts


@dataclass
class Plan:
    """What one commit takes: path -> the sha256s (None: absent) it may hold."""

    expected: dict[str, dict[str | None, None]] = field(default_factory=dict)
    earlier: dict[str, None] = field(default_factory=dict)  # messages of earlier operations
    unverified: dict[str, None] = field(default_factory=dict)  # an older MemVault's lines
    lines: int = 0  # journal lines read

    @property
    def made_up(self) -> bool:
        return bool(self.earlier)

    def accepts(self) -> dict[str, set[str | None]]:
        return {path: set(versions) for path, versions in self.expected.items()}


def _accept(expected: dict[str, dict[str | None, None]], path: str, digest: str | None) -> None:
    versions = expected.setdefault(path, {})
    versions.pop(digest, None)  # re-inserted: the newest version last
    versions[digest] = None
    if len(versions) > VERSIONS_KEPT:
        del versions[next(iter(versions))]


def _committable(path: str) -> bool:
    if path.split("/", 1)[0] == STATE_DIR:
        return False  # .memvault is git-ignored derived state, never committed
    try:
        gitrepo.git_path(path)
    except ValueError:
        return False
    return True


def plan(ops: list[PendingOp], own_op: str, own: Files) -> Plan:
    """The commit of operation `own_op`, which wrote `own`, plus what earlier operations
    journaled and could not commit. An operation's final line replaces its intents."""
    result = Plan(lines=len(ops))
    finals = {op.op for op in ops if op.final}
    dropped: dict[str, None] = {}
    for op in ops:
        if op.op == own_op or (not op.final and op.op in finals):
            continue  # own: `own` is what it really wrote
        if op.files is None:
            result.unverified.update(dict.fromkeys(op.paths))
            continue
        for path, digest in op.files.items():
            if _committable(path):
                _accept(result.expected, path, digest)
            else:
                dropped[path] = None
        if op.files and op.message:
            result.earlier[op.message.splitlines()[0]] = None
    for path, digest in own.items():
        _accept(result.expected, path, digest)
    for path in result.expected:
        result.unverified.pop(path, None)  # a newer line says what MemVault wrote there
    _say("git=pending_path_dropped reason=not_a_vault_path", dropped, None)
    return result


def message_with_earlier(message: str, plan: Plan) -> str:
    """`message`, plus one line per earlier operation whose files this commit makes up."""
    if not plan.earlier:
        return message
    lines = list(plan.earlier)
    shown = "".join(f"- {m}\n" for m in lines[:MESSAGES_SHOWN])
    more = len(lines) - MESSAGES_SHOWN
    tail = f"- and {more} more\n" if more > 0 else ""
    return (
        message.rstrip("\n")
        + "\n\nAlso commits what earlier operations saved but could not commit:\n"
        + shown
        + tail
    )


def report(left: list[str], plan: Plan) -> None:
    """Say what was left uncommitted: changed since MemVault wrote it, or unverified."""
    _say(
        "git=pending_path_left reason=not_what_memvault_wrote",
        dict.fromkeys(left),
        "does not hold what MemVault wrote there (edited since, or never written by "
        "MemVault), so it is not committed: left as it is in your working tree and "
        "dropped from MemVault's git journal; commit it yourself if it belongs in the history",
    )
    _say(
        "git=pending_path_left reason=unverified_old_journal_line",
        plan.unverified,
        "is named by a git journal line of an older MemVault, which did not record what it "
        "wrote, so it may hold your edits and is not committed: left as it is and dropped "
        "from the journal; commit it yourself if it is MemVault's",
    )


def _say(event: str, paths: dict[str, None], sentence: str | None) -> None:
    if not paths:
        return
    names = list(paths)
    more = len(names) - SHOWN
    shown = ", ".join(names[:SHOWN]) + (f" and {more} more" if more > 0 else "")
    extra = {}
    if sentence is not None:
        subject = shown if len(names) == 1 else f"{len(names)} files ({shown}), each,"
        extra["plain"] = f"{subject} {sentence}"
    log.warning("%s count=%d paths=%r", event, len(names), names[:SHOWN], extra=extra)


def compact(state_dir: Path, plan: Plan, left: list[str], op: str, message: str) -> None:
    """After a failed commit: rewrite the journal as one line of what the next commit must
    still make up (each path with the newest bytes MemVault wrote there, without the paths
    just left), so its length follows the pending files, not the operations that failed."""
    gone = set(left)
    files: Files = {
        path: next(reversed(versions))
        for path, versions in plan.expected.items()
        if path not in gone and versions
    }
    first = message.split("\n", 1)[0]
    text = f"{first} (and {len(plan.earlier)} earlier operation(s); journal compacted)"
    gitstate.rewrite_pending(
        state_dir, gitstate.pending_line(op, text, files, Owner.me(), final=True)
    )
    log.info("git=journal_compacted lines=%d paths=%d", plan.lines, len(files))


def should_compact(plan: Plan, left: list[str]) -> bool:
    return plan.lines > COMPACT_LINES or bool(left) or bool(plan.unverified)
