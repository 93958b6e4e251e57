"""What the index commands print: JSON shapes (DESIGN.md 7) and short readable text."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from indexer.backends.locks import LOCK_NAME
from indexer.retrieval.ranking import FACTORS, recency_hint
from indexer.retrieval.search import SearchResult, relevance_fields
from indexer.retrieval.verdict import gate_words, verdict_words
from indexer.sync.manifest import index_dir
from indexer.sync.report import SyncReport
from vault.cli.output import plural
from vault.files import filelocks
from vault.format.model import FormatError
from vault.layout.index_setting import read_index
from vault.layout.layout import Layout
from vault.layout.store import read_episode_file
from vault.layout.views import episode_item

if TYPE_CHECKING:
    from indexer.status import DiskStatus


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


# The --explain lines under a result.
INDENT = " " * 6


def results_text(items: list[dict[str, Any]], explain: bool) -> str:
    """One line per result: `score S` (the ranking number, can exceed 1), id, date, speaker,
    text, and the relevance verdict; `explain` adds how the score and the relevance came to
    be. The relevance printed is the unrounded one of `explain.absolute` when the item has it
    (3 decimals, as `!memory search` and the console show it), else the item's `relevance`."""
    if not items:
        return "no matching memories"
    lines = []
    # --explain opens with the search's verdict (the gate's decision, the floor that applied)
    # in the words every surface shows; each result line carries its own verdict anyway.
    head = verdict_words([item["explain"] for item in items if item.get("explain")])
    if explain and head:
        lines.append(head)
    for item in items:
        flat = " ".join(str(item["content"]).split())
        who = item["speaker"]["name"] or item["speaker"]["id"] if item.get("speaker") else ""
        date = (item.get("created_at") or "")[:10]
        parts = item.get("explain") or {}
        lines.append(
            f"score {item['score']:.3f}  {item['id']}  {date}  {who + ': ' if who else ''}"
            f"{flat[:100]}{_verdict(item, parts.get('absolute'))}"
        )
        if explain and parts:
            sources = ", ".join(
                f"{name} rank={s['rank']} raw={_num(s['raw'])} {s['contribution']:+.3f}"
                if s["rank"] is not None
                else f"{name} (not a candidate)"
                for name, s in parts["sources"].items()
            )
            lines.append(f"{INDENT}fusion of {sources or 'nothing: found by its id'}")
            lines.append(f"{INDENT}{_score_text(item['score'], parts)}")
            if "absolute" in parts:
                lines.append(f"{INDENT}{absolute_text(parts['absolute'])}")
    return "\n".join(lines)


def _score_text(score: float, parts: dict[str, Any]) -> str:
    """`score 0.322 = fusion=0.248 x priority=1.200 x update=1.080  (other factors 1; fresh)`:
    the ranking number as the product indexer.retrieval.ranking.score makes of it."""
    # The explain key "relevance" is fusion's rank value (JSON contract): shown as fusion,
    # so "relevance" on screen is only ever the absolute one.
    shown = [f"fusion={_num(parts['relevance'])}"] if "relevance" in parts else []
    # A factor that prints as 1.000 (recency a minute after saving) multiplies nothing seen.
    neutral = {k for k in FACTORS if k in parts and _num(parts[k]) in ("1", "1.000")}
    shown += [f"{k}={_num(parts[k])}" for k in FACTORS if k in parts and k not in neutral]
    notes = ["other factors 1"] if neutral else []
    notes += [hint] if (hint := recency_hint(parts.get("age_days"))) else []
    if "exact" in parts:
        notes.append(f"the query is its {parts['exact']['match']}: listed first")
    product = f" = {' x '.join(shown)}" if shown else ""
    return f"score {score:.3f}{product}" + (f"  ({'; '.join(notes)})" if notes else "")


def _verdict(item: dict[str, Any], absolute: dict[str, Any] | None) -> str:
    """`  [relevance 0.090 < floor 0.44: would not be injected]`: what the floor means for
    this result ("" when the search had no relevance to judge by)."""
    if absolute is not None and absolute.get("gated"):
        return f"  [{gate_words(item.get('explain', {}).get('gate'))}: would not be injected]"
    if absolute is not None:
        value, floor, passed = absolute["value"], absolute["floor"], absolute["passed"]
    elif "relevance" in item:  # no explain: the floor it was judged by is not in the item
        value, floor, passed = item["relevance"], None, item["passed"]
    else:
        return ""
    if passed and absolute is not None and absolute.get("follows"):
        return f"  [relevance {value:.3f}: runner-up of one above the floor, would be injected]"
    if passed:
        return f"  [relevance {value:.3f}: would be injected]"
    below = "below the floor" if floor is None else f"< floor {floor:.2f}"
    return f"  [relevance {value:.3f} {below}: would not be injected]"


