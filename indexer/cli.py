"""The `memvault` console script: vault commands plus search, reindex, watch, status, eval."""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from indexer import cli_show
from indexer.backend import IndexLockedError
from indexer.engine import Engine
from indexer.evaluate import run_eval
from indexer.manifest import index_dir
from indexer.search import MODES
from indexer.supersede import is_correction, supersede_on_correction
from vault import cli as vault_cli
from vault.cli_output import emit
from vault.model import STATUSES
from vault.yamlio import parse_datetime


def add_index_commands(sub: Any, common: argparse.ArgumentParser) -> None:
    search = sub.add_parser("search", parents=[common], help="hybrid search inside one chat")
    search.add_argument("query")
    search.add_argument("--bot", default=None)
    search.add_argument("--session", required=True)
    search.add_argument("--isolation", choices=("session", "bot"), default="session")
    search.add_argument("--speaker", default="", help="current speaker id (ranked higher)")
    search.add_argument("--top-k", type=int, default=5)
    search.add_argument("--mode", choices=MODES, default="hybrid")
    search.add_argument("--status", choices=(*STATUSES, "all"), default="active")
    search.add_argument("--profiles", action="store_true", help="also search profiles")
    search.add_argument("--explain", action="store_true", help="show every score component")
    search.add_argument("--no-decay", action="store_true", help="ignore age when ranking")

    reindex = sub.add_parser("reindex", parents=[common], help="rebuild the indexes from files")
    reindex.add_argument("--keep", action="store_true", help="update in place, do not rebuild")
    sub.add_parser("watch", parents=[common], help="keep the indexes in sync until Ctrl-C")
    sub.add_parser("status", parents=[common], help="index health and problems")

    demo = sub.add_parser("demo", parents=[common], help="the main job on embedded defaults")
    demo.add_argument("--path", default=None, help="where (default ./demo-vault)")
    demo.add_argument("--no-watch", action="store_true", help="exit after the searches")

    ev = sub.add_parser("eval", parents=[common], help="evaluate retrieval on a benchmark")
    ev.add_argument("what", choices=("retrieval",))
    ev.add_argument("--episodes", required=True, type=Path)
    ev.add_argument("--queries", required=True, type=Path)
    ev.add_argument("--out", required=True, type=Path)
    ev.add_argument("--mode", choices=MODES, default="hybrid")
    ev.add_argument("--top-k", type=int, default=50)
    ev.add_argument("--now", default=None, help="ISO 8601 clock for time decay")
    ev.add_argument(
        "--cache",
        type=Path,
        default=Path.home() / ".cache" / "memvault" / "eval-embeddings.sqlite",
        help="embedding cache kept between runs (vectors by model and text hash)",
    )


def open_engine(args: argparse.Namespace, *, writer: bool = True) -> tuple[Engine, bool]:
    """(engine, is_writer): a writer when no other process writes; else read-only."""
    root = vault_cli.resolve_vault(args)
    if writer:
        try:
            return Engine.open(root), True
        except IndexLockedError:
            pass
    return Engine.open(root, writer=False), False


def cmd_search(args: argparse.Namespace) -> int:
    if args.top_k < 1:
        raise vault_cli.UsageError("--top-k must be 1 or more")
    engine, writer = open_engine(args)
    with engine:
        if writer:  # nobody keeps the index in sync for us: catch up with the files first
            engine.reconcile()
        statuses = STATUSES if args.status == "all" else (args.status,)
        results = engine.search(
            args.query,
            vault_cli.scope_of(args),
            top_k=args.top_k,
            mode=args.mode,
            speaker_id=args.speaker,
            statuses=tuple(statuses),
            include_profiles=args.profiles,
            decay=not args.no_decay,
        )
        items = [cli_show.result_item(engine.root, r, args.explain) for r in results]
    return emit(args, items, lambda data: cli_show.results_text(data, args.explain))


def cmd_remember(args: argparse.Namespace) -> int:
    """remember, then (for a correction) supersede near-duplicates; the index follows."""
    vault = vault_cli.open_vault(args)
    episode = vault_cli.remember_from_args(args, vault)
    superseded: list[str] = []
    if is_correction(episode):
        engine, writer = open_engine(args)
        with engine:
            if writer:
                engine.attach(vault)
                engine.reconcile()
            superseded = supersede_on_correction(engine, vault, vault_cli.scope_of(args), episode)
    data = {"id": episode.id, "superseded": superseded}
    lines = [episode.id, *(f"superseded {old}" for old in superseded)]
    return emit(args, data, lambda _: "\n".join(lines))


def cmd_reindex(args: argparse.Namespace) -> int:
    root = vault_cli.resolve_vault(args)
    if not args.keep:
        try:  # fail before deleting anything if another process is the writer
            Engine.open(root).close()
        except IndexLockedError as exc:
            raise vault_cli.UsageError(str(exc)) from exc
        shutil.rmtree(index_dir(root), ignore_errors=True)
    with Engine.open(root) as engine:
        assert engine.syncer is not None
        if not getattr(args, "json", False) and sys.stderr.isatty():
            engine.syncer.on_progress = cli_show.progress_bar
        report = engine.reconcile()
    if not getattr(args, "json", False) and sys.stderr.isatty():
        print(file=sys.stderr)
    data = cli_show.report_json(report)
    emit(args, data, cli_show.report_text)
    return 1 if report.errors or report.duplicates else 0


def cmd_watch(args: argparse.Namespace) -> int:
    root = vault_cli.resolve_vault(args)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with Engine.open(root) as engine:
        watcher = engine.watch()
        watcher.ready.wait()
        report = watcher.last_report
        print(f"watching {root} (Ctrl-C to stop)", file=sys.stderr)
        if report is not None:
            print(cli_show.report_text(cli_show.report_json(report)), file=sys.stderr)
        with contextlib.suppress(KeyboardInterrupt):
            stop.wait()
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    root = vault_cli.resolve_vault(args)
    data = cli_show.status_json(root)
    emit(args, data, cli_show.status_text)
    return 1 if data["problems"] or data["git"] else 0


def cmd_eval(args: argparse.Namespace) -> int:
    for path in (args.episodes, args.queries):
        if not path.is_file():
            raise vault_cli.UsageError(f"{path} does not exist")
    now = parse_datetime(args.now) if args.now else None
    stats = run_eval(
        args.episodes,
        args.queries,
        args.out,
        mode=args.mode,
        top_k=args.top_k,
        now=now,
        cache_path=args.cache,
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
    from indexer.demo import run_demo

    root = Path(args.path or "demo-vault").resolve()
    return run_demo(root, watch=not args.no_watch, as_json=getattr(args, "json", False))


INDEX_COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "remember": cmd_remember,
    "search": cmd_search,
    "reindex": cmd_reindex,
    "watch": cmd_watch,
    "status": cmd_status,
    "eval": cmd_eval,
    "demo": cmd_demo,
}


def main(argv: Sequence[str] | None = None) -> int:
    return vault_cli.main(argv, extra=(add_index_commands, INDEX_COMMANDS))
