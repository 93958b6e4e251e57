"""`memvault candidates list|show|accept|reject|purge|extract`: review proposed memories.

`extract` replays a transcript (JSON lines: {"role": "user"|"assistant", "content": ...,
optional "speaker_id", "speaker_name"}) turn by turn against the LLM named by
MEMVAULT_LLM_URL / _MODEL / _KEY and prints what it proposes; with --dry-run nothing is
written. It is also how a person judges extraction quality with a real model.
"""

from __future__ import annotations

import argparse
from datetime import timedelta
from pathlib import Path
from typing import Any

from indexer.cli.common import open_engine
from indexer.cli.consolidate import days
from indexer.jobs.candidates_extract import Turn, extract
from indexer.jobs.llm import LLMError, llm_from_env
from vault.candidates import (
    CANDIDATE_STATUSES,
    Candidate,
    Decision,
    accept_candidate,
    candidate_json,
    candidate_scopes,
    find_candidate,
    list_candidates,
    purge_candidates,
    reject_candidate,
)
from vault.cli import common as vault_cli
from vault.cli.output import emit, one_line
from vault.cli.parser import Parents, add_scope
from vault.format.jsonin import load_json
from vault.format.model import Speaker
from vault.format.yamlio import format_datetime
from vault.layout.chats import require_chat
from vault.layout.keys import ScopeId

RECENT_TURNS = 6


def candidates_args(top: argparse.ArgumentParser, parents: Parents) -> None:
    """`memvault candidates ACTION` (indexer.cli.commands lists it); the actions that write offer
    --no-git, list and show do not."""
    scope = argparse.ArgumentParser(add_help=False)
    add_scope(scope)
    reads, writes = [parents.common, scope], [parents.common, parents.git, scope]
    actions = top.add_subparsers(dest="candidates_action", required=True, metavar="ACTION")
    lst = actions.add_parser("list", parents=reads, help="a chat's candidates")
    lst.add_argument("--status", choices=(*CANDIDATE_STATUSES, "all"), default="pending")
    lst.add_argument("--page", type=int, default=1)
    actions.add_parser("show", parents=reads, help="one candidate").add_argument("id")
    reject = actions.add_parser("reject", parents=writes, help="keep it out of memory")
    reject.add_argument("id")
    acc = actions.add_parser("accept", parents=writes, help="make it a memory")
    acc.add_argument("id")
    acc.add_argument("--text", default=None, help="accept with this text instead")
    acc.add_argument("--value", default=None, help="a profile candidate: with this value")
    purge = actions.add_parser(
        "purge", parents=[parents.common, parents.git], help="delete old decided ones"
    )
    purge.add_argument("--older-than", type=days, required=True, help="e.g. 30d or 4w")
    purge.add_argument("--bot", default=None, help="bot uuid (omit when there is none)")
    purge.add_argument("--session", default=None, help="one chat (default: every chat)")
    ext = actions.add_parser("extract", parents=writes, help="replay a transcript")
    ext.add_argument("--transcript", type=Path, required=True, help="chat.jsonl")
    ext.add_argument("--dry-run", action="store_true", help="print, write nothing")
    ext.add_argument("--max", type=int, default=3, help="candidates per turn (default 3)")
    ext.add_argument("--last", action="store_true", help="only the transcript's last turn")


def cmd_candidates(args: argparse.Namespace) -> int:
    action = args.candidates_action
    if action == "purge":
        return _purge(args)
    if action == "extract":
        return _extract(args)
    vault = vault_cli.open_vault(args)
    scope = vault_cli.scope_of(args)
    if action == "list":
        page = list_candidates(vault, scope, status=args.status, page=args.page)
        if page.total == 0 and not page.problems:  # a mistyped chat is not an empty one
            require_chat(vault.layout, scope)
        data = {
            "total": page.total,
            "page": page.page,
            "pages": page.pages,
            "items": [candidate_json(s.candidate) for s in page.items],
            "problems": [p.as_json() for p in page.problems],
        }
        return emit(args, data, _list_text)
    if action == "show":
        c = find_candidate(vault, scope, args.id).candidate
        return emit(args, candidate_json(c), lambda d: _show_text(c))
    if action == "accept":
        from indexer.cli.remember_dup import checked

        def accept() -> Decision:
            return accept_candidate(vault, scope, args.id, text=args.text, value=args.value)

        done = checked(args, vault, accept)
        data = {**candidate_json(done.candidate), "superseded": list(done.superseded)}
        if done.duplicate is not None:
            data["duplicate_of"] = done.duplicate.as_json()
        return emit(args, data, _decided_text)
    done = reject_candidate(vault, scope, args.id)
    return emit(args, candidate_json(done.candidate), _decided_text)


def _purge(args: argparse.Namespace) -> int:
    vault = vault_cli.open_vault(args)
    if args.session is None and args.bot is not None:
        raise vault_cli.UsageError("--bot needs --session (or neither: every chat)")
    # Candidates live in the chat's own folder whatever the isolation: bot + session is all.
    scopes = [ScopeId(args.bot, args.session)] if args.session else candidate_scopes(vault)
    age = timedelta(days=args.older_than)
    purged = {s.label(): ids for s in scopes if (ids := purge_candidates(vault, s, age))}
    total = sum(len(ids) for ids in purged.values())
    text = f"purged {total} decided candidate(s) older than {args.older_than} days"
    return emit(args, {"purged": purged}, lambda _: text)


