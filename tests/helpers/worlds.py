"""One way for the tests to open a real vault with its real engine attached."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from indexer.engine import Engine
from vault.writes.create import init_vault
from vault.writes.operations import Vault


@contextmanager
def open_world(root: Path) -> Iterator[tuple[Vault, Engine]]:
    """A new vault at `root` (no git) and its engine, writes searchable when they return."""
    init_vault(root, git=False)
    vault = Vault(root, git=False)
    engine = Engine.open(root)
    engine.attach(vault)
    try:
        yield vault, engine
    finally:
        engine.close()
