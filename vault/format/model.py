"""Frozen records parsed once at the edge; everything downstream takes these.

The on-disk formats are a public contract (DESIGN.md 4-5): these classes hold exactly what
those files say, with unknown fields kept in ``extra`` so nothing a person wrote is dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from vault.errors import BadInput

STATUSES: tuple[str, ...] = ("active", "archived", "superseded")
CATEGORIES: tuple[str, ...] = (
    "identity",
    "preference",
    "fact",
    "project",
    "skill",
    "mistake",
    "context",
    "note",
    "event",
    "plan",
)
# "consolidation": a summary episode written by `consolidate run` (indexer.jobs.consolidate).
SOURCES: tuple[str, ...] = ("agent", "user", "console", "import", "candidate", "consolidation")
CORRECTION_TAGS: frozenset[str] = frozenset({"correction", "fact-update", "clarification"})
# Synapse's priorities, lowest first. `critical` = injected into every turn of the chat (within
# the budget), so only an explicit `priority: critical` line may ask for it.
PRIORITIES: tuple[str, ...] = ("low", "normal", "high", "critical")
DEFAULT_PRIORITY = "normal"

DEFAULT_IMPORTANCE = 2
# A file without a `source:` line was written by a person, not by MemVault (which always
# writes one), so it is trusted like a user statement.
DEFAULT_SOURCE = "user"
PROFILE_MAX_TRAITS = 20
PROFILE_MAX_PREFERENCES = 10
PROFILE_MAX_NOTES = 2000
PROFILE_MAX_HISTORY = 20
# Bounds of LongTermMemory's max_profile_traits / max_profile_preferences settings: at least
# one item (0 would make every add fail), at most 100 (every item is injected into each prompt).
PROFILE_LIMIT_BOUNDS = (1, 100)


@dataclass(frozen=True)
class ProfileLimits:
    """How many traits and preferences one profile may hold (upstream's max_profile_traits /
    max_profile_preferences). The plugin passes its settings; the CLI and console keep these
    defaults."""

    traits: int = PROFILE_MAX_TRAITS
    preferences: int = PROFILE_MAX_PREFERENCES

    def __post_init__(self) -> None:
        low, high = PROFILE_LIMIT_BOUNDS
        for name, value in (("traits", self.traits), ("preferences", self.preferences)):
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ValueError(
                    f"max_profile_{name} must be a whole number from {low} to {high} "
                    f"(got {value!r})"
                )

    def of(self, field: str) -> int:
        return self.traits if field == "traits" else self.preferences


DEFAULT_PROFILE_LIMITS = ProfileLimits()


def default_confidence(source: str) -> float:
    return 1.0 if source == "user" else 0.7


def default_verified(source: str) -> bool:
    return source == "user"


def importance_priority(importance: int) -> str:
    """The priority of a file that states only LongTermMemory's importance 1..5:
    1 -> low, 2-3 -> normal, 4-5 -> high; never critical (that must be asked for by name)."""
    if importance <= 1:
        return "low"
    return "normal" if importance <= 3 else "high"


@dataclass(frozen=True)
class Speaker:
    id: str
    name: str | None = None


@dataclass(frozen=True)
class Episode:
    """One L2 memory: a Markdown file with optional YAML front matter."""

    id: str
    created_at: datetime
    body: str
    speaker: Speaker | None = None
    importance: int = DEFAULT_IMPORTANCE
    tags: tuple[str, ...] = ()  # vault.format.tags.normalise_tags: one per case-folded spelling
    status: str = "active"
    key: str | None = None
    category: str | None = None
    source: str = DEFAULT_SOURCE
    verified: bool = True
    confidence: float = 1.0
    expires_at: datetime | None = None
    superseded_by: str | None = None
    priority: str = DEFAULT_PRIORITY
    # When MemVault last changed the file (create, edit, verify, archive, supersede,
    # consolidation); None for a file no MemVault operation has written.
    updated_at: datetime | None = None
    # Unknown front-matter fields in file order, values as YAML gave them (strings,
    # lists, mappings): kept so a rewrite never drops what a person added.
    extra: tuple[tuple[str, Any], ...] = ()

    def is_expired(self, now: datetime) -> bool:
        return self.expires_at is not None and self.expires_at <= now


@dataclass(frozen=True)
class HistoryEntry:
    """An earlier value of a profile slot (`key: value` item), newest first in the file."""

    key: str
    value: str
    until: datetime
    reason: str = ""


@dataclass(frozen=True)
class Profile:
    """One L1 profile: a session's `profile.yaml` or a speaker's `speakers/<id>.yaml`."""

    name: str | None = None
    traits: tuple[str, ...] = ()
    preferences: tuple[str, ...] = ()
    notes: str | None = None
    updated_at: datetime | None = None
    history: tuple[HistoryEntry, ...] = ()
    extra: tuple[tuple[str, Any], ...] = field(default=())

    def is_empty(self) -> bool:
        return not (self.name or self.traits or self.preferences or self.notes)


@dataclass(frozen=True)
class Problem:
    """A reason a file could not be used, pointing at the line a person should fix."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"

    def as_json(self) -> dict[str, object]:
        """The one JSON shape of a problem (`check`, `status`, `reindex`, the console)."""
        return {"path": self.path, "line": self.line, "message": self.message}


class FormatError(BadInput, ValueError):
    """A file does not follow DESIGN.md 4-5; ``line`` is 1-based within the file."""

    def __init__(self, message: str, line: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