def absolute_text(a: dict[str, Any]) -> str:
    """One line for the absolute relevance, the same numbers as `explain.absolute`."""
    verdict = "passed, would be injected" if a["passed"] else "below, would not be injected"
    if a.get("gated"):
        verdict = "the gate skipped this message, would not be injected"
    elif a.get("follows"):
        verdict = "runner-up of one above the floor, would be injected"
    if a["text"] is None and a["vector"] is None:  # indexer.retrieval.search: an exact id/name/tag
        sides = "(the query is its id, speaker or tag)"
    else:
        text = (
            "text not searched"
            if a["text"] is None
            else f"text {_num(a['text'])} (matched {_num(a['matched'])} of "
            f"{_num(a['query_weight'])})"
        )
        vector = "no vector match" if a["vector"] is None else f"vector {_num(a['vector'])}"
        sides = f"from {text} and {vector}"
    return f"relevance {a['value']:.3f} {sides}; floor {a['floor']:.2f}: {verdict} [{a['version']}]"


def _num(value: object) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _not_a_plain_warning(record: logging.LogRecord) -> bool:
    return not getattr(record, "plain", None)


@contextmanager
def problems_said_in_report() -> Iterator[None]:
    """While a command prints a sync's problems in its own report (`reindex`, `watch`), the
    plain warning sync logs for each file it skips (indexer.sync.documents) would say each
    twice."""
    parse_log = logging.getLogger("indexer.sync.documents")
    parse_log.addFilter(_not_a_plain_warning)
    try:
        yield
    finally:
        parse_log.removeFilter(_not_a_plain_warning)


def progress_bar(done: int, total: int) -> None:
    width = 30
    filled = int(width * done / total)
    sys.stderr.write(f"\rindexing [{'#' * filled}{'.' * (width - filled)}] {done}/{total} files")
    sys.stderr.flush()


def report_json(report: SyncReport) -> dict[str, Any]:
    # deferred/unhealed: only a bounded catch-up (indexer.cli.catch_up) leaves any, and says so.
    skip = ("errors", "duplicates", "paths", "deferred", "unhealed")
    data = {k: v for k, v in asdict(report).items() if k not in skip}
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
    and takes the lock only for an instant (vault.files.filelocks.is_held)."""
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
    """The files as they are now (count, problems: as `check` finds them), the index as last
    synced (chunks, embedding) and how far it is behind the files (`pending`). Read-only."""
    writer = writer_of(root)
    # Here, not at the top: a search prints through this module, and indexer.status loads
    # every parser (yaml, redaction) and vault.git dulwich's state (issue 23 item 4).
    from indexer.status import disk_status
    from vault.git import gitstate, syncstate

    git = gitstate.problem(Layout(root).state_dir)  # a commit failure that persists, in red
    truth = disk_status(root)
    backend = read_index(root)  # what the engine opens (indexer.engine, milvus_open)
    data: dict[str, Any] = {
        "vault": str(root),
        "vectors": {"backend": backend.kind, "uri": backend.shown, "from": backend.source},
        "indexed": truth.indexed,
        "files": truth.files,  # on disk now
        "chunks": truth.chunks,
        "embedding": truth.embedding,
        "writer": writer,
        "git": {"level": git[0], "detail": git[1]} if git else None,
        "sync": syncstate.problems(root),  # conflicts kept twice, a failing sync
        "problems": [p.as_json() for p in truth.problems],
        "indexed_files": truth.indexed_files,  # in the index, as last synced
        "pending": truth.pending.as_json(),
        "up_to_date": truth.indexed and not truth.pending.total,
    }
    hint = _index_hint(truth, writer)
    if hint:
        data["hint"] = hint
    return data


def _index_hint(truth: DiskStatus, writer: str) -> str:
    """What brings the index up to the files ("" when it is)."""
    if writer and (truth.pending.total or not truth.indexed):
        return "the index writer now running indexes them as it sees them (about a second)"
    if not truth.indexed:
        why = f" ({truth.unreadable})" if truth.unreadable else ""
        return f"run `memvault reindex` or `memvault watch`{why}"
    if truth.pending.total:
        return "run `memvault reindex --keep`, or keep `memvault watch` running"
    return ""


def status_text(data: dict[str, Any]) -> str:
    git = [f"{data['git']['level']}: {data['git']['detail']}"] if data.get("git") else []
    lines = [f"{p['path']}:{p['line']}: {p['message']}" for p in data["problems"]]
    lines.append(
        f"{data['vault']}: {plural(data['files'], 'memory file')}, "
        f"{len(data['problems'])} file(s) with problems"
    )
    pending = data["pending"]
    if not data["indexed"]:
        lines.append(f"index: not indexed yet; {data['hint']}")
    else:
        index = (
            f"index: {data['chunks']} chunks from {plural(data['indexed_files'], 'file')}, "
            f"embedding {data['embedding']}; "
        )
        if pending["total"]:
            counts = ", ".join(
                f"{pending[k]} {k}"
                for k in ("added", "updated", "renamed", "deleted")
                if pending[k]
            )
            index += f"{pending['total']} change(s) not indexed yet ({counts}): {data['hint']}"
        else:
            index += "up to date with the files"
        lines.append(index)
    vectors = data["vectors"]
    lines.append(f"vector index: {vectors['uri']} (from {vectors['from']})")
    if data["writer"]:
        lines.append(f"index writer now: {writer_text(data['writer'])}")
    lines.extend(git)
    lines.extend(data.get("sync") or [])
    return "\n".join(lines)


def writer_text(holder: str, now: datetime | None = None) -> str:
    """The lock file's `pid=.. host=.. cmd=.. since=..` (vault.files.filelocks.holder_text; older
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
