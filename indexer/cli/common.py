"""What the index commands share: the engine of the command line's vault, as the writer
when no other process writes the index, else read-only.

The command modules import this one; it imports none of them (indexer.cli.commands
assembles the layer).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from indexer.backends.backend import IndexLockedError, IndexMismatchError
from indexer.cli.catch_up import behind
from indexer.engine import Engine
from indexer.sync.manifest import MANIFEST_NAME, index_dir
from vault.cli.common import resolve_vault


def open_engine(args: argparse.Namespace, *, writer: bool = True) -> tuple[Engine, bool]:
    """(engine, is_writer): a writer when no other process writes; else read-only. A writer
    here is one for a moment (indexer.cli.catch_up): it never starts a vector rebuild, which
    its close would wait for; `reindex` and `watch` do."""
    root = resolve_vault(args)
    if writer:
        try:
            return Engine.open(root, rebuild=False), True
        except IndexLockedError:
            pass
    return Engine.open(root, writer=False), False


def open_reader(root: Path) -> Engine | None:
    """The engine opened read-only when the index has nothing to catch up (a search then
    writes nothing: indexer.cli.catch_up.behind), else None: open_engine as writer then.
    None too with no index yet, or one of another model this process cannot read."""
    if not (index_dir(root) / MANIFEST_NAME).is_file():
        return None
    try:
        engine = Engine.open(root, writer=False)
    except IndexMismatchError:
        return None
    if behind(engine):
        engine.close()
        return None
    return engine
