"""`!memory audit`, `history`, `export` and `import`: the record of a chat's memory (audit
log, git history) and memory as JSON.

Shapes are LongTermMemory's (notes/upstream.md sections 4-5); vault.transfer.exchange builds a
superset of them and imports both its own and upstream's exports. Exports are audited
like upstream does, so who copied a chat's memory out shows in `!memory audit`.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict
from typing import Any

from vault.files import audit
from vault.format.jsonin import load_json
from vault.format.model import STATUSES
from vault.git.gitlog import file_history
from vault.transfer.exchange import export_scope, import_payload

from .memory_actions import Call, Reply, find, one_id, parse_page, parse_statuses
from .memory_views import PAGE_SIZE, audit_line, history_text

log = logging.getLogger(__name__)


def record(call: Call, operation: str, target_type: str, summary: str) -> None:
    """An audit line for a read-only operation (exports), like upstream writes. The export
    itself is already built: failing to audit it is logged, not shown as a failed export."""
    try:
        with call.v.operation(call.scope, operation, source="user", query_id=call.query_id) as txn:
            txn.record(operation, target_type, call.scope.session_key, summary)
    except Exception as exc:  # noqa: BLE001
        log.warning(
            "memvault=audit_failed op=%s scope=%s error=%r",
            operation,
            call.scope.session_key,
            str(exc),
        )


def audit_log(call: Call) -> str:
    usage = "Usage: !memory audit [page|export]"
    entries, problems = audit.read(call.v.layout.audit_path(call.scope))
    if call.params == ("export",):
        text = _json(
            {
                "version": 1,
                "exported_at": stamp(),
                "scope_key": call.scope.session_key,
                "user_key": call.scope.user_key,
                "entries": [asdict(e) for e in entries],
            }
        )
        record(call, "audit_export", "audit", f"Exported {len(entries)} audit entries")
        return text
    page = parse_page(call.params, usage)
    newest = list(reversed(entries))
    items = newest[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
    if not items:
        return "[Memory] No audit entries found."
    lines = [f"[Memory Audit] page {page}, {len(entries)} total"]
    lines += [audit_line(e) for e in items]
    if problems:
        lines.append(f"({len(problems)} unreadable line(s) in audit.jsonl: see !memory health)")
    return "\n".join(lines)


def stamp() -> str:
    """Upstream's `exported_at`: UTC to the second, `YYYY-MM-DDTHH:MM:SSZ`."""
    return audit.utc_stamp()


def _json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2)


EXPORT_USAGE = (
    "Usage: !memory export [l2] [--include-superseded] [--include-archived] "
    "[--all-statuses] [--status <status>]"
)


def export(call: Call) -> str:
    params = call.params
    if params and params[0].startswith("--"):  # upstream's status flags: only episodes have one
        params = ("l2", *params)
    if not params:
        data = export_scope(call.v, call.scope)
        left_out = _left_out(data, ".yaml")
        if not data["profiles"] and not left_out:
            return "[Memory] No profiles to export."
        n = len(data["profiles"])
        text = _json(
            {"version": data["version"], "exported_at": stamp(), "profiles": data["profiles"]}
            | ({"unreadable": left_out} if left_out else {})
        )
        record(call, "export_profiles", "profile", f"Exported {n} L1 profile entries")
        return text
    if params[0] != "l2":
        raise Reply(EXPORT_USAGE)
    statuses, rest = parse_statuses(params[1:])
    if rest:
        raise Reply(EXPORT_USAGE)
    if len(params) == 1:  # no flags: everything, like upstream
        statuses = sorted(STATUSES)
    data = export_scope(call.v, call.scope)
    episodes = [e for e in data["episodes"] if e["status"] in statuses]
    text = _json(
        {
            "version": data["version"],
            "exported_at": stamp(),
            "scope_key": data["scope_key"],
            "user_key": data["user_key"],
            "isolation": data["isolation"],
            "statuses": statuses,
            "episodes": episodes,
            "count": len(episodes),
        }
        | ({"unreadable": left_out} if (left_out := _left_out(data, ".md")) else {})
    )
    record(call, "export_l2", "episode", f"Exported {len(episodes)} L2 episodes")
    return text


def _left_out(data: dict[str, Any], suffix: str) -> list[dict[str, Any]]:
    """The files of one kind (profiles .yaml, episodes .md) the export could not read: named
    in the JSON (upstream's shape gains the key only then), so the person sees what is
    missing from this copy; a JSON shape, so `!memory import` still takes it as it is."""
    return [u for u in data["unreadable"] if u["file"].endswith(suffix)]


def import_l2(call: Call) -> str:
    if len(call.params) < 2 or call.params[0] != "l2":
        raise Reply("Usage: !memory import l2 <json>")
    # LangBot splits the message on whitespace: join the pieces back (runs of spaces inside
    # JSON strings come back as one space, exactly as upstream's import sees them).
    try:
        payload = load_json(" ".join(call.params[1:]), "the JSON")
    except json.JSONDecodeError as exc:
        raise Reply(f"Invalid JSON: {exc}", "bad_input") from None
    # Any of our exports: `!memory export` (profiles only), `export l2` (episodes only),
    # `memvault export` / the console's (both), and LongTermMemory's of either kind.
    if isinstance(payload, list):
        items = payload
    elif (
        isinstance(payload, dict)
        and isinstance(payload.get("episodes", []), list)
        and ("episodes" in payload or isinstance(payload.get("profiles"), list))
    ):
        items = payload.get("episodes", [])
    else:
        raise Reply("L2 import JSON must be a list or an object with episodes.", "bad_input")
    if not all(isinstance(item, dict) for item in items):
        raise Reply("Each imported episode must be an object.", "bad_input")
    result = import_payload(call.v, call.scope, payload, source="import")
    return import_text(result)


def import_text(result: dict[str, Any]) -> str:
    text = f"[Memory] Imported {result['imported']} L2 episode(s)."
    if result["skipped"]:
        text += f" Skipped {result['skipped']} already in this chat."
    if result["deleted"]:
        text += f" Skipped {result['deleted']} deleted upstream."
    if result["renamed"]:
        text += f" {len(result['renamed'])} got a new id (theirs is used here)."
    if result["profiles"]:
        text += f" Imported {result['profiles']} L1 profile(s)."
    if result["profiles_skipped"]:
        text += (
            f" Kept {result['profiles_skipped']} existing profile(s) as they are (an import "
            "never merges over one: edit it with !memory or the console)."
        )
    if refused := result.get("refused"):  # the rest was imported; these say what to fix
        lines = [f"{r['item']}: {r['reason']}" for r in refused[:5]]
        more = f" (and {len(refused) - 5} more)" if len(refused) > 5 else ""
        text += f" Refused {len(refused)}{more}: " + "; ".join(lines)
    return text


def history(call: Call) -> str:
    stored = find(call, one_id(call, "Usage: !memory history <episode_id>"))
    root = call.v.root
    if not (root / ".git").exists():
        return (
            f"[Memory] No history for {stored.episode.id}: the vault at {root} is not a git "
            "repository (turn on git_autocommit, or run `memvault init` there)."
        )
    commits = file_history(root, stored.rel)
    if not commits:
        return (
            f"[Memory] No commits of {stored.rel} yet (git_autocommit is "
            f"{'on' if call.memory.settings.git_autocommit else 'off'})."
        )
    return history_text(stored.episode.id, stored.rel, commits)
