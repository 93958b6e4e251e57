"""What the index commands print: JSON shapes (DESIGN.md 7) and short readable text."""

from __future__ import annotations

import sys
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from indexer.locks import LOCK_NAME
from indexer.manifest import Manifest, index_dir
from indexer.ranking import recency_hint
from indexer.search import SearchResult, relevance_fields
from indexer.sync import SyncReport
from vault import filelocks, gitstate
from vault.cli_output import plural
from vault.layout import Layout
from vault.links import link_problem
from vault.model import FormatError
from vault.store import duplicate_problems, read_episode_file
from vault.views import episode_item


def result_item(root: Path, result: SearchResult, explain: bool) -> dict[str, Any]:
    """`search --json` item: {id, score, content, created_at, speaker, tags, importance,
    status, path} read from the file itself (the file is the truth, not the index)."""
    doc = result.doc
    item: dict[str, Any]
    try:
        if doc.kind != "episode":
            raise FileNotFoundError
        item = episode_item(read_episode_file(Layout(root), root / doc.path), result.score)
    except (OSError, FormatError):
        item = {
            "id": doc.episode_id,
            "score": result.score,
            "content": doc.text,
            "created_at": None,
            "speaker": {"id": doc.speaker_id, "name": doc.speaker_name} if doc.speaker_id else None,
            "tags": list(doc.tags),
            "importance": doc.importance,
            "status": doc.status,
            "path": doc.path,
        }
    item["kind"] = doc.kind
    item.update(relevance_fields(result))
    if explain:
        item["explain"] = dict(result.explain)
    return item


def results_text(items: list[dict[str, Any]], explain: bool) -> str:
    if not items:
        return "no matching memories"
    lines = []
    for item in items:
        flat = " ".join(str(item["content"]).split())
        who = item["speaker"]["name"] or item["speaker"]["id"] if item.get("speaker") else ""
        date = (item.get("created_at") or "")[:10]
        # Below the relevance floor: still listed (ranked), but injection would leave it out.
        below = "  [below relevance floor]" if item.get("passed") is False else ""
        lines.append(
            f"{item['score']:.3f}  {item['id']}  {date}  {who + ': ' if who else ''}{flat[:100]}"
            f"{below}"
        )
        if explain:
            parts = item["explain"]
            sources = ", ".join(
                f"{name} rank={s['rank']} raw={_num(s['raw'])} {s['contribution']:+.3f}"
                if s["rank"] is not None
                else f"{name} (not a candidate)"
                for name, s in parts["sources"].items()
            )
            factors = ", ".join(
                f"{k}={_num(parts[k])}"
                for k in ("relevance", "recency", "priority", "confidence", "speaker", "update")
                if k in parts
            )
            hint = recency_hint(parts.get("age_days"))
            lines.append(f"       {sources}")
            lines.append(f"       {factors}{'  (' + hint + ')' if hint else ''}")
            if "absolute" in parts:
                lines.append(f"       {absolute_text(parts['absolute'])}")
    return "\n".join(lines)


def absolute_text(a: dict[str, Any]) -> str:
    """One line for the absolute relevance, the same numbers as `explain.absolute`."""
    verdict = "passed" if a["passed"] else "below floor"
    return (
        f"relevance {a['value']:.3f} = text {_num(a['text'])} (matched {_num(a['matched'])} of "
        f"{_num(a['query_weight'])}) + vector {_num(a['vector'])}; floor {a['floor']:.2f}: "
        f"{verdict} [{a['version']}]"
    )


def _num(value: object) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def progress_bar(done: int, total: int) -> None:
    width = 30
    filled = int(width * done / total)
    sys.stderr.write(f"\rindexing [{'#' * filled}{'.' * (width - filled)}] {done}/{total} files")
    sys.stderr.flush()


def report_json(report: SyncReport) -> dict[str, Any]:
    data = {k: v for k, v in asdict(report).items() if k not in ("errors", "duplicates")}
    data["seconds"] = round(report.seconds, 3)
    # Duplicate ids are problems as in `check`; those files are indexed, not skipped.
    data["problems"] = [p.as_json() for p in [*report.errors, *report.duplicates]]
    data["duplicates"] = len(report.duplicates)
    return data


