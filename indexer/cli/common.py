"""What the index commands share: the engine of the command line's vault, as the writer
when no other process writes the index, else read-only.

The command modules import this one; it imports none of them (indexer.cli.commands
assembles the layer).
"""

from __future__ import annotations

import argparse

from indexer.backends.backend import IndexLockedError
from indexer.engine import Engine
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
