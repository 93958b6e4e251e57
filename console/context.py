"""What every endpoint works on: the vault, its search engine and the host's settings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from indexer.engine import Engine
from indexer.relevance import DEFAULT_FLOOR
from vault.keys import Isolation
from vault.operations import Vault

Host = Literal["langbot", "standalone"]


@dataclass
class ConsoleContext:
    vault: Vault
    # None when the index could not be opened: reads and writes still work, search does not.
    engine: Engine | None
    isolation: Isolation = "session"
    host: Host = "standalone"
    git_autocommit: bool = True
    warnings: list[str] = field(default_factory=list)
    # The floor /search marks results against: the plugin's relevance_floor inside LangBot,
    # indexer.relevance's default standalone (as `memvault search`).
    floor: float = DEFAULT_FLOOR
