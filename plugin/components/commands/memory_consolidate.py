"""`!memory consolidate preview` / `!memory consolidate run`: fold this chat's old, duplicate,
superseded or unimportant memories into one summary, after a person saw what will change.

`preview` asks the host model (the `candidates_model` setting) through
indexer.jobs.consolidate.preview and changes nothing; the preview is kept for this chat (in this
plugin process). `run` applies exactly that last preview (indexer.jobs.consolidate.run: one git
commit, one audit line per change), or refuses when there is none or the chat's memories
changed since (then: preview again). Thresholds are the `consolidation_*` settings; profile
updates the model suggests are applied only with `consolidation_apply_profile_updates`.
Nothing here runs in the background.
"""

from __future__ import annotations

from indexer.jobs.consolidate import StalePreviewError, preview, run
from indexer.jobs.consolidate_preview import Preview
from indexer.jobs.consolidate_text import PreviewWords, preview_lines
from indexer.jobs.llm import LLMError

from .memory_call import Call, Reply
from .memory_views import day, one_line
from .memory_views import preview as cut

USAGE = "Usage: !memory consolidate preview | !memory consolidate run"
AGAIN = "Run !memory consolidate preview, check it, then !memory consolidate run."


def consolidate(call: Call) -> str:
    action = call.params[0].lower() if len(call.params) == 1 else ""
    if action == "preview":
        return _preview(call)
    if action == "run":
        return _run(call)
    raise Reply(USAGE)


def _preview(call: Call) -> str:
    llm = call.memory.llm
    if llm is None:
        raise Reply(
            "[Memory] Consolidation asks a model: choose one in the plugin setting "
            "candidates_model, then preview again.",
            "no_model",
        )
    previews = call.memory.previews
    try:
        made = preview(
            llm, call.v, call.e, call.scope, call.memory.settings.consolidation, timeout=llm.timeout
        )
    except LLMError as exc:
        previews.pop(call.scope, None)  # what was shown before is no longer the last preview
        raise Reply(f"[Memory] {one_line(str(exc))}", "llm_failed") from None
    if made.summary is None:
        previews.pop(call.scope, None)
        s = made.settings
        return (
            f"[Memory] Nothing to consolidate in this chat: fewer than {s.min_episodes} memories "
            f"are older than {s.older_than_days} days, of importance <= {s.max_importance}, "
            "superseded, expired or near-duplicates. Nothing was changed."
        )
    previews[call.scope] = made
    return preview_text(made)


def _run(call: Call) -> str:
    approved = call.memory.previews.pop(call.scope, None)  # taken: never applied twice
    if approved is None:
        raise Reply(f"[Memory] No consolidation preview was shown in this chat. {AGAIN}", "usage")
    try:
        done = run(call.v, call.e, approved, source="user", digest=approved.digest)
    except StalePreviewError as exc:
        raise Reply(f"[Memory] {one_line(str(exc))}. {AGAIN}", "stale") from None
    except Exception:
        call.memory.previews.setdefault(call.scope, approved)  # busy vault etc.: retry it
        raise
    lines = [
        f"[Memory] Consolidated {len(done.archived)} memories into {done.summary.id} "
        f"({done.rel}); archived: {', '.join(done.archived)}."
    ]
    if done.duplicate is not None:  # no new summary: the chat already remembered it
        lines.append(f"The summary is already remembered as {done.summary.id}: no new memory.")
    lines.extend(f"Profile: {e.describe()}" for e in done.profile_edits)
    if call.v.git:
        lines.append("One git commit: `git revert` of it undoes this consolidation.")
    return "\n".join(lines)


WORDS = PreviewWords(
    head="[Memory] Consolidation preview (model {model}); nothing was changed.",
    archive="Archive {n} memories (status archived, linked to the summary):",
    pick="  [{id}] {day} (imp:{importance}, {status}) {why}",
    summary=(
        "Summary (a new memory, source consolidation, dated {day}, importance {importance}{tags}):"
    ),
    profile="Profile changes ({state}):",
    applied="applied by run",
    not_applied="NOT applied: the setting consolidation_apply_profile_updates is off",
    dropped="Dropped: {what}",
    skipped="Skipped {rel}: {why}",
    left_over="{n} more qualify: a later run takes them.",
    day=day,
    clip=cut,
    note_chars=120,
    blank_summary_lines=False,
)


def preview_text(p: Preview) -> str:
    lines = preview_lines(p, WORDS)
    lines.append("!memory consolidate run applies exactly this preview.")
    return "\n".join(lines)
