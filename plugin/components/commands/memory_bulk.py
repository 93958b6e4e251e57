"""`!memory verify`, `stats`, and the scoped bulk `delete` / `archive` with a preview.

`!memory delete --speaker u1 --tag travel` only shows how many memories of this chat match
and the first few (nothing is written); the same command with `--yes` applies it in one
commit with one audit line per memory (vault.writes.bulk). `delete <id>` and `archive <id>` stay
the one-memory commands. Every filter runs inside this chat's own scope.
"""

from __future__ import annotations

from vault.health.stats import scope_stats, stats_lines
from vault.writes.bulk import FILTERS, BulkPlan, apply_bulk, parse_selection, preview_bulk
from vault.writes.episode_edit import edit_episode

from . import memory_actions as act
from .memory_call import Call, Reply, find, one_id
from .memory_views import echo, list_line

PREVIEW_ITEMS = 5
_FLAGS = {"--speaker": "speaker", "--tag": "tag", "--before": "before", "--status": "status"}


def verify(call: Call) -> str:
    """Mark one memory as confirmed by a person: the console's verify, from chat."""
    raw = one_id(call, "Usage: !memory verify <episode_id>")
    before = find(call, raw)
    if before.episode.verified:
        return f"[Memory] Episode {before.episode.id} is already verified: nothing changed."
    after = edit_episode(
        call.v,
        call.scope,
        before.episode.id,
        expected_hash=before.sha,
        verified=True,
        source="user",
        query_id=call.query_id,
    )
    return f"[Memory] Episode {after.episode.id} verified."


def stats(call: Call) -> str:
    if call.params:
        raise Reply("Usage: !memory stats")
    data = scope_stats(call.v, call.scope, call.v.clock())
    return "\n".join([f"[Memory Stats] {call.scope.session_key}", *stats_lines(data)])


def _usage(action: str) -> str:
    return (
        f"Usage: !memory {action} <episode_id> | !memory {action} [--speaker <id>] "
        "[--tag <tag>] [--before <date|30d>] [--status <status>] [--yes]"
    )


def _bulk_args(action: str, params: tuple[str, ...]) -> tuple[dict[str, str], bool]:
    given: dict[str, str] = {}
    yes = False
    i = 0
    while i < len(params):
        word = params[i]
        if word == "--yes":
            yes = True
        elif word in _FLAGS and i + 1 < len(params) and not params[i + 1].startswith("--"):
            if _FLAGS[word] in given:
                raise Reply(f"[Memory] {word} is given twice: keep one.\n{_usage(action)}")
            given[_FLAGS[word]] = params[i + 1]
            i += 1
        else:
            raise Reply(f"[Memory] Unexpected '{echo(word)}'.\n{_usage(action)}")
        i += 1
    return given, yes


def _bulk(call: Call, action: str) -> str:
    given, yes = _bulk_args(action, call.params)
    if not given:
        raise Reply(f"[Memory] Say which memories: give at least one of {FILTERS}.")
    selection = parse_selection(**given, now=call.v.clock())
    what = selection.describe()
    if not yes:
        plan = preview_bulk(call.v, call.scope, action, selection)
        return _preview_text(call, plan)
    result = apply_bulk(
        call.v, call.scope, action, selection, source="user", query_id=call.query_id
    )
    if not result.plan.matches:
        none = f"[Memory] No memories of this chat match ({what}): nothing to {action}."
        return none + _refused(result.plan)
    verb = "Deleted" if action == "delete" else "Archived"
    text = f"[Memory] {verb} {len(result.done)} memories ({what}) in one commit."
    if result.kept:
        text += (
            f" Files with uncommitted changes were committed first ({result.kept[:12]}), so "
            "git can restore them."
        )
    if result.aside:  # they held a secret: kept outside git, never committed
        text += (
            f" {len(result.aside)} held what looks like a secret, so they were not committed: "
            f"copies are kept outside git in {', '.join(result.aside)} (only the vault's "
            "owner can read them)."
        )
    if result.stopped:
        left = len(result.plan.matches) - len(result.done)
        text += f" Stopped before {left} more: {result.stopped}"
    return text + _refused(result.plan)


def _refused(plan: BulkPlan) -> str:
    """Files a bulk archive left alone: archiving would commit a secret
    (vault.git.secret_guard)."""
    if not plan.refused:
        return ""
    return "\n" + "\n".join(f"Left as it is: {why}" for _, why in plan.refused)


def _preview_text(call: Call, plan: BulkPlan) -> str:
    what = plan.selection.describe()
    if not plan.matches:
        none = f"[Memory] No memories of this chat match ({what}): nothing to {plan.action}."
        return none + _refused(plan)
    n = len(plan.matches)
    shown = plan.matches[:PREVIEW_ITEMS]
    lines = [
        f"[Memory] {n} memories of this chat match ({what}). Nothing was changed yet. "
        f"{'First ' + str(len(shown)) if n > len(shown) else 'They are'}:",
        *(list_line(s.episode) for s in shown),
        f"To {plan.action} them, send the same command with --yes: "
        f"!memory {plan.action} {' '.join(call.params)} --yes",
    ]
    return "\n".join(lines) + _refused(plan)


def _flagged(call: Call) -> bool:
    return any(p.startswith("--") for p in call.params)


def delete(call: Call) -> str:
    """`delete <id>` forgets one memory; with filters it is the bulk delete."""
    if _flagged(call):
        return _bulk(call, "delete")
    if len(call.params) != 1:
        raise Reply(_usage("delete"))
    return act.forget(call)


def archive(call: Call) -> str:
    """`archive <id>` archives one memory; with filters it is the bulk archive."""
    if _flagged(call):
        return _bulk(call, "archive")
    return act.archive(call)
