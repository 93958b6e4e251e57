"""The indexer layer's `memvault` commands: search, remember (it supersedes and waits for
the index), reindex, watch, status, eval, demo, consolidate, candidates. memvault_cli
assembles them with the other layers'.

`layer()` assembles them, with the commands of indexer.cli.candidates, consolidate and watch;
those share indexer.cli.common (open_engine) and vault.cli.common, never this module.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from indexer.cli import remember_cmd, search_cmd
from indexer.cli import show as cli_show
from indexer.cli.candidates import candidates_args, cmd_candidates
from indexer.cli.consolidate import cmd_consolidate, consolidate_args
from indexer.cli.search_cmd import GATE_HELP, MODES
from indexer.cli.watch import cmd_watch, watch_args
from indexer.engine import Engine
from indexer.evaluate import run_eval
from indexer.sync.manifest import index_dir
from vault.cli import common as vault_cli
from vault.cli.output import emit
from vault.cli.parser import CommandSpec, Layer, Parents
from vault.errors import FOUND_PROBLEMS
from vault.format.yamlio import parse_datetime
from vault.layout.discovery import checked_default

DEMO_VAULT = "demo-vault"


def reindex_args(p: argparse.ArgumentParser, parents: Parents) -> None:
    p.add_argument("--keep", action="store_true", help="update in place, do not rebuild")


def demo_args(p: argparse.ArgumentParser, parents: Parents) -> None:
    # The folder is --vault (default ./demo-vault, never $MEMVAULT_VAULT: that is the
    # person's real vault, and the demo writes sample memories).
    p.add_argument("--no-watch", action="store_true", help="exit after the searches")


def eval_args(ev: argparse.ArgumentParser, parents: Parents) -> None:
    ev.add_argument("what", choices=("retrieval",))
    ev.add_argument("--episodes", required=True, type=Path)
    ev.add_argument("--queries", required=True, type=Path)
    ev.add_argument("--out", required=True, type=Path)
    ev.add_argument("--mode", choices=MODES, default="hybrid")
    ev.add_argument("--top-k", type=int, default=50)
    ev.add_argument("--now", default=None, help="ISO 8601 clock for time decay")
    ev.add_argument("--gate", choices=("on", "off"), default="on", help=GATE_HELP)
    ev.add_argument(
        "--cache",
        type=Path,
        default=Path.home() / ".cache" / "memvault" / "eval-embeddings.sqlite",
        help="embedding cache kept between runs (vectors by model and text hash)",
    )


def cmd_reindex(args: argparse.Namespace) -> int:
    root = vault_cli.resolve_vault(args)
    if not args.keep:
        # Fails (IndexLockedError: unavailable) before deleting anything if another
        # process is the writer.
        Engine.open(root).close()
        shutil.rmtree(index_dir(root), ignore_errors=True)
    with cli_show.problems_said_in_report(), Engine.open(root) as engine:
        assert engine.syncer is not None
        if not getattr(args, "json", False) and sys.stderr.isatty():
            engine.syncer.on_progress = cli_show.progress_bar
        report = engine.reconcile()
    if not getattr(args, "json", False) and sys.stderr.isatty():
        print(file=sys.stderr)
    data = cli_show.report_json(report)
    emit(args, data, cli_show.report_text)
    return FOUND_PROBLEMS if report.errors or report.duplicates else 0


def cmd_status(args: argparse.Namespace) -> int:
    """Exit 1 when a file has a problem or git keeps failing, like `check` (README)."""
    root = vault_cli.resolve_vault(args)
    data = cli_show.status_json(root)
    emit(args, data, cli_show.status_text)
    return FOUND_PROBLEMS if data["problems"] or data["git"] else 0


def cmd_eval(args: argparse.Namespace) -> int:
    for path in (args.episodes, args.queries):
        if not path.is_file():
            raise vault_cli.UsageError(f"{path} does not exist")
    try:
        now = parse_datetime(args.now) if args.now else None
    except ValueError:
        raise vault_cli.UsageError(
            f"--now {args.now!r} is not a time: use ISO 8601, e.g. 2026-03-14T00:00:00Z"
        ) from None
    stats = run_eval(
        args.episodes,
        args.queries,
        args.out,
        mode=args.mode,
        top_k=args.top_k,
        now=now,
        cache_path=args.cache,
        gate=args.gate == "on",
    )
    data = {
        "episodes": stats.episodes,
        "queries": stats.queries,
        "index_seconds": round(stats.index_seconds, 2),
        "query_ms": round(1000 * stats.query_seconds / max(1, stats.queries), 2),
        "out": str(args.out),
    }
    return emit(args, data, lambda d: json.dumps(d))


def cmd_demo(args: argparse.Namespace) -> int:
    from indexer.cli.demo import run_demo

    given = getattr(args, "vault", None)
    # The default folder follows the rule of every vault MemVault picks by itself.
    raw = given or str(checked_default(Path(DEMO_VAULT), f"the demo's default ./{DEMO_VAULT}"))
    root = vault_cli.checked_root(raw, must_exist=False)
    return run_demo(root, watch=not args.no_watch, as_json=getattr(args, "json", False))


def layer() -> Layer:
    Spec = CommandSpec
    return Layer(
        "indexer",
        (
            remember_cmd.SPEC,
            search_cmd.SPEC,
            Spec("reindex", "rebuild the indexes from files", cmd_reindex, reindex_args),
            Spec(
                "watch",
                "keep the indexes in sync until Ctrl-C",
                cmd_watch,
                watch_args,
                description="Be the vault's index writer: sync the indexes with the files "
                "once, then with every change (a hand edit, a new file, a git pull) until "
                "Ctrl-C or SIGTERM, which exit 0. Another process writing the index already "
                "is exit 4, naming it.",
            ),
            Spec(
                "status",
                "index health and problems",
                cmd_status,
                read_only=True,
                description="Report the vault's health, changing nothing: its memory files "
                "and those with problems (path:line: problem), the index (chunks, embedding, "
                "changes not indexed yet), the index writer and git. Exits 1 when a file "
                "has a problem or git commits keep failing.",
            ),
            Spec(
                "consolidate",
                "fold old memories of a chat into one summary",
                cmd_consolidate,
                consolidate_args,
                commits=True,
            ),
            Spec("candidates", "review proposed memories", cmd_candidates, candidates_args),
            Spec("demo", "try MemVault on a sample chat, then search it", cmd_demo, demo_args),
            Spec("eval", "evaluate retrieval on a benchmark", cmd_eval, eval_args),
        ),
        after=remember_cmd.follow_index,
    )
