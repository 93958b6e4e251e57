"""Never store the same thing twice: what a new memory is compared with before it is written.

Exact: the same text once folded (`folded`: Unicode NFKC, so full-width letters and digits
are their ASCII selves; case-folded; every run of white space one space; the closing
punctuation of the sentence left out), among the
memories a write could repeat (`comparable`). It needs no model and no index: `FileDuplicates`
reads the files, so it works wherever the vault does (a vault opened with no index, an index
being rebuilt, a vector store that cannot be reached).

Near: the same thing in other words. A process that holds an index installs
indexer.dedupe.EngineDuplicates on its Vault (Engine.attach): the exact rule from the index's
manifest (no model), then the embedding model's calibrated duplicate line, and only when the
names, numbers and negation of both texts agree (indexer.same_fact).

The memories a write is compared with (`comparable`): active and unexpired ones of the write's
own scope (scope.index_key: its chat, or with isolation bot the bot's shared episodes; never a
KB library, never another chat, so an answer never names another chat's memory); of the same
speaker, or where either has none ("I love jazz" said by two people is two memories); minus
the ones it replaces (`Probe.ignore`: a candidate's `supersedes`, a consolidation's originals).
A correction (a tag of CORRECTION_TAGS) is never a duplicate: restating what it corrects is
its point (indexer.supersede then supersedes those). The near rule also skips the memories of
the write's own `key` (the new one is their update).
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

from vault.format.model import CORRECTION_TAGS, Episode
from vault.format.tags import tag_keys
from vault.layout.keys import ScopeId
from vault.layout.store import StoredEpisode, VaultReader

log = logging.getLogger(__name__)

Match = Literal["exact", "near"]
_SPACE = re.compile(r"\s+")
_CLOSING = re.compile(r"[\s.!?;:,…~。！？；：，、]+$")


def folded(text: str) -> str:
    """The form two texts are compared in: NFKC (width), case-folded, spaces collapsed, the
    sentence's closing punctuation left out ("Bob likes tea." is "bob likes tea")."""
    plain = _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()
    return _CLOSING.sub("", plain)


def is_correction(tags: Iterable[str]) -> bool:
    return bool(set(tag_keys(tags)) & CORRECTION_TAGS)


@dataclass(frozen=True)
class Probe:
    """What a write is about to store, as the check sees it: `body` as it would be stored
    (redacted), `at` the write's clock (an expired memory is not one it repeats)."""

    scope: ScopeId
    body: str
    at: datetime
    speaker: str | None = None
    speaker_name: str | None = None
    key: str | None = None
    ignore: frozenset[str] = frozenset()

    @classmethod
    def of(
        cls, scope: ScopeId, episode: Episode, at: datetime, ignore: Iterable[str] = ()
    ) -> Probe:
        who = episode.speaker
        return cls(
            scope,
            episode.body,
            at,
            who.id if who else None,
            (who.name or who.id) if who else None,
            episode.key,
            frozenset(ignore),
        )


@dataclass(frozen=True)
class Duplicate:
    """The chat's memory that already says what a write was about to store."""

    episode: Episode
    rel: str
    match: Match
    cosine: float | None = None  # near: the embedding model's cosine of the two

    @property
    def id(self) -> str:
        return self.episode.id

    def said(self) -> str:
        """The answer every write path gives (the CLI, the console, the tool, the command)."""
        how = "" if self.cosine is None else f", cosine {self.cosine:.2f}"
        return f"already remembered as {self.episode.id} ({self.match}{how})"

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.episode.id,
            "match": self.match,
            "cosine": None if self.cosine is None else round(self.cosine, 4),
            "content": self.episode.body,
            "path": self.rel,
        }


class KnownTexts:
    """A scope's episodes by folded text, read once for many probes (an import compares
    every item with the chat as it was before)."""

    def __init__(self, chat: Iterable[StoredEpisode]) -> None:
        self.by_text: dict[str, list[StoredEpisode]] = {}
        for stored in chat:  # newest first (load_episodes): the first match is the newest
            self.by_text.setdefault(folded(stored.episode.body), []).append(stored)

    def exact(self, probe: Probe) -> Duplicate | None:
        for stored in self.by_text.get(folded(probe.body), ()):
            if comparable(stored.episode, probe):
                return Duplicate(stored.episode, stored.rel, "exact")
        return None


class DuplicateFinder(Protocol):
    def find(self, probe: Probe, chat: KnownTexts | None = None) -> Duplicate | None:
        """The memory of `probe.scope` that already says it, or None. `chat`: the scope's
        episodes when the caller has read them already (an import), else read here."""


def comparable(episode: Episode, probe: Probe) -> bool:
    """Whether `episode` is one `probe` could repeat (module docstring)."""
    if episode.status != "active" or episode.id in probe.ignore:
        return False
    if episode.expires_at is not None and episode.expires_at <= probe.at:
        return False
    who = episode.speaker.id if episode.speaker else None
    return who is None or probe.speaker is None or who == probe.speaker


class FileDuplicates:
    """The exact rule over the scope's files (no index, no model): the finder of a Vault no
    index is attached to. Reads the whole scope, like `memvault list`."""

    def __init__(self, reader: VaultReader) -> None:
        self.reader = reader

    def find(self, probe: Probe, chat: KnownTexts | None = None) -> Duplicate | None:
        known = chat if chat is not None else KnownTexts(self.reader.load_episodes(probe.scope)[0])
        return known.exact(probe)
