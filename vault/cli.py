"""The vault layer's `memvault` commands (memvault_cli assembles every layer's; see there
for the exit codes): the files alone, no index."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vault import cli_output as out
from vault import cli_parser as p
from vault import gitstate
from vault.chats import require_chat
from vault.check import check_vault
from vault.create import init_vault
from vault.episode_filter import Filters, parse_filters
from vault.errors import FOUND_PROBLEMS, BadInput
from vault.field_input import parse_confidence, parse_expiry, parse_priority
from vault.keys import ScopeId
from vault.layout import STATE_DIR, Layout
from vault.links import VaultLinkError, check_state_dir
from vault.model import Episode, Speaker
from vault.operations import Vault
from vault.store import BadRequestError, NotFoundError, page_of
from vault.transfer import export_scope, import_payload, unreadable_warning

DEFAULT_VAULT = "memory"


class UsageError(BadInput):
    """A command line that cannot run as given; the message says what to pass instead."""


def resolve_vault(args: argparse.Namespace, *, must_exist: bool = True) -> Path:
    raw = getattr(args, "vault", None) or os.environ.get("MEMVAULT_VAULT") or DEFAULT_VAULT
    return checked_root(raw, must_exist=must_exist)


def checked_root(raw: str, *, must_exist: bool = True) -> Path:
    root = Path(raw).expanduser().resolve()
    # The source package is called vault/ too: writing memories into it would corrupt the app.
    if (root / "__init__.py").exists() and (root / "operations.py").exists():
        raise UsageError(f"{root} is MemVault's source package, not a vault: pass --vault PATH")
    if must_exist and not root.is_dir():
        raise UsageError(f"no vault at {root}: run `memvault init {raw}` first or pass --vault")
    try:
        check_state_dir(root, STATE_DIR)  # the index commands write there without a Vault
    except VaultLinkError as exc:
        raise UsageError(str(exc)) from None
    return root


def scope_of(args: argparse.Namespace) -> ScopeId:
    return ScopeId(args.bot, args.session, args.isolation)


def filters_of(args: argparse.Namespace) -> Filters:
    """The filters `cli_parser.add_filters` reads; a bad value is an error saying what to type."""
    return parse_filters(
        tags=args.tag,
        category=args.category,
        priority=args.priority,
        verified=args.verified,
        expiring_within=args.expiring_within,
    )


def open_vault(args: argparse.Namespace) -> Vault:
    vault = Vault(resolve_vault(args), git=not getattr(args, "no_git", False))
    # After the command: was a write saved but not committed (commit_outcome), and which
    # files did it write (the indexer's step waits until another index writer has them).
    args.opened_vault = vault
    args.written_paths = []
    vault.on_written = args.written_paths.extend
    return vault


def cmd_init(args: argparse.Namespace) -> int:
    if args.path:
        args.vault = args.path
    root = resolve_vault(args, must_exist=False)
    created = init_vault(root, git=not getattr(args, "no_git", False))
    return out.emit(args, {"vault": str(root), "created": created}, out.init_text)


def remember_from_args(args: argparse.Namespace, vault: Vault) -> Episode:
    speaker = Speaker(args.speaker, args.speaker_name) if args.speaker else None
    if args.speaker_name and not args.speaker:
        raise UsageError("--speaker-name needs --speaker ID as well")
    return vault.remember(
        scope_of(args),
        args.text,
        speaker=speaker,
        tags=args.tag,
        importance=args.importance,
        key=args.key,
        category=args.category,
        source="user",
        priority=parse_priority(args.priority),
        confidence=parse_confidence(args.confidence),
        expires_at=parse_expiry(args.expires_at, args.expires_in, vault.clock()),
    )


def cmd_list(args: argparse.Namespace) -> int:
    filters = filters_of(args)
    vault = open_vault(args)
    found, _ = vault.load_episodes(scope_of(args))
    if filters.any():  # before paging: a page is full of matches, never thinned out
        now = vault.clock()
        found = [s for s in found if filters.admits(s.episode, now)]
    page = page_of(found, status=args.status, page=args.page)
    if page.total == 0:  # a mistyped chat must not look like an empty one
        require_chat(vault.layout, scope_of(args))
    return out.emit(args, out.page_json(page), lambda _: out.page_text(page))


def cmd_show(args: argparse.Namespace) -> int:
    vault = open_vault(args)
    try:
        stored = vault.find_episode(scope_of(args), args.id)
    except NotFoundError:
        require_chat(vault.layout, scope_of(args))  # say the chat is missing, not only the id
        raise
    return out.emit(args, out.episode_full(stored), lambda _: out.show_text(stored))


def _status_cmd(verb: str) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        vault = open_vault(args)
        scope = scope_of(args)
        try:
            ep = getattr(vault, verb)(scope, args.id, source="user")
        except NotFoundError:
            require_chat(vault.layout, scope)
            raise
        if verb == "forget":
            return out.emit(args, {"id": ep.id, "status": "forgotten", "kept": ep.kept}, _gone)
        data = {"id": ep.id, "status": ep.status}
        return out.emit(args, data, lambda d: f"{d['id']} {d['status']}")

    return run


def _gone(data: dict[str, Any]) -> str:
    if not data["kept"]:
        return f"{data['id']} forgotten"
    sha = data["kept"][:12]
    return (
        f"{data['id']} forgotten; its file had changes git did not hold yet, so they were "
        f"committed first: `git show {sha}` shows them"
    )


def cmd_profile(args: argparse.Namespace) -> int:
    vault = open_vault(args)
    scope = scope_of(args)
    if args.action != "show":
        if not args.field:
            raise UsageError(f"profile {args.action} needs FIELD: name, traits, preferences, notes")
        vault.update_profile(
            scope,
            args.field,
            args.action,
            args.value or "",
            speaker=args.speaker,
            fact_key=args.fact_key,
            source="user",
        )
    profile = vault.read_profile(scope, args.speaker)
    if profile.is_empty():
        require_chat(vault.layout, scope)
    return out.emit(args, out.profile_json(profile), lambda _: out.profile_text(profile))


def cmd_check(args: argparse.Namespace) -> int:
    root = resolve_vault(args)
    report = check_vault(root)
    git = gitstate.problem(Layout(root).state_dir)
    data = {**report.as_json(), "git": {"level": git[0], "detail": git[1]} if git else None}

    def text(_: object) -> str:
        return "\n".join([out.check_text(report), *([f"{git[0]}: {git[1]}"] if git else [])])

    out.emit(args, data, text)
    return 0 if report.ok and git is None else FOUND_PROBLEMS


def cmd_export(args: argparse.Namespace) -> int:
    vault = open_vault(args)
    data = export_scope(vault, scope_of(args))
    if not data["episodes"] and not data["profiles"]:
        require_chat(vault.layout, scope_of(args))
    text = json.dumps(data, ensure_ascii=False, indent=2)
    # Written all the same (the rest is a good backup), but a file left out is said on
    # stderr and in the exit code, so neither a person nor a backup script misses it.
    code = FOUND_PROBLEMS if data["unreadable"] else 0
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
        summary = {"out": args.out, "episodes": len(data["episodes"])}
        said = (
            f"exported {out.plural(len(data['episodes']), 'episode')} and "
            f"{out.plural(len(data['profiles']), 'profile')} to {args.out}"
        )
        out.emit(args, {**summary, "unreadable": data["unreadable"]}, lambda _: said)
    else:
        print(text)
    if warning := unreadable_warning(data):
        print(f"warning: {warning}", file=sys.stderr)
    return code


def read_input(name: str) -> str:
    """The text of a file the person named (or standard input for -), as UTF-8; a missing,
    binary or unreadable file is an error naming it and what to give instead."""
    try:
        raw = sys.stdin.buffer.read() if name == "-" else Path(name).read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as exc:
        what = "is a folder" if isinstance(exc, IsADirectoryError) else "does not exist"
        raise BadRequestError(
            f"{name} {what}: give the path of a JSON file (`memvault export` writes one), "
            "or - to read standard input"
        ) from None
    except OSError as exc:  # permissions, I/O: not bad input, but still said with the name
        raise OSError(exc.errno, f"cannot read {name}: {exc.strerror}") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadRequestError(
            f"{name} is not UTF-8 text (byte {exc.start} is 0x{raw[exc.start]:02x}): import "
            "reads JSON such as `memvault export` or LongTermMemory's export writes"
        ) from None


def cmd_import(args: argparse.Namespace) -> int:
    text = read_input(args.file)
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadRequestError(f"{args.file} is not JSON (line {exc.lineno}): {exc.msg}") from exc
    try:
        result = import_payload(open_vault(args), scope_of(args), payload, source="import")
    except BadRequestError as exc:
        raise BadRequestError(f"{args.file}: {exc}") from exc
    return out.emit(args, result, out.import_text)


def commit_outcome(args: argparse.Namespace, code: int) -> int:
    """A write whose files are saved but not committed ran, yet found a problem: exit 1."""
    vault: Vault | None = getattr(args, "opened_vault", None)
    failure = vault.commit_failure if vault is not None else None
    if failure is None:
        return code
    print(f"memvault: error: {failure.message()}", file=sys.stderr)
    return max(code, FOUND_PROBLEMS)


def _events() -> tuple[Callable[[argparse.Namespace], int], Any]:
    from vault import cli_events  # it imports this module (open_vault, UsageError)

    return cli_events.cmd_events, cli_events.events_args


def layer() -> p.Layer:
    """The vault layer's commands (`remember` is the indexer's: it also supersedes and
    waits for the index)."""
    status_help = {
        "forget": "delete one memory's file",
        "restore": "make an archived or superseded memory active again",
    }
    from vault import cli_bulk  # imports this module: only once it is loaded

    Spec = p.CommandSpec
    return p.Layer(
        "vault",
        (
            Spec("init", "create a vault", cmd_init, p.init_args, commits=True),
            Spec("list", "list memories", cmd_list, p.list_args, read_only=True),
            Spec("show", "show one memory", cmd_show, p.id_args, read_only=True),
            *(
                Spec(verb, text, _status_cmd(verb), p.id_args, commits=True)
                for verb, text in status_help.items()
            ),
            Spec("profile", "show or edit a profile", cmd_profile, p.profile_args, commits=True),
            Spec("check", "validate every file (changes nothing)", cmd_check, read_only=True),
            Spec("export", "JSON of L1 + L2", cmd_export, p.export_args, read_only=True),
            Spec("import", "import exported JSON", cmd_import, p.import_args, commits=True),
            # verify, stats, and delete/archive of one id or of what filters pick
            *cli_bulk.specs(),
            Spec("events", "a person's key events: list, show, close", *_events()),
        ),
        after=commit_outcome,
    )
