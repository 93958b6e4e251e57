"""`memvault verify`, `stats`, and `delete` / `archive` of one memory or, with filters, of
every memory of the chat they pick: a preview first, `--yes` to apply (vault.writes.bulk)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from vault.cli import common as vault_cli
from vault.cli import output as out
from vault.cli import parser as p
from vault.cli.help import ABOUT
from vault.cli.status import status_command
from vault.errors import FOUND_PROBLEMS
from vault.format.model import STATUSES
from vault.health.stats import scope_stats, stats_lines
from vault.layout.chats import require_chat
from vault.layout.store import VaultReader
from vault.layout.views import episode_item
from vault.writes.bulk import (
    FILTERS,
    BulkPlan,
    BulkResult,
    apply_bulk,
    parse_selection,
    preview_bulk,
)
from vault.writes.episode_edit import edit_episode
from vault.writes.transaction import now_utc

PREVIEW_ITEMS = 10


def bulk_args(parser: argparse.ArgumentParser, parents: p.Parents) -> None:
    p.add_scope(parser, speaker=True, speaker_help="only memories of this sender id")
    parser.add_argument("id", nargs="?", default=None, help="one episode id (or use filters)")
    parser.add_argument("--tag", default=None, metavar="T", help="only memories with this tag")
    parser.add_argument(
        "--before", default=None, metavar="DATE", help="created before, e.g. 2026-03-14 or 30d"
    )
    parser.add_argument("--status", choices=STATUSES, default=None, help="only this status")
    parser.add_argument(
        "--yes", action="store_true", help="apply it (without: only show what would change)"
    )


def stats_args(parser: argparse.ArgumentParser, parents: p.Parents) -> None:
    p.add_scope(parser)


def _filtered(args: argparse.Namespace) -> bool:
    return any(getattr(args, n) is not None for n in ("speaker", "tag", "before", "status"))


def _run(action: str) -> p.Handler:
    single = status_command("forget" if action == "delete" else "archive")

    def run(args: argparse.Namespace) -> int:
        if args.id is not None:
            if _filtered(args) or args.yes:
                raise vault_cli.UsageError(f"give one episode id or filters ({FILTERS}), not both")
            return single(args)
        if not _filtered(args):
            raise vault_cli.UsageError(
                f"say which memories to {action}: one episode id, or {FILTERS}"
            )
        return _bulk(args, action)

    return run


def _bulk(args: argparse.Namespace, action: str) -> int:
    vault = vault_cli.open_vault(args)
    scope = vault_cli.scope_of(args)
    selection = parse_selection(
        speaker=args.speaker, tag=args.tag, before=args.before, status=args.status,
        now=vault.clock(),
    )  # fmt: skip
    if not args.yes:
        plan = preview_bulk(vault, scope, action, selection)
        if not plan.matches:
            require_chat(vault.layout, scope)  # a mistyped chat is not "nothing matches"
        return out.emit(args, _preview_json(plan), lambda _: _preview_text(plan))
    result = apply_bulk(vault, scope, action, selection, source="user")
    if not result.plan.matches:
        require_chat(vault.layout, scope)
    code = out.emit(args, _result_json(result), lambda _: _result_text(result))
    if result.stopped:
        print(f"memvault: error: {result.stopped}", file=sys.stderr)
        return FOUND_PROBLEMS
    return code


def _memories(count: int) -> str:
    return f"{count} {'memory' if count == 1 else 'memories'}"


def _preview_json(plan: BulkPlan) -> dict[str, Any]:
    return {
        "action": plan.action,
        "applied": False,
        "filters": plan.selection.as_json(),
        "count": len(plan.matches),
        "items": [episode_item(s) for s in plan.matches[:PREVIEW_ITEMS]],
        "refused": [{"path": rel, "why": why} for rel, why in plan.refused],
    }


def _refused_lines(plan: BulkPlan) -> list[str]:
    """Matched files a bulk archive leaves alone (a secret in them would be committed)."""
    if not plan.refused:
        return []
    head = f"{_memories(len(plan.refused))} left as they are (the others are {plan.action}d):"
    return [head, *(f"  {why}" for _, why in plan.refused)]


def _preview_text(plan: BulkPlan) -> str:
    what = plan.selection.describe()
    if not plan.matches:
        return "\n".join([f"no memories to {plan.action} ({what})", *_refused_lines(plan)])
    shown = plan.matches[:PREVIEW_ITEMS]
    n = len(plan.matches)
    head = f"{_memories(n)} {'matches' if n == 1 else 'match'} ({what}); nothing was changed"
    lines = [head + (f". The first {len(shown)}:" if len(shown) < len(plan.matches) else ":")]
    lines += [out.episode_line(s) for s in shown]
    lines += _refused_lines(plan)
    lines.append(f"run the same command with --yes to {plan.action} them")
    return "\n".join(lines)


def _result_json(result: BulkResult) -> dict[str, Any]:
    return {
        "action": result.plan.action,
        "applied": True,
        "filters": result.plan.selection.as_json(),
        "count": len(result.done),
        "ids": [ep.id for ep in result.done],
        "kept": result.kept,
        "kept_outside_git": list(result.aside),
        "refused": [{"path": rel, "why": why} for rel, why in result.plan.refused],
        "stopped": result.stopped,
    }


def _result_text(result: BulkResult) -> str:
    verb = "deleted" if result.plan.action == "delete" else "archived"
    what = result.plan.selection.describe()
    text = f"{verb} {_memories(len(result.done))} ({what}) in one commit"
    if result.kept:
        text += (
            f"; files with changes git did not hold yet were committed first: `git show "
            f"{result.kept[:12]}` shows them"
        )
    if result.aside:
        text += (
            f"; {len(result.aside)} held what looks like a secret, so they were not committed: "
            f"copies are kept outside git in {', '.join(result.aside)} (only you can read them; "
            "delete them when done)"
        )
    return "\n".join([text, *_refused_lines(result.plan)])


def cmd_verify(args: argparse.Namespace) -> int:
    """The console's verify (vault.writes.episode_edit), by id; an id two files state is refused."""
    vault = vault_cli.open_vault(args)
    scope = vault_cli.scope_of(args)
    with vault_cli.episode_lookup(args, vault, scope):
        before = vault.find_episode(scope, args.id)
    changed = not before.episode.verified
    if changed:
        edit_episode(
            vault, scope, before.episode.id, expected_hash=before.sha, verified=True,
            source="user",
        )  # fmt: skip
    data = {"id": before.episode.id, "verified": True, "changed": changed}
    return out.emit(args, data, lambda d: out.state_text(d["id"], "verified", changed))


