"""`memvault`: assemble the layers' commands, run one, map what it raised to an exit code.

Exit codes come from one table, vault.errors.OUTCOMES (README "Exit codes"; the console
maps the same table to HTTP statuses): 0 ok, 1 ran and found problems, 2 bad input,
3 conflict, 4 unavailable, 5 internal error; 141 when the reader of stdout went away.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from vault.cli import common as vault_common
from vault.cli.common import resolve_vault
from vault.cli.parser import CommandParser, Layer, Parents, common_options, git_option
from vault.errors import OUTCOMES, Internal, MemVaultError, kind_of, os_message
from vault.layout.readonly import explain_write_error

if TYPE_CHECKING:
    from vault.writes.duplicates import DuplicateFinder
    from vault.writes.operations import Vault

log = logging.getLogger("memvault_cli")

# In order: a layer's after-step (vault: commit outcome; indexer: wait for the index
# writer) runs after every command, whichever layer the command came from.


def _vault_layer() -> Layer:
    from vault.cli import commands as vault_cli

    return vault_cli.layer()


def _indexer_layer() -> Layer:
    from indexer.cli import commands as indexer_cli

    return indexer_cli.layer()


def _console_layer() -> Layer:
    from console import cli as console_cli

    return console_cli.layer()


LAYERS: tuple[Callable[[], Layer], ...] = (_vault_layer, _indexer_layer, _console_layer)


def _search_layer() -> Layer:
    from indexer.cli import search_cmd

    return search_cmd.layer()


def _remember_layers() -> list[Layer]:
    from indexer.cli import remember_cmd
    from vault.cli import commands as vault_cli

    # The vault layer's after-step (the commit's outcome) runs first, as in the full CLI.
    return [Layer("vault", (), vault_cli.layer().after), remember_cmd.layer()]


# A command that loads only its own layer's module: from a cold shell `memvault search`
# must not import the console, the LLM jobs or the engine before it knows it needs them
# (issue 23: a search in under a second). Its parser is the one the full CLI builds
# (tests/cli/test_writer_socket.py compares their help and defaults).
LIGHT: dict[str, Callable[[], list[Layer]]] = {
    "search": lambda: [_search_layer()],
    "remember": _remember_layers,
}
# What a shell reports for a Unix tool that SIGPIPE ended (`yes | head -1`): the reader of
# our output went away, which is no error of ours, so nothing is printed.
EXIT_PIPE_CLOSED = 128 + 13


def version() -> str:
    from importlib import metadata  # ~35 ms: only when --help or --version is built

    try:
        return metadata.version("memvault")
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


def exit_codes_text() -> str:
    rows = [(0, "ok"), (1, "ran, and found problems (check, status, reindex; a write saved "
            "but not committed or not indexed)")]  # fmt: skip
    rows += sorted({(o.exit_code, o.meaning) for o in OUTCOMES.values()})
    seen: dict[int, list[str]] = {}
    for code, meaning in rows:
        seen.setdefault(code, []).append(meaning)
    return "exit codes:\n" + "\n".join(f"  {c}  {'; '.join(m)}" for c, m in seen.items())


class VersionAction(argparse.Action):
    """argparse's `version` action, with the version looked up only when asked."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(
            option_strings, dest, nargs=0, default=argparse.SUPPRESS,
            help="show program's version number and exit",
        )  # fmt: skip

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        parser._print_message(f"memvault {version()}\n", sys.stdout)
        parser.exit()


def build_parser(layers: Sequence[Layer]) -> argparse.ArgumentParser:
    common = common_options()
    parents = Parents(common=common, git=git_option())
    parser = argparse.ArgumentParser(
        prog="memvault",
        description="File-first long-term memory for LangBot bots.",
        parents=[common],
        epilog=exit_codes_text(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=VersionAction)
    # CommandParser: a command's usage error prints that command's usage (and its actions').
    sub = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=CommandParser
    )
    owner: dict[str, str] = {}
    for layer in layers:
        for spec in layer.commands:
            if spec.name in owner:  # no layer may replace another's command behind its back
                raise Internal(
                    f"`memvault {spec.name}` is claimed by both the {owner[spec.name]} and "
                    f"the {layer.name} layer: give one of them another name"
                )
            owner[spec.name] = layer.name
            inherited = [common, parents.git] if spec.commits else [common]
            cmd = sub.add_parser(
                spec.name, parents=inherited, help=spec.help, description=spec.about()
            )
            spec.arguments(cmd, parents)
            cmd.set_defaults(run=spec.run, _read_only=spec.read_only)
    return parser


def _duplicates_for(vault: Vault) -> DuplicateFinder:
    from indexer.cli.remember_dup import CliDuplicates  # light: no engine until it is asked

    return CliDuplicates(vault)


def _close_duplicates(args: argparse.Namespace) -> None:
    """The index a write's duplicate check opened (indexer.cli.remember_dup), closed."""
    finder = getattr(getattr(args, "opened_vault", None), "duplicates", None)
    close = getattr(finder, "close", None)
    if close is not None:
        close()


