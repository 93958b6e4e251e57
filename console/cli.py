"""The console layer's `memvault` command: `memvault console` (memvault_cli assembles it
with the vault's and the indexer's)."""

from __future__ import annotations

import argparse
import contextlib
import logging
import secrets
import signal
import sys
import threading

from console.context import ConsoleContext
from console.server import LOOPBACK, ConsoleServer
from indexer.backends.backend import IndexLockedError
from indexer.backends.readonly import ReadOnlyIndexError
from indexer.cli.catch_up import ProgressLines
from indexer.cli.writer_server import WriterServer
from indexer.engine import Engine
from vault.cli import common as vault_cli
from vault.cli.common import UsageError
from vault.cli.parser import CommandSpec, Layer, Parents
from vault.layout.keys import ISOLATIONS
from vault.writes.operations import Vault

log = logging.getLogger(__name__)


def console_args(con: argparse.ArgumentParser, parents: Parents) -> None:
    con.add_argument("--port", type=int, default=8765, help="0 = any free port (printed)")
    con.add_argument("--host", default="127.0.0.1", help="address to bind (default loopback)")
    con.add_argument("--isolation", choices=ISOLATIONS, default="session", help="L2 sharing")
    con.add_argument("--no-auth", action="store_true", help="no token (loopback only)")


def open_context(args: argparse.Namespace) -> ConsoleContext:
    root = vault_cli.resolve_vault(args)
    vault = Vault(root, git=not getattr(args, "no_git", False))
    warnings: list[str] = []
    try:
        engine = Engine.open(root)
        engine.attach(vault)
        assert engine.syncer is not None  # opened as the writer
        # A catch-up of thousands of files takes minutes: say how far it got.
        engine.syncer.on_progress = ProgressLines(sys.stderr)
        watcher = engine.watch()
        # Serve only once the start-up reconcile is done: before it, search would answer
        # "nothing found" for memories that are on disk.
        print(f"indexing {root} ...", file=sys.stderr, flush=True)
        while not watcher.ready.wait(1.0):
            if watcher.failures >= 3:
                warnings.append("the start-up sync keeps failing: search may miss files")
                break
        engine.syncer.on_progress = None  # later syncs are the watcher's few files each
    except ReadOnlyIndexError as exc:
        # Nobody here can write the vault: search the index as built, edits fail in words.
        engine = Engine.open(root, writer=False)
        warnings.append(str(exc))
    except IndexLockedError:
        # Another process (memvault watch, the plugin) writes the index and indexes our
        # writes through its watcher; we only read it.
        engine = Engine.open(root, writer=False)
        warnings.append("another process writes the index: edits show in search once it syncs")
    return ConsoleContext(
        vault=vault,
        engine=engine,
        isolation=args.isolation,
        host="standalone",
        git_autocommit=not getattr(args, "no_git", False),
        warnings=warnings,
    )


def cmd_console(args: argparse.Namespace) -> int:
    if args.no_auth and args.host not in LOOPBACK:
        raise UsageError("--no-auth is only allowed on 127.0.0.1: anyone could edit the vault")
    if not 0 <= args.port <= 65535:
        raise UsageError("--port must be from 0 to 65535 (0 = any free port)")
    ctx = open_context(args)
    token = None if args.no_auth else secrets.token_urlsafe(24)
    try:
        server = ConsoleServer(ctx, host=args.host, port=args.port, token=token)
    except OSError as exc:
        if ctx.engine is not None:
            ctx.engine.close()
        raise UsageError(f"cannot listen on {args.host}:{args.port} ({exc}): try --port 0") from exc
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    thread = threading.Thread(target=server.serve_forever, name="memvault-console", daemon=True)
    thread.start()
    # The index writer answers `memvault search` / `remember` from a shell (writer_link).
    link = WriterServer(ctx.engine) if ctx.engine and ctx.engine.syncer else None
    try:
        if link is not None:
            # Before the address is printed: starting warms the model (seconds on a busy box
            # when its prepared copy is built first), and a stop asked for after the address
            # was shown must not wait behind it.
            link.start()
        print(f"MemVault console for {ctx.vault.root}: {server.url}", flush=True)
        print("open that address in a browser; Ctrl-C stops", file=sys.stderr, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            stop.wait()
    finally:
        if link is not None:
            link.stop()
        server.shutdown()
        if ctx.engine is not None:
            ctx.engine.close()
    return 0


def layer() -> Layer:
    spec = CommandSpec(
        "console", "the Memory Console in a browser", cmd_console, console_args, commits=True
    )
    return Layer("console", (spec,))
