"""The per-session audit log: one JSON line per memory operation, append-only."""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from vault.files.regular import open_regular, read_regular
from vault.format.jsonin import load_json

SUMMARY_MAX = 240


@dataclass(frozen=True)
class AuditEntry:
    audit_id: str
    operation: str
    target_type: str
    target_id: str
    summary: str
    timestamp: str
    source: str
    query_id: int | str | None = None


def utc_stamp(now: datetime | None = None) -> str:
    return (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def preview(text: str, limit: int = SUMMARY_MAX) -> str:
    """One line, at most `limit` characters, with an ellipsis when cut."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def make_entry(
    operation: str,
    target_type: str,
    target_id: str,
    summary: str,
    *,
    source: str,
    query_id: int | str | None = None,
    now: datetime | None = None,
) -> AuditEntry:
    stamp = now or datetime.now(UTC)
    return AuditEntry(
        audit_id=f"au_{stamp:%Y%m%d%H%M%S}_{secrets.token_hex(3)}",
        operation=operation,
        target_type=target_type,
        target_id=target_id,
        summary=preview(summary),
        timestamp=utc_stamp(stamp),
        source=source,
        query_id=query_id,
    )


def line(entry: AuditEntry) -> bytes:
    """The bytes `append` adds for `entry` (the git journal records what the file will hold)."""
    return (json.dumps(asdict(entry), ensure_ascii=False) + "\n").encode("utf-8")


def append(path: Path, entry: AuditEntry) -> None:
    """Append one line in a single write() so concurrent writers never interleave a line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # Never through a link, never blocking on a FIFO planted as audit.jsonl (vault.files.regular).
    fd = open_regular(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        os.write(fd, line(entry))
        os.fsync(fd)
    finally:
        os.close(fd)


def read(path: Path) -> tuple[list[AuditEntry], list[tuple[int, str]]]:
    """Entries oldest first, plus (line, problem) for lines that are not valid entries."""
    entries: list[AuditEntry] = []
    problems: list[tuple[int, str]] = []
    if not path.exists():
        return entries, problems
    text = read_regular(path).decode("utf-8-sig", errors="replace")
    # Lines end in "\n" only: splitlines() would also cut at \x85 or U+2028, which JSON
    # leaves unescaped inside a string (a session or summary holding one).
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            data = load_json(raw, "the line")
            entries.append(AuditEntry(**data))
        except (ValueError, TypeError) as exc:  # not JSON, past vault.format.jsonin's limits
            problems.append((number, f"not an audit entry ({exc}): fix or remove this line"))
    return entries, problems
