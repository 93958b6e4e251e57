"""`memvault sync [REMOTE]`: pull and push the vault through a git remote (vault.git.gitsync)."""

from __future__ import annotations

import argparse
from typing import Any

from vault.cli import output as out
from vault.cli.common import open_vault, resolve_vault
from vault.cli.parser import Parents
from vault.errors import FOUND_PROBLEMS
from vault.git import gitsync


def sync_args(p: argparse.ArgumentParser, parents: Parents) -> None:
    p.add_argument(
        "remote",
        nargs="?",
        default=None,
        help="a bare repository's path, file://, ssh:// or https:// URL (default: the "
        "vault's git remote `origin`)",
    )
    p.add_argument(
        "--set-remote",
        metavar="URL",
        default=None,
        help="make URL the default remote (the vault's git `remote.origin.url`), then sync",
    )


def cmd_sync(args: argparse.Namespace) -> int:
    if args.set_remote:
        gitsync.set_remote(resolve_vault(args), args.set_remote)
    result = gitsync.sync(open_vault(args), args.remote or args.set_remote)
    out.emit(args, result.as_json(), _text)
    # Ran, and kept a conflicting file twice: a result a person must look at (exit 1).
    return FOUND_PROBLEMS if result.conflicts else 0


def _text(data: dict[str, Any]) -> str:
    pulled = len(data["pulled"])
    said = {
        "up-to-date": f"{data['remote']}: already in sync",
        "pushed": f"{data['remote']}: pushed, nothing to pull",
        "fast-forward": f"{data['remote']}: pulled {out.plural(pulled, 'file')} (fast-forward)",
        "merged": f"{data['remote']}: merged {out.plural(pulled, 'file')} from the remote",
    }[data["action"]]
    if data["action"] == "merged" and not pulled:
        said = f"{data['remote']}: merged the remote's history (no file changed here)"
    if data["action"] in ("fast-forward", "merged"):
        said += ", pushed" if data["pushed"] else ""
        if pulled:
            said += "; a running `memvault watch` indexes them, else the next search catches up"
    lines = [f"{said} ({data['seconds']:.2f}s)"]
    lines += [f"warning: {note}" for note in data["notes"]]
    return "\n".join(lines)