def cmd_stats(args: argparse.Namespace) -> int:
    reader = VaultReader(vault_cli.resolve_vault(args))
    scope = vault_cli.scope_of(args)
    data = scope_stats(reader, scope, now_utc())
    if not data["episodes"] and not data["profiles"] and not data["problems"]:
        require_chat(reader.layout, scope)
    return out.emit(args, data, lambda d: "\n".join(stats_lines(d)))


def specs() -> tuple[p.CommandSpec, ...]:
    def Spec(name: str, text: str, *rest: Any, **kw: Any) -> p.CommandSpec:
        return p.CommandSpec(name, text, *rest, description=ABOUT[name], **kw)

    return (
        Spec("verify", "mark a memory as confirmed by a person", cmd_verify, p.id_args, True),
        Spec(
            "delete",
            "delete one memory, or preview/--yes every memory that --speaker/--tag/--before/"
            "--status pick",
            _run("delete"),
            bulk_args,
            commits=True,
        ),
        Spec(
            "archive",
            "archive one memory (hidden from recall, file kept), or preview/--yes every "
            "memory the filters pick",
            _run("archive"),
            bulk_args,
            commits=True,
        ),
        Spec(
            "stats",
            "counts by status, category, priority, verified, speaker",
            cmd_stats,
            stats_args,
        ),
    )