def read_transcript(path: Path) -> list[Turn]:
    """The transcript's messages; UsageError naming the line that is not one."""
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except OSError as exc:
        raise vault_cli.UsageError(f"cannot read the transcript {path}: {exc}") from exc
    turns = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = load_json(line, f"{path}:{number}")
            role, content = item["role"], item["content"]
            if role not in ("user", "assistant") or not isinstance(content, str):
                raise ValueError
            sid, name = str(item.get("speaker_id") or ""), str(item.get("speaker_name") or "")
        except (ValueError, KeyError, TypeError):
            raise vault_cli.UsageError(
                f"{path}:{number}: not a message: each line is a JSON object like "
                '{"role": "user", "content": "...", "speaker_id": "u1", "speaker_name": "Ann"}'
            ) from None
        turns.append(Turn(role, content, sid, name))
    return turns


def _extract(args: argparse.Namespace) -> int:
    if not 1 <= args.max <= 10:
        raise vault_cli.UsageError("--max must be from 1 to 10")
    turns = read_transcript(args.transcript)
    replies = [
        i
        for i, t in enumerate(turns)
        if t.role == "assistant" and i and turns[i - 1].role == "user"
    ]
    if not replies:
        raise vault_cli.UsageError(f"{args.transcript} has no user message followed by a reply")
    try:
        llm = llm_from_env()
    except LLMError as exc:
        raise vault_cli.UsageError(f"candidates extract asks an LLM: {exc}") from exc
    from indexer.cli.catch_up import catch_up

    vault = vault_cli.open_vault(args)
    scope = vault_cli.scope_of(args)
    engine, writer = open_engine(args)
    results = []
    with engine:
        if writer:  # the duplicate check searches the index: catch up, bounded (catch_up)
            catch_up(engine)
        for number, i in enumerate(replies[-1:] if args.last else replies, start=1):
            user = turns[i - 1]
            speaker = (
                Speaker(user.speaker_id, user.speaker_name or None) if user.speaker_id else None
            )
            found = extract(
                llm,
                vault,
                engine,
                scope,
                speaker,
                user.content,
                turns[i].content,
                turns[max(0, i - 1 - RECENT_TURNS) : i - 1],
                args.max,
                llm.model,
                timeout=llm.timeout,
                dry_run=args.dry_run,
            )
            results.append(
                {
                    "turn": len(replies) if args.last else number,
                    "user": user.content,
                    "candidates": [candidate_json(c) for c in found],
                }
            )
    data = {"dry_run": args.dry_run, "model": llm.model, "turns": results}
    return emit(args, data, _extract_text)


def _what(d: dict[str, Any]) -> str:
    if d["kind"] == "profile":
        slot = f" {d['key']}" if d["key"] else ""
        was = f" (was {d['previous']})" if d["previous"] else ""
        return f"profile {d['profile']} {d['field']}{slot} = {one_line(d['value'], 60)}{was}"
    fix = f" corrects {d['supersedes']}" if d["supersedes"] else ""
    return f"episode imp={d['importance']}{fix}: {one_line(d['text'])}"


def _line(d: dict[str, Any]) -> str:
    who = f" {d['speaker']['name'] or d['speaker']['id']}:" if d["speaker"] else ""
    secret = f" [redacted: {', '.join(d['redacted'])}]" if d["redacted"] else ""
    ident = d["id"] or "(not saved)"
    return f"{ident}  {d['created_at'][:10]}  {d['status']}{who} {_what(d)}{secret}"


def _list_text(data: dict[str, Any]) -> str:
    lines = [_line(d) for d in data["items"]] or ["no candidates here"]
    lines.append(f"-- page {data['page']} of {data['pages']}, {data['total']} in total")
    lines.extend(f"problem: {p['path']}:{p['line']}: {p['message']}" for p in data["problems"])
    return "\n".join(lines)


def _show_text(c: Candidate) -> str:
    d = candidate_json(c)
    lines = [_line(d), c.body]
    if c.evidence is not None:
        at = f" ({format_datetime(c.evidence.at)})" if c.evidence.at else ""
        lines.append(f"evidence{at}: {c.evidence.text}")
    if c.proposed_by:
        lines.append(f"proposed by {c.proposed_by}")
    return "\n".join(lines)


def _decided_text(d: dict[str, Any]) -> str:
    if d["status"] == "rejected":
        return f"{d['id']} rejected (kept until `memvault candidates purge`)"
    gone = [f"superseded {old}" for old in d.get("superseded", ())]
    if dup := d.get("duplicate_of"):
        return f"{d['id']} accepted: already remembered as {dup['id']}, nothing new was stored"
    return "\n".join([f"{d['id']} accepted as {d['accepted_as']}", *gone])


def _extract_text(data: dict[str, Any]) -> str:
    head = "dry run, nothing written" if data["dry_run"] else "written as pending candidates"
    lines = [f"model {data['model']} ({head}):"]
    for turn in data["turns"]:
        lines.append(f"turn {turn['turn']}: {one_line(turn['user'], 70)}")
        found = [f"  {_line(d)}" for d in turn["candidates"]]
        lines.extend(found or ["  nothing worth remembering"])
    return "\n".join(lines)
