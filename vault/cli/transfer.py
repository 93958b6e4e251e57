"""`memvault export` and `memvault import`: a chat's L1 + L2 as JSON, out and back in."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from vault.cli import output as out
from vault.cli.common import open_vault, scope_of
from vault.errors import FOUND_PROBLEMS, BadRequestError
from vault.format.input_limits import MAX_IMPORT_BYTES
from vault.format.jsonin import load_json
from vault.layout.chats import require_chat
from vault.transfer.exchange import export_scope, import_payload, unreadable_warning


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
        if name == "-":
            raw = sys.stdin.buffer.read(MAX_IMPORT_BYTES + 1)
        else:
            with Path(name).open("rb") as handle:
                raw = handle.read(MAX_IMPORT_BYTES + 1)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as exc:
        what = "is a folder" if isinstance(exc, IsADirectoryError) else "does not exist"
        raise BadRequestError(
            f"{name} {what}: give the path of a JSON file (`memvault export` writes one), "
            "or - to read standard input"
        ) from None
    except OSError as exc:  # permissions, I/O: not bad input, but still said with the name
        raise OSError(exc.errno, f"cannot read {name}: {exc.strerror}") from None
    if len(raw) > MAX_IMPORT_BYTES:
        raise BadRequestError(
            f"{name} is larger than {MAX_IMPORT_BYTES / 1e6:g} MB: split it into parts "
            "(an export per chat, or its episodes in several files) and import each"
        )
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
        payload = load_json(text, args.file)
    except json.JSONDecodeError as exc:
        raise BadRequestError(f"{args.file} is not JSON (line {exc.lineno}): {exc.msg}") from exc
    scope = scope_of(args)
    dry = bool(getattr(args, "dry_run", False))
    try:
        result = import_payload(open_vault(args), scope, payload, source="import", dry_run=dry)
    except BadRequestError as exc:
        raise BadRequestError(f"{args.file}: {exc}") from exc
    result = {"chat": scope.session_key, "dry_run": dry, **result}
    code = out.emit(args, result, out.import_text)
    # A refused item is said where a person and a script both see it: stderr and the exit
    # code (1, "ran but found problems"); the rest of the file is imported all the same.
    for refused in result["refused"]:
        print(f"error: {args.file}: {refused['item']}: {refused['reason']}", file=sys.stderr)
    return FOUND_PROBLEMS if result["refused"] else code
