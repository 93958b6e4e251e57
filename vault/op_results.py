"""What an operation of vault.operations returns besides the episode itself."""

from __future__ import annotations

from dataclasses import dataclass

from vault.model import Episode


@dataclass(frozen=True)
class Forgotten:
    """A forgotten episode; `kept` is the commit that first saved changes git did not hold."""

    episode: Episode
    rel: str
    kept: str | None = None

    @property
    def id(self) -> str:
        return self.episode.id


@dataclass(frozen=True)
class StatusChange:
    """An archive or restore: the episode as it is now, and whether this call changed it
    (False: it had that status already, and nothing was written)."""

    episode: Episode
    changed: bool

    @property
    def id(self) -> str:
        return self.episode.id
