"""`memvault consolidate preview|run`: fold a chat's old memories into one summary.

`preview` asks the LLM (MEMVAULT_LLM_URL / _MODEL / _KEY) and prints what a run would do,
changing nothing; saved with --out (or --json), it is what `run --preview FILE` applies,
exactly, or refuses to apply when the chat changed since.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from indexer.cli.common import open_engine
from indexer.jobs.consolidate import preview, run
from indexer.jobs.consolidate_preview import Preview, from_json
from indexer.jobs.consolidate_select import ConsolidateSettings
from indexer.jobs.consolidate_text import PreviewWords, preview_lines
from indexer.jobs.llm import LLMError, llm_from_env
from vault.cli import common as vault_cli
from vault.cli.output import emit, one_line
from vault.cli.parser import Parents, add_scope
from vault.format.jsonin import load_json

_DURATION = re.compile(r"^\s*(\d+)\s*([dw]?)\s*$")
# flag -> ConsolidateSettings field; None = not given (a run takes the preview's own)
_FLAGS = {
    "older_than": "older_than_days",
    "max_importance": "max_importance",
    "keep_importance": "keep_importance",
    "max_episodes": "max_episodes",
    "superseded": "superseded",
    "duplicates": "duplicates",
    "apply_profile_updates": "apply_profile_updates",
}


def days(text: str) -> int:
    match = _DURATION.match(text)
    if not match:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration: write e.g. 90d or 12w")
    return int(match.group(1)) * (7 if match.group(2) == "w" else 1)


def consolidate_args(con: argparse.ArgumentParser, parents: Parents) -> None:
    """`memvault consolidate` (indexer.cli.commands lists it)."""
    con.add_argument("action", choices=("preview", "run"))
    add_scope(con)
    con.add_argument("--older-than", type=days, default=None, help="age to pick (default 90d)")
    con.add_argument("--max-importance", type=int, default=None, help="pick importance <= N (1)")
    con.add_argument("--keep-importance", type=int, default=None, help="age spares >= N (4)")
    con.add_argument("--max-episodes", type=int, default=None, help="per run (default 40)")
    con.add_argument("--no-superseded", dest="superseded", action="store_const", const=False)
    con.add_argument("--no-duplicates", dest="duplicates", action="store_const", const=False)
    con.add_argument(
        "--apply-profile-updates", action="store_const", const=True, default=None,
        help="also apply the profile updates the model suggests",
    )  # fmt: skip
    con.add_argument("--out", type=Path, default=None, help="preview: save it to this file")
    con.add_argument("--preview", default=None, help="run: the saved preview file (- = stdin)")


def cmd_consolidate(args: argparse.Namespace) -> int:
    given = {field: getattr(args, flag) for flag, field in _FLAGS.items()}
    given = {field: value for field, value in given.items() if value is not None}
    if args.action == "preview":
        return _preview(args, ConsolidateSettings(**given))
    return _run(args, given)


def _preview(args: argparse.Namespace, settings: ConsolidateSettings) -> int:
    if args.preview:
        raise vault_cli.UsageError("--preview FILE is for `consolidate run`")
    try:
        llm = llm_from_env()
    except LLMError as exc:
        raise vault_cli.UsageError(f"consolidate preview asks an LLM: {exc}") from exc

    vault = vault_cli.open_vault(args)
    out = args.out.expanduser().resolve() if args.out else None
    if out is not None and out.is_relative_to(vault.root):
        raise vault_cli.UsageError(
            "--out must be outside the vault: a preview changes nothing in it"
        )
    engine, _writer = open_engine(args)
    with engine:  # no reconcile: selection reads the files, the index is left as it is
        made = preview(llm, vault, engine, vault_cli.scope_of(args), settings, timeout=llm.timeout)
    data = made.as_json()
    if out is not None:
        out.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return emit(args, data, lambda _: preview_text(made, args, out))


def _run(args: argparse.Namespace, given: dict[str, Any]) -> int:
    if not args.preview:
        raise vault_cli.UsageError(
            "consolidate run applies a preview you have read: run `memvault consolidate preview "
            f"{_scope_flags(args)} --out preview.json`, check it, then `memvault consolidate run "
            f"{_scope_flags(args)} --preview preview.json`"
        )
    approved = _load(args.preview)
    scope = vault_cli.scope_of(args)
    if approved.scope != scope:
        raise vault_cli.UsageError(
            f"that preview is for {approved.scope.label()}, not {scope.label()}: pass its "
            "--bot/--session/--isolation, or make a preview for this chat"
        )
    differ = [f for f, v in given.items() if getattr(approved.settings, f) != v]
    if differ:
        raise vault_cli.UsageError(
            f"the preview was made with other settings ({', '.join(differ)}): a run applies it "
            "as it was made; make a new preview with these flags instead"
        )

    vault = vault_cli.open_vault(args)
    engine, writer = open_engine(args)
    with engine:
        if writer:
            engine.attach(vault)  # the summary is searchable, the originals not, on return
        done = run(vault, engine, approved, source="user")
    data = {
        "summary": done.summary.id,
        "path": done.rel,
        "archived": list(done.archived),
        "profile_changes": [e.describe() for e in done.profile_edits],
        "duplicate_of": done.duplicate.as_json() if done.duplicate is not None else None,
    }
    return emit(args, data, lambda d: _run_text(d, git=not getattr(args, "no_git", False)))


def _load(where: str) -> Preview:
    try:
        raw = sys.stdin.read() if where == "-" else Path(where).read_text(encoding="utf-8")
    except OSError as exc:
        raise vault_cli.UsageError(f"cannot read the preview {where}: {exc}") from exc
    try:
        data = load_json(raw, where)
    except json.JSONDecodeError as exc:
        raise vault_cli.UsageError(
            f"{where} is not a saved preview (not JSON, line {exc.lineno}): save one with "
            "`memvault consolidate preview ... --out FILE`"
        ) from exc
    return from_json(data)


def _scope_flags(args: argparse.Namespace) -> str:
    bot = f"--bot {args.bot} " if args.bot else ""
    iso = f" --isolation {args.isolation}" if args.isolation != "session" else ""
    return f"{bot}--session {args.session}{iso}"


WORDS = PreviewWords(
    head="consolidation preview for {scope} (model {model}); nothing changed",
    archive="archive {n} memories (status archived, consolidated_into):",
    pick="  {id}  {day} imp={importance} {status}: {why}",
    summary=(
        "summary (a new memory, source consolidation, dated {day}, importance {importance}{tags}):"
    ),
    profile="profile changes, {state}:",
    applied="applied",
    not_applied="NOT applied (--apply-profile-updates)",
    dropped="dropped: {what}",
    skipped="skipped {rel}: {why}",
    left_over="{n} more qualify: a later run takes them",
    day=lambda at: f"{at:%Y-%m-%d}",
    clip=one_line,
)


def preview_text(p: Preview, args: argparse.Namespace, out: Path | None) -> str:
    if p.summary is None:
        s = p.settings
        return (
            f"nothing to consolidate in {p.scope.label()}: fewer than {s.min_episodes} memories "
            f"are older than {s.older_than_days} days, of importance <= {s.max_importance}, "
            "superseded, expired or near-duplicates"
        )
    lines = preview_lines(p, WORDS)
    lines.append(f"digest {p.digest}")
    target = str(out) if out else "FILE"
    if out is None:
        lines.append("to apply exactly this preview, save it: add --out FILE (or --json > FILE)")
    lines.append(f"apply: memvault consolidate run {_scope_flags(args)} --preview {target}")
    return "\n".join(lines)


def _run_text(d: dict[str, Any], *, git: bool) -> str:
    lines = [f"consolidated {len(d['archived'])} memories into {d['summary']} ({d['path']})"]
    if d.get("duplicate_of"):  # the summary was no new memory: folded into the one it repeats
        lines[0] += f": the summary is already remembered as {d['summary']}, no new one written"
    lines.append(f"archived: {', '.join(d['archived'])}")
    lines.extend(f"profile: {c}" for c in d["profile_changes"])
    if git:
        lines.append("one git commit: `git revert` of it undoes the consolidation")
    return "\n".join(lines)
