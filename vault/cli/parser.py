"""How a layer describes its `memvault` commands (DESIGN.md 7), and the vault layer's options.

Each layer (vault.cli.commands, indexer.cli.commands, console.cli) returns a `Layer`: its commands
as
`CommandSpec`s and an optional step run after every command. memvault_cli assembles them
into the one parser; a name two layers both claim is refused there, so no layer can replace
another's handler.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NoReturn

from vault.format.model import CATEGORIES, STATUSES
from vault.layout.keys import ISOLATIONS

Handler = Callable[[argparse.Namespace], int]


@dataclass(frozen=True)
class Parents:
    """Option groups a command's parser (or one of its actions') inherits."""

    common: argparse.ArgumentParser  # --vault, --json: every command
    git: argparse.ArgumentParser  # --no-git: only commands that commit to git


def _no_arguments(parser: argparse.ArgumentParser, parents: Parents) -> None:
    return None


@dataclass(frozen=True)
class CommandSpec:
    name: str
    help: str  # one line, in `memvault --help`'s list of commands
    run: Handler
    arguments: Callable[[argparse.ArgumentParser, Parents], None] = _no_arguments
    commits: bool = False  # writes memory and commits it: offers --no-git
    # Reads only (files or index): an OSError it meets is a read that failed, never
    # explained as "the vault is read-only" (vault.layout.readonly), which is about writes.
    read_only: bool = False
    # The paragraph `memvault NAME --help` opens with: what it does, what it prints, and
    # its exit codes when they are not just 0 / 2. Empty: the help line, as a sentence.
    description: str = ""

    def about(self) -> str:
        text = self.description or self.help
        return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


class CommandParser(argparse.ArgumentParser):
    """The parser of one command (and of its actions): an argument it does not know is its
    own usage error, printed with its usage line (`usage: memvault remember ...`).

    argparse hands a sub-parser's unknown arguments up to `memvault` itself, which then
    printed the top-level usage for `memvault remember ... --tags a`."""

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(unknown_message(extras, self._option_names()))
        return parsed, extras

    def _option_names(self) -> list[str]:
        return [o for action in self._actions for o in action.option_strings]

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)  # then the message and what to do; exit 2: bad usage
        self.exit(2, f"{self.prog}: error: {message}; see `{self.prog} --help`\n")


def unknown_message(extras: list[str], options: list[str]) -> str:
    """`unrecognized arguments: --tags a (did you mean --tag?)`: the closest option to each
    unknown flag; a bare word is most often a value with a space that was not quoted."""
    hints = []
    stray = False  # a bare word that is no unknown flag's value
    for i, word in enumerate(extras):
        flag = word.split("=", 1)[0]
        if flag.startswith("--"):
            close = difflib.get_close_matches(flag, options, n=1, cutoff=0.6)
            hints += [f"did you mean {close[0]}?"] if close else []
        elif not (i and extras[i - 1].startswith("--") and "=" not in extras[i - 1]):
            stray = True
    if stray:
        hints.append("a value with spaces needs quotes")
    hint = f" ({'; '.join(hints)})" if hints else ""
    return f"unrecognized arguments: {' '.join(extras)}{hint}"


@dataclass(frozen=True)
class Layer:
    name: str
    commands: tuple[CommandSpec, ...]
    # Run after every command that returned (in layer order), with its exit code; returns
    # the code to exit with (e.g. 1 when a write was saved but not committed).
    after: Callable[[argparse.Namespace, int], int] | None = None


def common_options() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    # SUPPRESS: given before or after the command name, the one given wins (not a default).
    p.add_argument(
        "--vault",
        default=argparse.SUPPRESS,
        help="vault folder (default: $MEMVAULT_VAULT, else ./memory, else the vault the "
        "current folder is in)",
    )
    p.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")
    return p


def git_option() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument(
        "--no-git",
        action="store_true",
        default=argparse.SUPPRESS,
        help="do not commit this operation to git",
    )
    return p


def add_scope(
    p: argparse.ArgumentParser,
    *,
    speaker: bool = False,
    session_required: bool = True,
    speaker_help: str = "sender id",
) -> None:
    """--bot, --session, --isolation (and --speaker): which chat, as LangBot names it."""
    p.add_argument("--bot", default=None, help="bot uuid (omit when there is none)")
    p.add_argument(
        "--session",
        required=session_required,
        default=None,
        help="<launcher_type>_<launcher_id>, e.g. group_123 or person_42",
    )
    p.add_argument(
        "--isolation",
        choices=ISOLATIONS,
        default="session",
        help="L2 sharing: session = this chat's memories, bot = shared by the bot's chats",
    )
    if speaker:
        p.add_argument("--speaker", default=None, help=speaker_help)


def init_args(p: argparse.ArgumentParser, parents: Parents) -> None:
    p.add_argument("path", nargs="?", default=None, help="where (default: --vault)")
    p.add_argument(
        "--index",
        default=None,
        metavar="URI",
        help="where the vector index lives, recorded in <vault>/memvault.yaml: local (default),"
        " milvus://HOST:PORT, https://HOST (token: MEMVAULT_MILVUS_TOKEN),"
        " milvus+lite:///ABS/file.db or a relative path/file.db; MEMVAULT_INDEX overrides it",
    )


def remember_args(p: argparse.ArgumentParser, parents: Parents) -> None:
    add_scope(p, speaker=True)
    p.add_argument("text")
    p.add_argument("--speaker-name", default=None, help="the sender's display name")
    p.add_argument("--tag", action="append", default=[], help="repeat for several tags")
    p.add_argument("--importance", type=int, default=2, help="1..5 (default 2)")
    p.add_argument("--key", default=None, help="stable key: supersedes the older memory")
    p.add_argument("--category", choices=CATEGORIES, default=None)
    p.add_argument(
        "--priority",
        default=None,
        metavar="P",
        help="low | normal | high | critical (default: from --importance; critical = "
        "in every prompt of the chat)",
    )
    p.add_argument("--expires-in", default=None, metavar="D", help="e.g. 30m, 12h, 7d, 2w")
    p.add_argument("--expires-at", default=None, metavar="ISO", help="e.g. 2026-12-31T18:00Z")
    p.add_argument("--confidence", default=None, metavar="C", help="0..1, e.g. 0.8")
    p.add_argument(
        "--allow-duplicate",
        action="store_true",
        help="store it even when the chat already remembers the same (or nearly the same) thing",
    )


def add_filters(p: argparse.ArgumentParser) -> None:
    """--tag, --category, --priority, --verified, --expiring-within
    (vault.format.episode_filter)."""
    p.add_argument(
        "--tag", action="append", default=[], metavar="T", help="has this tag (any case); repeat"
    )
    p.add_argument("--category", default=None, metavar="C", help="one of " + ", ".join(CATEGORIES))
    p.add_argument("--priority", default=None, metavar="P", help="low | normal | high | critical")
    p.add_argument("--verified", default=None, metavar="yes|no", help="verified or not")
    p.add_argument(
        "--expiring-within", default=None, metavar="D", help="expires within, e.g. 7d, 12h, 2w"
    )


def list_args(p: argparse.ArgumentParser, parents: Parents) -> None:
    add_scope(p)
    p.add_argument("--status", choices=(*STATUSES, "all"), default="active")
    p.add_argument("--page", type=int, default=1)
    add_filters(p)


def id_args(p: argparse.ArgumentParser, parents: Parents) -> None:
    add_scope(p)
    p.add_argument("id", help="episode id, e.g. ep_20261130_7f3a9c")


def profile_args(p: argparse.ArgumentParser, parents: Parents) -> None:
    add_scope(p, speaker=True, speaker_help="sender id: that person's profile")
    p.add_argument("action", choices=("show", "set", "add", "remove"))
    p.add_argument("field", nargs="?", default=None, help="name | traits | preferences | notes")
    p.add_argument("value", nargs="?", default=None)
    p.add_argument("--fact-key", default=None, help="slot key, e.g. coffee")
    p.add_argument(
        "--speaker-name",
        default=None,
        help="the sender's display name: fills the profile's name while it is empty",
    )


def export_args(p: argparse.ArgumentParser, parents: Parents) -> None:
    add_scope(p)
    p.add_argument("--out", default=None, help="write to this file instead of stdout")


def import_args(p: argparse.ArgumentParser, parents: Parents) -> None:
    add_scope(p)
    p.add_argument("file", help="JSON file, or - for standard input")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="write nothing: print how many items are new, already imported or refused",
    )
