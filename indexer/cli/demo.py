"""`memvault demo`: try MemVault on a sample chat, no setup needed.

Builds a bilingual demo vault through the real operations, indexes it with the embedded
model, runs a few searches (same-language, cross-language, by name), then keeps watching:
edit a file in the vault and search again (type queries here, or run `memvault search`
from another terminal, which reads the index this process keeps up to date). Queries piped
in (`printf 'book club\\n' | memvault demo`) are answered like typed ones; with no input at
all (a service, `< /dev/null`) it only watches, until stopped.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import signal
import sys
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from indexer.cli.show import result_item, results_text
from indexer.cli.writer_server import WriterServer
from indexer.engine import Engine
from indexer.retrieval.search_query import SearchQuery
from vault.health.check import check_vault
from vault.writes.demo import GROUP, build_demo
from vault.writes.operations import Vault

QUERIES = (
    "When is Alice going to Beijing?",
    "谁对花生过敏？",
    "book club meeting time",
    "who is speaking in Shanghai",
)
PROMPT = "search> "
# A query starting with this prints how each score and relevance came to be.
EXPLAIN_PREFIX = "?"


def run_demo(root: Path, *, watch: bool = True, as_json: bool = False) -> int:
    fresh = not (root / "bots").exists()
    vault = build_demo(root) if fresh else Vault(root)
    with Engine.open(root) as engine:
        engine.attach(vault)
        report = engine.reconcile()
        answers = {query: _items(engine, root, query, 3, not as_json) for query in QUERIES}
        check = check_vault(root)
        if as_json:
            print(json.dumps({
                "vault": str(root),
                "files": report.files,
                "check_ok": check.ok,
                "embedding": engine.embedder.identity.key,
                "searches": answers,
            }, ensure_ascii=False, indent=2))  # fmt: skip
        else:
            print(f"demo vault at {root} ({'created' if fresh else 'reused'}); "
                  f"{report.files} files indexed with {engine.embedder.identity.key}")  # fmt: skip
            for query, items in answers.items():
                print(f"\n> {query}\n{results_text(items, False)}")
        if not watch:
            return 0 if check.ok else 1
        engine.watch()
        with WriterServer(engine):  # `memvault search` from another terminal asks us
            _interact(engine, root)
    return 0


def _items(
    engine: Engine, root: Path, query: str, top_k: int, explain: bool
) -> list[dict[str, Any]]:
    # Text output takes explain: its lines print the unrounded absolute relevance from it.
    return [
        result_item(root, r, explain)
        for r in engine.search(SearchQuery(query, GROUP, top_k=top_k, gate=True))
    ]


def _answer(engine: Engine, root: Path, line: str) -> None:
    """One query as typed at the prompt: compact lines, the breakdown after a leading `?`."""
    query = line.strip()
    explain = query.startswith(EXPLAIN_PREFIX)
    query = query.removeprefix(EXPLAIN_PREFIX).strip()
    if not query:
        print(f"type a query after {EXPLAIN_PREFIX}, e.g. {EXPLAIN_PREFIX}book club")
        return
    print(results_text(_items(engine, root, query, 5, True), explain))


def _interact(engine: Engine, root: Path) -> None:
    episodes = engine.root / "bots" / "demo-bot" / "sessions" / "group_10001" / "episodes"
    print(f"\nwatching {root}: edit or add a .md file under {episodes}, then search again.")
    print(f"(to browse it instead, stop this and run: memvault console --vault {root})")
    # SIGTERM (a service manager, `kill`) stops it as Ctrl-C does: the engine closes cleanly.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    stdin = sys.stdin
    with contextlib.suppress(KeyboardInterrupt):
        if stdin is not None and stdin.isatty():
            _prompt(engine, root)
            return
        # Piped queries are answered one a line; a first read that gets nothing (end of
        # input at once: `< /dev/null`, a service) means nobody types here: just watch.
        if isinstance(stdin, io.TextIOWrapper):  # undecodable bytes: replaced, not a crash
            stdin.reconfigure(errors="replace")
        first = stdin.readline() if stdin is not None else ""
        if not first:
            print("(no terminal, no input: watching until stopped, Ctrl-C or SIGTERM)", flush=True)
            threading.Event().wait()
            return
        print(_hint("one query a line from standard input"))
        _piped(engine, root, itertools.chain([first], stdin))


def _hint(source: str) -> str:
    return (
        f"({source}; start it with {EXPLAIN_PREFIX} for the score breakdown, "
        f"e.g. {EXPLAIN_PREFIX}book club; an empty line quits)"
    )


def _piped(engine: Engine, root: Path, lines: Iterable[str]) -> None:
    for line in lines:
        if not line.strip():
            return
        print(f"{PROMPT}{line.strip()}")  # the transcript reads as if typed at the prompt
        _answer(engine, root, line)
        sys.stdout.flush()  # a program feeding queries one by one sees each answer at once


def _prompt(engine: Engine, root: Path) -> None:
    print(_hint(f"type a query at {PROMPT.strip()}"))
    try:
        while True:
            line = input(PROMPT)
            if not line.strip():
                break
            _answer(engine, root, line)
    except (EOFError, KeyboardInterrupt):
        print()  # end the prompt's line
