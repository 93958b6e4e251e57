"""`memvault forget`, `archive` and `restore` of one memory by id (`delete` and `archive` of
one id in vault.cli.bulk run the same command)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from vault.cli import output as out
from vault.cli.common import episode_lookup, open_vault, scope_of

STATUS_OF = {"archive": "archived", "restore": "active"}


def status_command(verb: str) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        vault = open_vault(args)
        scope = scope_of(args)
        with episode_lookup(args, vault, scope):
            if verb == "forget":
                gone = vault.forget(scope, args.id, source="user")
                data = {"id": gone.id, "status": "forgotten", "kept": gone.kept,
                        "kept_outside_git": list(gone.aside), "note": gone.note()}  # fmt: skip
                return out.emit(args, data, _gone)
            done = vault.change_status(scope, args.id, STATUS_OF[verb], source="user")
        data: dict[str, Any] = {"id": done.id, "status": done.episode.status,
                                "changed": done.changed}  # fmt: skip
        if done.note():  # a restore that stayed superseded, or replaced an older memory
            data |= {"superseded_by": done.episode.superseded_by, "note": done.note()}
        return out.emit(args, data, _status_text)

    return run


def _status_text(data: dict[str, Any]) -> str:
    text = out.status_text(data)
    return f"{text}; {data['note']}" if data.get("note") else text


def _gone(data: dict[str, Any]) -> str:
    if data["kept_outside_git"]:
        return f"{data['id']} forgotten; {data['note']}"
    if not data["kept"]:
        return f"{data['id']} forgotten"
    sha = data["kept"][:12]
    return (
        f"{data['id']} forgotten; its file had changes git did not hold yet, so they were "
        f"committed first: `git show {sha}` shows them"
    )