def report_text(data: dict[str, Any]) -> str:
    lines = [f"{p['path']}:{p['line']}: {p['message']}" for p in data["problems"]]
    lines.append(
        f"{data['files']} files: {data['added']} added, {data['updated']} updated, "
        f"{data['renamed']} renamed, {data['deleted']} deleted, {data['unchanged']} unchanged "
        f"({data['seconds']:.2f}s); {len(data['problems']) - data['duplicates']} file(s) "
        "skipped with problems"
        + (f"; {data['duplicates']} file(s) share an episode id" if data["duplicates"] else "")
    )
    return "\n".join(lines)


def _writer(lock: Path) -> str:
    """Who writes the index right now ("" if nobody): the lock file names its holder.

    A probe, not a writer: it never creates nor writes the file (a read-only vault works)
    and takes the lock only for an instant (vault.filelocks.is_held)."""
    try:
        if not filelocks.is_held(lock):
            return ""
    except OSError as exc:  # a link or FIFO planted there: say so rather than guess
        return f"unknown ({exc})"
    return filelocks.read_holder(lock) or "another process"


def writer_of(root: Path) -> str:
    """Who writes the vault's index now, as the lock file names it ("" if nobody)."""
    return _writer(index_dir(root) / LOCK_NAME)


def status_json(root: Path) -> dict[str, Any]:
    folder = index_dir(root)
    lock = folder / LOCK_NAME
    writer = _writer(lock)
    # Links are never indexed, so the manifest cannot know them: one walk (no reads) finds them.
    layout = Layout(root)
    links = [link_problem(rel).as_json() for rel in layout.find_links()]
    git = gitstate.problem(layout.state_dir)  # a commit failure that persists, in red
    if not (folder / "manifest.sqlite").exists():
        return {
            "vault": str(root),
            "indexed": False,
            "files": 0,
            "chunks": 0,
            "embedding": None,
            "writer": writer,
            "git": {"level": git[0], "detail": git[1]} if git else None,
            "problems": links,
            "hint": "run `memvault reindex` or `memvault watch`",
        }
    manifest = Manifest.for_vault(root)
    try:
        entries = manifest.entries()
        problems = manifest.errors() + duplicate_problems(manifest.shared_episode_ids())
        identity = manifest.embedding_identity
    finally:
        manifest.close()
    return {
        "vault": str(root),
        "indexed": True,
        "files": len(entries),
        "chunks": sum(len(e.chunk_ids) for e in entries.values()),
        "embedding": identity,
        "writer": writer,
        "git": {"level": git[0], "detail": git[1]} if git else None,
        "problems": [p.as_json() for p in problems] + links,
    }


def status_text(data: dict[str, Any]) -> str:
    git = [f"{data['git']['level']}: {data['git']['detail']}"] if data.get("git") else []
    lines = [f"{p['path']}:{p['line']}: {p['message']}" for p in data["problems"]]
    if not data["indexed"]:
        return "\n".join([*lines, *git, f"{data['vault']}: not indexed yet; {data['hint']}"])
    lines.append(
        f"{data['vault']}: {plural(data['files'], 'memory file')}, {data['chunks']} chunks "
        f"indexed; embedding {data['embedding']}; {len(data['problems'])} file(s) with problems"
    )
    if data["writer"]:
        lines.append(f"index writer now: {writer_text(data['writer'])}")
    lines.extend(git)
    return "\n".join(lines)


def writer_text(holder: str, now: datetime | None = None) -> str:
    """The lock file's `pid=.. host=.. cmd=.. since=..` (vault.filelocks.holder_text; older
    MemVault wrote `since=<epoch>`) as a person reads it: `memvault, pid 12 on box, since
    2026-03-14 09:30 UTC (5 min ago)`. Text that is not in that form is shown as it is."""
    fields = dict(part.split("=", 1) for part in holder.split() if "=" in part)
    if "pid" not in fields:
        return holder
    where = f" on {fields['host']}" if fields.get("host") else ""
    text = f"{fields.get('cmd') or 'a process'}, pid {fields['pid']}{where}"
    since = _moment(fields.get("since", ""))
    if since is not None:
        ago = ((now or datetime.now(UTC)) - since).total_seconds()
        text += f", since {since:%Y-%m-%d %H:%M} UTC ({_ago(ago)})"
    return text


def _moment(raw: str) -> datetime | None:
    if raw.isdigit():
        return datetime.fromtimestamp(int(raw), UTC)
    try:
        moment = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)


def _ago(seconds: float) -> str:
    if seconds < 60:
        return "just now"
    for size, unit in ((86400, "day"), (3600, "h"), (60, "min")):
        if seconds >= size:
            count = int(seconds // size)
            return f"{count} {unit}{'s' if unit == 'day' and count > 1 else ''} ago"
    return "just now"
