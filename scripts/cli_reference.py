"""Write docs/CLI.md, the `memvault` command reference, from the parsers' own `--help`.

    python scripts/cli_reference.py           # rewrite docs/CLI.md
    python scripts/cli_reference.py --check   # exit 1 if docs/CLI.md is not what it would write

The parser is the real one (memvault_cli.main.build_parser over every layer), so a command,
sub-command or option is documented the moment it exists. The text is the same on every
machine: a fixed width (COLUMNS), no translation of argparse's own words (LANGUAGE=C), no
colour, and no help text holds a path or a date of the machine that ran it
(tests/cli/test_cli_reference.py checks both the file and that).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a file from a checkout: the packages are beside it
    sys.path.insert(0, str(REPO))

DOC = REPO / "docs" / "CLI.md"
WIDTH = 100
# The environment argparse reads while formatting: the terminal width, the language of its
# own words ("usage:", "options:"), and colour (Python 3.14+).
FIXED_ENV = {"COLUMNS": str(WIDTH), "LANGUAGE": "C", "NO_COLOR": "1", "PYTHON_COLORS": "0"}


@dataclass(frozen=True)
class Entry:
    """One parser of the command tree: `memvault`, `memvault events`, `memvault events list`."""

    words: tuple[str, ...]  # ("memvault", "events", "list")
    summary: str  # the one line its parent lists it with ("" for `memvault` itself)
    parser: argparse.ArgumentParser

    @property
    def title(self) -> str:
        return " ".join(self.words)

    @property
    def anchor(self) -> str:
        return "-".join(self.words)  # GitHub's anchor of the heading `memvault events list`


@contextmanager
def fixed_environment() -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in FIXED_ENV}
    os.environ.update(FIXED_ENV)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def memvault_parser() -> argparse.ArgumentParser:
    from memvault_cli.main import LAYERS, build_parser

    return build_parser([make() for make in LAYERS])


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """(name, one-line help, parser) of each sub-command, in the order they were added."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            seen: set[int] = set()
            for name, sub in action.choices.items():
                if id(sub) not in seen:  # an alias names the same parser again
                    seen.add(id(sub))
                    found.append((name, helps.get(name, ""), sub))
    return found


def entries(parser: argparse.ArgumentParser) -> list[Entry]:
    """Every parser of the tree, depth first: a command, then its sub-commands."""
    out: list[Entry] = []

    def walk(words: tuple[str, ...], summary: str, node: argparse.ArgumentParser) -> None:
        out.append(Entry(words, summary, node))
        for name, text, sub in _subcommands(node):
            walk((*words, name), text, sub)

    walk(("memvault",), "", parser)
    return out


def _help(parser: argparse.ArgumentParser) -> str:
    if hasattr(parser, "color"):  # Python 3.14+: never colour a file
        parser.color = False
    return parser.format_help().rstrip() + "\n"


def render() -> str:
    """docs/CLI.md as this checkout's parsers describe it."""
    with fixed_environment():
        tree = entries(memvault_parser())
        helps = [_help(entry.parser) for entry in tree]
    lines = [
        "# The `memvault` command reference",
        "",
        "<!-- Generated from the parsers' --help by `python scripts/cli_reference.py`; do not",
        "     edit by hand: change the help texts in the code and run it again",
        "     (tests/cli/test_cli_reference.py fails while this file is out of date). -->",
        "",
        "Every command and sub-command with its `--help`: usage, what it does, its options.",
        "`memvault COMMAND --help` prints the same in a terminal. The exit codes are listed",
        "under `memvault` below.",
        "",
    ]
    for entry in tree[1:]:
        indent = "  " * (len(entry.words) - 2)
        summary = f": {entry.summary}" if entry.summary else ""
        lines.append(f"{indent}- [`{entry.title}`](#{entry.anchor}){summary}")
    for entry, text in zip(tree, helps, strict=True):
        hashes = "#" * min(len(entry.words) + 1, 4)
        lines += ["", f"{hashes} `{entry.title}`", "", "```text", text.rstrip("\n"), "```"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    cli = argparse.ArgumentParser(description="Write docs/CLI.md from the parsers' --help.")
    cli.add_argument("--check", action="store_true", help="only say whether it is up to date")
    args = cli.parse_args(argv)
    text = render()
    if args.check:
        current = DOC.read_text(encoding="utf-8") if DOC.exists() else ""
        if current != text:
            print(f"{DOC.relative_to(REPO)} is out of date: run `python scripts/cli_reference.py`")
            return 1
        return 0
    DOC.write_text(text, encoding="utf-8")
    print(f"wrote {DOC.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
