"""What every endpoint works on: the vault, its search engine and the host's settings."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from indexer.engine import Engine
from indexer.injection.settings import TurnSettings
from indexer.retrieval.relevance import DEFAULT_FLOOR
from vault.layout.keys import Isolation
from vault.writes.operations import Vault

Host = Literal["langbot", "standalone"]


@dataclass(frozen=True)
class Notice:
    """A health line the page shows in the reader's language: `key` names a message of
    console/web/i18n (its `{name}`s filled from `vars`); `text` says the same in English for
    every other reader of the API."""

    level: Literal["OK", "WARN", "ERROR"]
    text: str
    key: str
    vars: dict[str, str] = field(default_factory=dict)


@dataclass
class ConsoleContext:
    vault: Vault
    # None when the index could not be opened: reads and writes still work, search does not.
    engine: Engine | None
    isolation: Isolation = "session"
    host: Host = "standalone"
    git_autocommit: bool = True
    warnings: list[str] = field(default_factory=list)
    # Is the vault where the host keeps it (the LangBot plugin fills it in; None standalone).
    location: Notice | None = None
    # The floor /search marks results against: the plugin's relevance_floor inside LangBot,
    # indexer.retrieval.relevance's default standalone (as `memvault search`).
    floor: float = DEFAULT_FLOOR
    # The message gate /search applies (indexer.gate.rules): the plugin's recall_gate inside
    # LangBot, on standalone (as `memvault search`), so the page shows what injection does.
    gate: bool = True
    # What the recall test's turn reads besides the floor and the gate above (top_k, the
    # budget, key events): the plugin's settings inside LangBot, its defaults standalone.
    turn: TurnSettings = field(default_factory=TurnSettings)
    # /scopes' count of active memories: each episode file's status by (size, mtime_ns),
    # so only files changed since the last count are parsed again.
    statuses: dict[str, tuple[int, int, bool]] = field(default_factory=dict, repr=False)

    def turn_settings(self) -> TurnSettings:
        """The settings a turn of this host injects with: `turn`, with the one floor and
        gate /search uses too."""
        return replace(self.turn, relevance_floor=self.floor, gate=self.gate)
