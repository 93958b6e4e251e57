"""What an operation of vault.writes.operations returns besides the episode itself."""

from __future__ import annotations

from dataclasses import dataclass

from vault.format.model import Episode
from vault.git.secret_guard import Kept, kept_note
from vault.writes.duplicates import Duplicate


@dataclass(frozen=True)
class Remembered:
    """A remember that checked for a duplicate first (Vault.remember_once): the new episode,
    or, when `duplicate` is set, the memory that already said it (nothing was written)."""

    episode: Episode
    duplicate: Duplicate | None = None

    @property
    def stored(self) -> bool:
        return self.duplicate is None


@dataclass(frozen=True)
class Forgotten:
    """A forgotten episode; `kept` is the commit that first saved changes git did not hold."""

    episode: Episode
    rel: str
    kept: str | None = None
    # Copies kept outside git (.memvault/forgotten/...) of bytes holding a secret.
    aside: tuple[str, ...] = ()

    def note(self) -> str:
        """Where the bytes git did not hold went (empty: nothing needed keeping)."""
        return kept_note(Kept(self.kept, self.aside))

    @property
    def id(self) -> str:
        return self.episode.id


@dataclass(frozen=True)
class StatusChange:
    """An archive or restore: the episode as it is now, and whether this call changed it
    (False: it had that status already, and nothing was written)."""

    episode: Episode
    changed: bool
    superseded: tuple[str, ...] = ()  # older active memories of its key a restore replaced

    def note(self) -> str:
        """What a reply adds when a restore did not make the memory active
        (vault.writes.lifecycle)."""
        ep = self.episode
        if ep.status == "superseded" and ep.superseded_by:
            return (
                f"{ep.id} stays superseded: the newer memory {ep.superseded_by} replaces it, so "
                "it is kept out of recall; forget that one first to bring this one back"
            )
        if self.superseded:
            return f"it replaces the older {', '.join(self.superseded)} (same key)"
        return ""

    @property
    def id(self) -> str:
        return self.episode.id
