"""What MemVault wrote but has not committed yet, and why its last commit failed.

Both live in `.memvault/` (derived state, git-ignored):
- `git-pending.jsonl`: lines appended (and fsynced) before a file is written (its intent:
  the path and the sha256 of the bytes about to be written there, or null before a
  delete) and before the operation's commit is tried, emptied once a commit has them; a
  process killed mid-operation leaves its lines, so the next operation commits those files
  too (a "made-up" commit), each only while it holds exactly those bytes (vault.git.gitplan).
- `git-failure.json`: the last commit failure, kept until a commit succeeds, so a failure
  that persists shows red in `status`, `check` and health instead of only in a log.
Both are only written under the vault's writer lock (vault.files.safewrite.VaultLock).
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from vault.files.audit import utc_stamp
from vault.files.procs import Owner
from vault.files.regular import BINARY
from vault.files.safewrite import atomic_write
from vault.format.findings import Check
from vault.format.jsonin import load_json

log = logging.getLogger(__name__)

PENDING_NAME = "git-pending.jsonl"
FAILURE_NAME = "git-failure.json"
SHOWN_PATHS = 3


# One journal path: the sha256 of the bytes MemVault wrote there, or None: it deleted it.
Files = dict[str, str | None]


@dataclass(frozen=True)
class PendingOp:
    op: str  # one id per operation: its intent lines and its commit line share it
    message: str
    paths: tuple[str, ...]
    owner: Owner | None  # the writer that recorded it
    final: bool = False  # what the operation really wrote: replaces its intent lines
    # What MemVault wrote at each path (vault.git.gitplan commits a path only while it still
    # holds that); None: a line of an older MemVault, which journaled paths alone (unverified).
    files: Files | None = None


def pending_paths(ops: list[PendingOp]) -> list[str]:
    """Every path MemVault may still commit, in journal order: an operation's final line
    when it has one (an intent can name a file it then did not write), else all its
    intents; lines without the content MemVault wrote (an older MemVault's) are not."""
    finals = {op.op for op in ops if op.final}
    kept = (op for op in ops if op.files is not None and (op.final or op.op not in finals))
    return list(dict.fromkeys(p for op in kept for p in op.paths))


@dataclass(frozen=True)
class Failure:
    reason: str
    since: str  # first failure of this run of failures (UTC, ISO 8601)
    last: str
    paths: tuple[str, ...]  # everything still uncommitted

    def summary(self) -> str:
        shown = ", ".join(self.paths[:SHOWN_PATHS])
        more = len(self.paths) - SHOWN_PATHS
        tail = f" and {more} more" if more > 0 else ""
        return (
            f"git: {len(self.paths)} file(s) saved but not committed since {self.since} "
            f"({shown}{tail}): {self.reason}; the next memory operation commits them"
        )


def record_pending(
    state_dir: Path, op: str, message: str, files: Files, *, final: bool = False
) -> None:
    """Append one line in a single write and fsync it, before the files change or commit.

    The line says `files` (path -> sha256 of what is written there, None for a delete) and
    no `paths` key: a MemVault before this one skips such a line rather than committing
    whatever the paths hold."""
    state_dir.mkdir(parents=True, exist_ok=True)
    data = pending_line(op, message, files, Owner.me(), final=final)
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | BINARY
    fd = os.open(state_dir / PENDING_NAME, flags, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def pending_line(op: str, message: str, files: Files, owner: Owner | None, *, final: bool) -> bytes:
    who = asdict(owner) if owner is not None else None
    line = {"op": op, "message": message, "files": files, "owner": who, "final": final}
    return (json.dumps(line, ensure_ascii=False) + "\n").encode("utf-8")


def rewrite_pending(state_dir: Path, data: bytes) -> None:
    """Replace the whole journal in one rename (vault.git.gitplan's compaction)."""
    atomic_write(state_dir / PENDING_NAME, data)


def read_pending(state_dir: Path) -> list[PendingOp]:
    """The recorded operations, oldest first; lines that do not parse are skipped."""
    try:
        text = (state_dir / PENDING_NAME).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    ops: list[PendingOp] = []
    # "\n" only: json.dumps leaves U+2028/U+0085 raw, and splitlines() would cut a path there.
    for number, raw in enumerate(text.split("\n"), start=1):
        op = _parse_op(raw)
        if op is None and raw.strip():
            log.warning("git=pending_line_skipped line=%d file=%s", number, PENDING_NAME)
        elif op is not None:
            ops.append(op)
    return ops


def _parse_op(raw: str) -> PendingOp | None:
    try:
        # jsonin: a line nested thousands deep is a damaged line, not a RecursionError
        # that would stop every later write.
        data = load_json(raw, "a journal line")
        message = data["message"]
        op = str(data.get("op", ""))
        owner = data.get("owner")
        files = _files(data["files"]) if "files" in data else None
        paths = tuple(files) if files is not None else data["paths"]
        if not isinstance(paths, (list, tuple)) or not all(isinstance(p, str) for p in paths):
            return None
        if not isinstance(message, str):
            return None
        who = _owner(owner) if isinstance(owner, dict) else None
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    return PendingOp(op, message, tuple(paths), who, data.get("final") is True, files)


def _files(value: object) -> Files:
    if not isinstance(value, dict):
        raise TypeError("files must map paths to sha256 digests")
    for path, digest in value.items():
        if not isinstance(path, str) or not (digest is None or _is_digest(digest)):
            raise TypeError("files must map paths to sha256 digests")
    return value


def _is_digest(value: object) -> bool:
    return isinstance(value, str) and len(value) == 64 and value.isascii() and value.isalnum()


def _owner(data: dict[str, object]) -> Owner:
    pid, start = data["pid"], data["start"]
    if not isinstance(pid, int) or not isinstance(start, int):
        raise TypeError("pid and start must be integers")
    return Owner(str(data["host"]), str(data["boot"]), pid, start)


def committed(state_dir: Path) -> None:
    """Everything pending is in a commit now: empty the journal, clear the failure."""
    pending = state_dir / PENDING_NAME
    if pending.exists():
        # Truncate rather than unlink: the name stays, so the next append needs no new
        # directory entry to be durable.
        os.truncate(pending, 0)
    (state_dir / FAILURE_NAME).unlink(missing_ok=True)


def record_failure(state_dir: Path, reason: str, paths: list[str]) -> Failure:
    previous = read_failure(state_dir)
    now = utc_stamp()
    since = previous.since if previous else now
    failure = Failure(" ".join(reason.split()), since, now, tuple(paths))
    data = json.dumps(asdict(failure), ensure_ascii=False, indent=2) + "\n"
    atomic_write(state_dir / FAILURE_NAME, data.encode("utf-8"))
    return failure


def read_failure(state_dir: Path) -> Failure | None:
    try:
        text = (state_dir / FAILURE_NAME).read_text(encoding="utf-8")
        data = load_json(text, FAILURE_NAME)
        return Failure(
            str(data["reason"]), str(data["since"]), str(data["last"]), tuple(data["paths"])
        )
    except FileNotFoundError:
        return None
    except (ValueError, KeyError, TypeError):
        # A damaged record still means a commit failed: say so rather than hide it.
        return Failure(f"{FAILURE_NAME} is damaged", "?", "?", ())


def problem(state_dir: Path) -> Check | None:
    """(level, detail) for status/check/health: ERROR for a failure that persists, WARN
    for files a killed writer left uncommitted (made up by the next operation)."""
    failure = read_failure(state_dir)
    if failure is not None:
        shown = ", ".join(failure.paths[:SHOWN_PATHS])
        more = len(failure.paths) - SHOWN_PATHS
        params = {
            "count": len(failure.paths),
            "since": failure.since,
            "paths": shown + (f" (+{more})" if more > 0 else ""),
            "reason": failure.reason,
        }
        return Check("ERROR", failure.summary(), "git_commit_failing", params)
    ops = read_pending(state_dir)
    # Each writer once: a long journal repeats the same few owners (running() reads /proc).
    gone = {who for who in {op.owner for op in ops} if who is not None and not who.running()}
    orphaned = [op for op in ops if op.owner in gone and op.files is not None]
    if orphaned:
        paths = sorted({p for op in orphaned for p in op.paths})
        return Check(
            "WARN",
            f"git: {len(paths)} file(s) written by an interrupted memory operation are not "
            "committed yet: the next memory operation commits them",
            "git_interrupted",
            {"count": len(paths)},
        )
    return None
