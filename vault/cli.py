"""`memvault`: the same engine as the plugin, from a shell. Exit 0 ok, 1 problems, 2 bad input."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from vault import cli_output as out
from vault import gitstate
from vault.check import check_vault
from vault.cli_parser import build_parser
from vault.create import init_vault
from vault.keys import ScopeId
from vault.layout import STATE_DIR, Layout
from vault.links import VaultLinkError, check_state_dir
from vault.model import Episode, FormatError, Speaker
from vault.names import UnsafeNameError
from vault.operations import Vault
from vault.readonly import explain_write_error
from vault.safewrite import ConflictError, DiskFullError, LockTimeoutError
from vault.store import BadRequestError, NotFoundError
from vault.transfer import export_scope, import_payload

DEFAULT_VAULT = "memory"


class UsageError(Exception):
    pass


def resolve_vault(args: argparse.Namespace, *, must_exist: bool = True) -> Path:
    raw = getattr(args, "vault", None) or os.environ.get("MEMVAULT_VAULT") or DEFAULT_VAULT
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


def open_vault(args: argparse.Namespace) -> Vault:
    vault = Vault(resolve_vault(args), git=not getattr(args, "no_git", False))
    # main() asks it, once the command is done, whether a write was saved but not committed.
    args.opened_vault = vault
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
    )


def cmd_remember(args: argparse.Namespace) -> int:
    ep = remember_from_args(args, open_vault(args))
    return out.emit(args, {"id": ep.id}, lambda d: d["id"])


def cmd_list(args: argparse.Namespace) -> int:
    page = open_vault(args).list_episodes(scope_of(args), status=args.status, page=args.page)
    return out.emit(args, out.page_json(page), lambda _: out.page_text(page))


def cmd_show(args: argparse.Namespace) -> int:
    stored = open_vault(args).find_episode(scope_of(args), args.id)
    return out.emit(args, out.episode_full(stored), lambda _: out.show_text(stored))


def _status_cmd(verb: str) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        vault = open_vault(args)
        scope = scope_of(args)
        ep = getattr(vault, verb)(scope, args.id, source="user")
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
    return out.emit(args, out.profile_json(profile), lambda _: out.profile_text(profile))


def cmd_check(args: argparse.Namespace) -> int:
    root = resolve_vault(args)
    report = check_vault(root)
    git = gitstate.problem(Layout(root).state_dir)
    data = {**report.as_json(), "git": {"level": git[0], "detail": git[1]} if git else None}

    def text(_: object) -> str:
        return "\n".join([out.check_text(report), *([f"{git[0]}: {git[1]}"] if git else [])])

    out.emit(args, data, text)
    return 0 if report.ok and git is None else 1


def cmd_export(args: argparse.Namespace) -> int:
    data = export_scope(open_vault(args), scope_of(args))
    text = json.dumps(data, ensure_ascii=False, indent=2)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
        return out.emit(args, {"out": args.out, "episodes": len(data["episodes"])}, str)
    print(text)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    raw = sys.stdin.read() if args.file == "-" else Path(args.file).read_text(encoding="utf-8-sig")
    try:
        payload = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise BadRequestError(f"{args.file} is not JSON (line {exc.lineno}): {exc.msg}") from exc
    result = import_payload(open_vault(args), scope_of(args), payload, source="import")
    return out.emit(args, result, out.import_text)


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "init": cmd_init,
    "remember": cmd_remember,
    "list": cmd_list,
    "show": cmd_show,
    "forget": _status_cmd("forget"),
    "archive": _status_cmd("archive"),
    "restore": _status_cmd("restore"),
    "profile": cmd_profile,
    "check": cmd_check,
    "export": cmd_export,
    "import": cmd_import,
}


Extra = tuple[
    Callable[[Any, argparse.ArgumentParser], None],
    dict[str, Callable[[argparse.Namespace], int]],
]


def main(argv: Sequence[str] | None = None, extra: Extra | None = None) -> int:
    """Run one command; `extra` = (add_subcommands, handlers) from the indexer."""
    logging.basicConfig(
        level=os.environ.get("MEMVAULT_LOG", "WARNING").upper(),
        format="%(levelname)s %(name)s %(message)s",
    )
    args = build_parser(extra[0] if extra else None).parse_args(argv)
    commands = {**COMMANDS, **(extra[1] if extra else {})}
    try:
        code = commands[args.command](args)
        return _commit_outcome(args, code)
    except (UsageError, BadRequestError, NotFoundError, UnsafeNameError, FormatError) as exc:
        return _fail(exc, 2)
    except DiskFullError as exc:  # ran, but the disk had no room: nothing was changed
        return _fail(exc, 1)
    except (ValueError, OSError) as exc:
        # A write the medium or permissions refused is said in words (vault.readonly).
        what = f"`memvault {args.command}`"
        return _fail(explain_write_error(exc, _vault_or_none(args), what), 2)
    except (ConflictError, LockTimeoutError) as exc:
        return _fail(exc, 1)
    except RuntimeError as exc:  # index locked by another writer, embedding provider down
        return _fail(exc, 1)


def _commit_outcome(args: argparse.Namespace, code: int) -> int:
    """A write whose files are saved but not committed ran, yet found a problem: exit 1."""
    vault: Vault | None = getattr(args, "opened_vault", None)
    failure = vault.commit_failure if vault is not None else None
    if failure is None:
        return code
    print(f"memvault: error: {failure.message()}", file=sys.stderr)
    return max(code, 1)


def _vault_or_none(args: argparse.Namespace) -> Path | None:
    try:
        return resolve_vault(args)
    except UsageError:
        return None


def _fail(exc: BaseException, code: int) -> int:
    message: Any = getattr(exc, "message", None) or str(exc)
    print(f"memvault: error: {message}", file=sys.stderr)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
