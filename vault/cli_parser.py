"""The `memvault` argument parser (DESIGN.md 7); commands live in vault.cli."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from vault.keys import ISOLATIONS
from vault.model import CATEGORIES, STATUSES


def _common() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument(
        "--vault",
        default=argparse.SUPPRESS,
        help="vault folder (default: $MEMVAULT_VAULT or ./memory)",
    )
    p.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")
    p.add_argument(
        "--no-git",
        action="store_true",
        default=argparse.SUPPRESS,
        help="do not commit this operation to git",
    )
    return p


def _scope(speaker: bool = False) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--bot", default=None, help="bot uuid (omit when there is none)")
    p.add_argument("--session", required=True, help="<launcher_type>_<launcher_id>, e.g. group_123")
    p.add_argument("--isolation", choices=ISOLATIONS, default="session", help="L2 sharing")
    if speaker:
        p.add_argument("--speaker", default=None, help="sender id")
    return p


def build_parser(
    extra: Callable[[Any, argparse.ArgumentParser], None] | None = None,
) -> argparse.ArgumentParser:
    """The vault commands; `extra(subparsers, common)` adds more (the indexer's)."""
    common = _common()
    parser = argparse.ArgumentParser(
        prog="memvault",
        description="File-first long-term memory for LangBot bots.",
        parents=[common],
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    init = sub.add_parser("init", parents=[common], help="create a vault")
    init.add_argument("path", nargs="?", default=None)

    rem = sub.add_parser("remember", parents=[common, _scope(True)], help="save a memory")
    rem.add_argument("text")
    rem.add_argument("--speaker-name", default=None)
    rem.add_argument("--tag", action="append", default=[], help="repeat for several tags")
    rem.add_argument("--importance", type=int, default=2, help="1..5 (default 2)")
    rem.add_argument("--key", default=None, help="stable key: supersedes the older memory")
    rem.add_argument("--category", choices=CATEGORIES, default=None)

    lst = sub.add_parser("list", parents=[common, _scope()], help="list memories")
    lst.add_argument("--status", choices=(*STATUSES, "all"), default="active")
    lst.add_argument("--page", type=int, default=1)

    for name, text in (
        ("show", "show one memory"),
        ("forget", "delete one memory's file"),
        ("archive", "hide a memory from recall, keep the file"),
        ("restore", "make an archived or superseded memory active again"),
    ):
        cmd = sub.add_parser(name, parents=[common, _scope()], help=text)
        cmd.add_argument("id")

    prof = sub.add_parser("profile", parents=[common, _scope(True)], help="show or edit a profile")
    prof.add_argument("action", choices=("show", "set", "add", "remove"))
    prof.add_argument("field", nargs="?", default=None, help="name | traits | preferences | notes")
    prof.add_argument("value", nargs="?", default=None)
    prof.add_argument("--fact-key", default=None, help="slot key, e.g. coffee")

    sub.add_parser("check", parents=[common], help="validate every file (changes nothing)")

    exp = sub.add_parser("export", parents=[common, _scope()], help="JSON of L1 + L2")
    exp.add_argument("--out", default=None, help="write to this file instead of stdout")

    imp = sub.add_parser("import", parents=[common, _scope()], help="import exported JSON")
    imp.add_argument("file", help="JSON file, or - for standard input")

    if extra is not None:
        extra(sub, common)
    return parser
