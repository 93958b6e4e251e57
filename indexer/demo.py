"""`memvault demo`: the main job on embedded defaults.

Builds a bilingual demo vault through the real operations, indexes it with the embedded
model, runs a few searches (same-language, cross-language, by name), then keeps watching:
edit a file in the vault and search again (type queries here, or run `memvault search`
from another terminal, which reads the index this process keeps up to date).
"""

from __future__ import annotations

import contextlib
import json
import signal
import sys
import threading
from pathlib import Path

from indexer.cli_show import result_item, results_text
from indexer.engine import Engine
from vault.check import check_vault
from vault.demo import GROUP, build_demo
from vault.operations import Vault

QUERIES = (
    "When is Alice going to Beijing?",
    "谁对花生过敏？",
    "book club meeting time",
    "who is speaking in Shanghai",
)


def run_demo(root: Path, *, watch: bool = True, as_json: bool = False) -> int:
    fresh = not (root / "bots").exists()
    vault = build_demo(root) if fresh else Vault(root)
    with Engine.open(root) as engine:
        engine.attach(vault)
        report = engine.reconcile()
        answers = {
            query: [result_item(root, r, False) for r in engine.search(query, GROUP, top_k=3)]
            for query in QUERIES
        }
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
        _interact(engine, root)
    return 0


def _interact(engine: Engine, root: Path) -> None:
    episodes = engine.root / "bots" / "demo-bot" / "sessions" / "group_10001" / "episodes"
    print(f"\nwatching {root}: edit or add a .md file under {episodes}, then search again.")
    print(f"(to browse it instead, stop this and run: memvault console --vault {root})")
    if not sys.stdin.isatty():
        print("(no terminal: watching until stopped, Ctrl-C or SIGTERM)")
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        with contextlib.suppress(KeyboardInterrupt):
            stop.wait()
        return
    try:
        while True:
            query = input("search> ").strip()
            if not query:
                break
            items = [result_item(root, r, True) for r in engine.search(query, GROUP, top_k=5)]
            print(results_text(items, True))
    except (EOFError, KeyboardInterrupt):
        print()
