"""`memvault search`: its options and handler, light to import.

From a cold shell the command must answer without loading what the question does not need
(issue 23 item 4): this module imports only the vault layer's CLI helpers and the writer
link at load time. When a writer runs (`memvault watch`, `console`, `demo`), the search is
asked of it over indexer.cli.writer_link and this process never loads numpy, the model or
the indexes; without one (or when asking fails) the engine is opened here, as before.
Both roads print what `search_output` renders, so the answer is the same.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from indexer.cli import writer_link
from vault.cli import common as vault_cli
from vault.cli.parser import CommandSpec, Layer, Parents, add_filters, add_scope, common_options
from vault.format.model import STATUSES
from vault.layout.chats import require_chat
from vault.layout.layout import Layout

if TYPE_CHECKING:
    from indexer.engine import Engine

# = indexer.retrieval.search.MODES (tests/cli/test_writer_socket.py checks they
# agree): importing that module here would load numpy and the gate's patterns.
MODES = ("hybrid", "text", "vector")
CATCH_UP_FILES = 64  # = indexer.cli.catch_up.CATCH_UP_FILES, for the help text (checked too)
GATE_HELP = (
    "the message gate as injection applies it (default on: a greeting, thanks or an "
    "impersonal request such as arithmetic is marked as not injected; off: the floor alone)"
)
DESCRIPTION = (
    "Search one chat's memories (--bot/--session) by words and by "
    "meaning (full-text and vector search fused; --mode text or vector for one), "
    "ranked with time decay, importance and the current --speaker. Prints the "
    "best --top-k (default 5), each with its score and text (--explain: every "
    "component of the score). When no other process writes the index it first "
    f"indexes up to {CATCH_UP_FILES} changed files; with more it answers from "
    "the index as built and says on stderr how many wait (`memvault reindex "
    "--keep` or `memvault watch` indexes them); with no index at all it indexes "
    "first, printing progress. An empty query is a usage error (exit 2)."
)


def search_query(text: str) -> str:
    """The query as typed; blank is a usage error, not a search that finds nothing."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            "nothing to search for: give words or a question, e.g. `memvault search "
            '"Alice\'s trip" --bot b1 --session group_123`'
        )
    return text


def search_args(p: argparse.ArgumentParser, parents: Parents) -> None:
    p.add_argument("query", type=search_query, help="what to search for (words or a question)")
    add_scope(p, speaker=True, speaker_help="current speaker id (ranked higher)")
    p.add_argument("--top-k", type=int, default=5)
    p.add_argument("--mode", choices=MODES, default="hybrid")
    p.add_argument("--status", choices=(*STATUSES, "all"), default="active")
    p.add_argument("--profiles", action="store_true", help="also search profiles")
    p.add_argument("--explain", action="store_true", help="show every score component")
    p.add_argument("--no-decay", action="store_true", help="ignore age when ranking")
    p.add_argument("--gate", choices=("on", "off"), default="on", help=GATE_HELP)
    p.add_argument(
        "--linked-people",
        action="store_true",
        help="memories of every sender id linked to the --speaker's person rank as the "
        "speaker's (the plugin's setting linked_people; the chat's scope is unchanged)",
    )
    add_filters(p)  # applied inside the index query, before ranking (indexer.retrieval.filters)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="memvault search", parents=[common_options()])
    search_args(p, Parents(common=p, git=p))
    return p


def search_defaults() -> dict[str, Any]:
    """Every option of `memvault search` with its default (the writer checks a request's
    names and value types against them)."""
    skip = {"help", argparse.SUPPRESS}
    return {a.dest: a.default for a in _parser()._actions if a.dest not in skip}


def option_choices() -> dict[str, tuple[Any, ...]]:
    return {a.dest: tuple(a.choices) for a in _parser()._actions if a.choices is not None}


def cmd_search(args: argparse.Namespace) -> int:
    if args.top_k < 1:
        raise vault_cli.UsageError("--top-k must be 1 or more")
    vault_cli.filters_of(args)  # a bad filter is a usage error here, writer or not
    root = vault_cli.resolve_vault(args)
    require_chat(Layout(root), vault_cli.scope_of(args))  # a mistyped chat is not an empty one
    asked = writer_link.ask(root, {"op": "search", "args": _request_args(args)})
    if asked is not None:
        if not asked["ok"]:
            writer_link.raise_answer_error(asked)
        sys.stdout.write(str(asked.get("stdout", "")))
        return 0
    from indexer.cli.catch_up import catch_up
    from indexer.cli.common import open_engine, open_reader

    engine, writer = open_reader(root), False
    if engine is None:  # behind (indexer.cli.catch_up.behind), or no index to read yet
        engine, writer = open_engine(args)
    with engine:
        if writer:  # nobody keeps the index in sync for us: catch up, bounded (catch_up)
            catch_up(engine)
        sys.stdout.write(search_output(engine, args))
    return 0


def _request_args(args: argparse.Namespace) -> dict[str, Any]:
    """The parsed options the writer needs (never the vault path, the handler or flags of
    the parser itself)."""
    skip = {"vault", "run", "_read_only", "command"}
    return {k: v for k, v in vars(args).items() if k not in skip and not callable(v)}


def search_output(engine: Engine, args: argparse.Namespace) -> str:
    """What `memvault search` prints on stdout for `args`, searched on `engine` (this
    process's, or the writer's for a client that asked it)."""
    from indexer.cli import show as cli_show
    from indexer.retrieval.search_query import SearchQuery
    from vault.cli.output import rendered

    statuses = STATUSES if args.status == "all" else (args.status,)
    scope = vault_cli.scope_of(args)
    linked: tuple[str, ...] = ()
    if getattr(args, "linked_people", False) and args.speaker:
        from vault.persons import identity_of  # only when asked: the cold shell stays light

        linked = identity_of(Layout(engine.root), scope.bot, args.speaker, True).senders[1:]
    results = engine.search(
        SearchQuery(
            args.query,
            scope,
            top_k=args.top_k,
            mode=args.mode,
            speaker_id=args.speaker or "",
            linked_speakers=linked,
            statuses=tuple(statuses),
            include_profiles=args.profiles,
            decay=not args.no_decay,
            filters=vault_cli.filters_of(args),
            gate=args.gate == "on",
        ),
    )
    # Text lines print the unrounded relevance of explain.absolute (the 3 decimals every
    # surface shows); JSON carries explain only when asked.
    full = args.explain or not getattr(args, "json", False)
    items = [cli_show.result_item(engine.root, r, full) for r in results]
    return rendered(args, items, lambda data: cli_show.results_text(data, args.explain))


SPEC = CommandSpec(
    "search",
    "hybrid search in one chat",
    cmd_search,
    search_args,
    read_only=True,
    description=DESCRIPTION,
)


def layer() -> Layer:
    """Only `search`: what memvault_cli builds for a search, so the rest of the CLI's
    commands (and their imports) are never loaded for one."""
    return Layer("indexer", (SPEC,))
