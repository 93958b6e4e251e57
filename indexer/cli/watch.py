"""`memvault watch`: keep the indexes in sync until Ctrl-C, and say what each sync did.

A person who leaves `watch` running in a terminal sees every hand edit, new file, deletion
or `git revert` it indexes: one line per applied batch on stderr, with the problems of the
files it changed (`path:line: message`, as `check` prints them); a batch that changed
nothing prints nothing. With --json the same batches go to stdout as JSON Lines (one
object per batch, the first being the start-up sync) and stderr only says it is watching.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import threading
from typing import Any

from indexer.cli import show as cli_show
from indexer.cli.writer_server import WriterServer
from indexer.engine import Engine
from indexer.sync.report import SyncReport
from vault.cli import common as vault_cli
from vault.cli.parser import Parents

SHOWN_PATHS = 3  # paths named per batch line; the count says how many more
WATCH_EPILOG = (
    "Output: after the first sync (its summary), one line per applied batch on stderr, "
    "e.g. `indexed 2 change(s) in 0.05 s (1 added, 1 updated): bots/b1/.../a.md, ...`, "
    "followed by the problems of the files it changed as `path:line: message`; a batch that "
    "changed nothing prints nothing. --json: each batch (the first sync included) is one "
    "JSON object per line on stdout (the `reindex --json` fields plus `paths`), and stderr "
    "only says `watching ...`."
)


def watch_args(p: argparse.ArgumentParser, parents: Parents) -> None:
    p.epilog = WATCH_EPILOG


def cmd_watch(args: argparse.Namespace) -> int:
    root = vault_cli.resolve_vault(args)
    as_json = bool(getattr(args, "json", False))
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    first = threading.Event()  # the start-up sync was reported

    def on_batch(report: SyncReport, seconds: float) -> None:
        # Called on the watcher's one sync thread, in order: the first call is the start-up
        # reconcile (the watcher gets this callback before it starts).
        if as_json and (report.changed or not first.is_set()):
            print(json.dumps(batch_json(report), ensure_ascii=False), flush=True)
        if not first.is_set():
            print(f"watching {root} (Ctrl-C to stop)", file=sys.stderr, flush=True)
            if not as_json:
                text = cli_show.report_text(cli_show.report_json(report))
                print(text, file=sys.stderr, flush=True)
            first.set()
            return
        line = "" if as_json else batch_text(report, seconds)
        if line:
            print(line, file=sys.stderr, flush=True)

    # The batch line lists the problems of the files it changed: said once.
    with cli_show.problems_said_in_report(), Engine.open(root) as engine:
        engine.watch(on_batch)
        # A `memvault search` or `remember` in another shell asks this process (it holds the
        # model and the indexes) instead of loading its own: indexer.cli.writer_link.
        with WriterServer(engine), contextlib.suppress(KeyboardInterrupt):
            stop.wait()
    return 0


def batch_json(report: SyncReport) -> dict[str, Any]:
    return {**cli_show.report_json(report), "paths": list(report.paths)}


def batch_text(report: SyncReport, seconds: float) -> str:
    """`indexed 2 change(s) in 0.05 s (1 added, 1 deleted): a.md, b.md` and the problems of
    the files it changed; "" for a batch that changed nothing (a read, a touch, a resync)."""
    if not report.changed:
        return ""
    counts = {
        "added": report.added,
        "updated": report.updated,
        "renamed": report.renamed,
        "deleted": report.deleted,
    }
    kinds = ", ".join(f"{n} {kind}" for kind, n in counts.items() if n)
    shown = ", ".join(report.paths[:SHOWN_PATHS])
    more = len(report.paths) - SHOWN_PATHS
    shown += f" (+{more} more)" if more > 0 else ""
    changed = set(report.paths)
    problems = [
        f"{p.path}:{p.line}: {p.message}"
        for p in sorted([*report.errors, *report.duplicates], key=lambda p: (p.path, p.line))
        if p.path in changed
    ]
    head = f"indexed {report.changed} change(s) in {seconds:.2f} s ({kinds}): {shown}"
    return "\n".join([head, *problems])