def main(argv: Sequence[str] | None = None) -> int:
    configure_logging(os.environ.get("MEMVAULT_LOG", ""))
    light = LIGHT.get(_command_of(sys.argv[1:] if argv is None else list(argv)))
    layers = light() if light is not None else [make() for make in LAYERS]
    args = build_parser(layers).parse_args(argv)
    vault_common.duplicates_for = _duplicates_for
    try:
        return _run(args, layers)
    finally:
        _close_duplicates(args)


def _run(args: argparse.Namespace, layers: Sequence[Layer]) -> int:
    try:
        code = args.run(args)
        for layer in layers:
            if layer.after is not None:
                code = layer.after(args, code)
        sys.stdout.flush()  # a closed pipe shows here, not at exit as "Exception ignored"
        return code
    except BrokenPipeError:
        return pipe_closed()
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - every error becomes one line and its exit code
        return fail(args, exc)


# Commands whose process may end without the interpreter's teardown once main() returned: a
# search has closed its indexes, its manifest and its cache by then, and writes nothing more.
QUICK_EXIT = frozenset({"search"})


def run() -> NoReturn:
    """The installed `memvault` script: main(), then the exit. After a search the teardown
    (freeing numpy, faiss and tantivy objects, collecting modules) cost ~0.1 s CPU and up to
    0.2 s wall of a ~1 s cold-shell search, after its answer was printed (issue 23 item 4):
    such a process flushes and leaves with os._exit, unless a thread other than this one
    still runs (it would be cut short)."""
    code = main()
    quick = _command_of(sys.argv[1:]) in QUICK_EXIT and threading.active_count() == 1
    if quick:
        logging.shutdown()  # flushes every handler, as the normal exit would
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(BrokenPipeError, ValueError):  # reader gone, stream closed
                stream.flush()
        os._exit(code)
    sys.exit(code)


def _command_of(argv: Sequence[str]) -> str:
    """The command name argv asks for ("" for --help, --version or none): the first word
    that is not an option or the value of --vault."""
    words = iter(argv)
    for word in words:
        if word == "--vault":
            next(words, None)
        elif not word.startswith("-"):
            return word
        elif word in ("-h", "--help", "--version"):
            return ""
    return ""


class PlainFormatter(logging.Formatter):
    """Logging for a person at the CLI: a record that carries `plain` (a sentence, e.g. a
    broken file that sync skipped: `path:line: message (skipped; ...)`, given with
    `extra={"plain": ...}`) is shown as `warning: <plain>`; any other record keeps the
    structured `LEVEL logger event=... key=value` form."""

    def format(self, record: logging.LogRecord) -> str:
        plain = getattr(record, "plain", None)
        if isinstance(plain, str) and plain:
            return f"{record.levelname.lower()}: {plain}"
        return super().format(record)


def configure_logging(wanted: str) -> None:
    """MEMVAULT_LOG unset (or warning, error...): warnings in words (PlainFormatter);
    MEMVAULT_LOG=info or debug asks for the diagnostic log: every line structured."""
    level = logging.getLevelName(wanted.upper() or "WARNING")
    if not isinstance(level, int):  # a value logging does not know: the default, not a crash
        level = logging.WARNING
    form = "%(levelname)s %(name)s %(message)s"
    handler = logging.StreamHandler()
    structured = level <= logging.INFO
    handler.setFormatter(logging.Formatter(form) if structured else PlainFormatter(form))
    logging.basicConfig(level=level, handlers=[handler])


def pipe_closed() -> int:
    """`memvault list | head -5`: the reader left. Point stdout at /dev/null so the flush at
    exit cannot fail again, and leave as quietly as a Unix tool."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout without a descriptor (captured): nothing to flush
        pass
    return EXIT_PIPE_CLOSED


def fail(args: argparse.Namespace, exc: Exception) -> int:
    """One line on stderr saying what happened and what to do; the exit code of its kind."""
    if isinstance(exc, OSError) and not isinstance(exc, MemVaultError) and not args._read_only:
        # A write the medium or permissions refused is said in words (vault.layout.readonly).
        exc = explain_write_error(exc, _vault_or_none(args), f"`memvault {args.command}`")  # type: ignore[assignment]
    kind = kind_of(exc)
    message = str(getattr(exc, "message", None) or exc)
    if isinstance(exc, OSError) and not isinstance(exc, MemVaultError):
        message = os_message(exc)
    if kind == "internal":
        log.debug("cli=internal_error command=%s", args.command, exc_info=exc)
        message = (
            f"internal error ({type(exc).__name__}: {message}): this is a MemVault bug, please "
            "report it; MEMVAULT_LOG=debug prints the trace"
        )
    print(f"memvault: error: {message}", file=sys.stderr)
    return OUTCOMES[kind].exit_code


def _vault_or_none(args: argparse.Namespace) -> Path | None:
    try:
        return resolve_vault(args)
    except MemVaultError:
        return None
