"""Which imported items a chat holds already, so a second import of a file adds nothing
(vault.transfer.exchange plans each import with `Present`)."""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass, field

from vault.format.model import Episode
from vault.format.yamlio import format_datetime
from vault.layout.keys import ScopeId
from vault.layout.store import StoredEpisode
from vault.transfer.item_origin import IMPORTED_FROM
from vault.transfer.transfer_items import ImportItem

# --------------------------------------------------------------------------- identity
# Which imported items a chat holds already, so a second import of a file adds nothing.
#
# The rule (README, "Export and import keep everything"):
#
# - An item with an `id` is already present when this chat has a memory with that id and
#   either the same text or the same speaker and created_at (the text was edited since: a
#   person's edit is never overwritten, and never duplicated either).
# - Every item also has an identity: a hash of the chat, its `id` (if any), its speaker id,
#   its created_at as the item states it (none if it states none) and its text as stored
#   (redacted). An item that cannot keep its own id (it has none, or this chat uses it for
#   another memory) is written under an id made of that hash, `ep_YYYYMMDD_` + 12 hex
#   digits, so the next import of the same item finds that id, even after a person edited
#   the memory's text or status. The id is the record: no other file remembers imports.
# - An item from outside MemVault (it gets `imported_from`: vault.transfer.item_origin) is
#   already present when a memory of this chat was imported from the same original id,
#   whatever was edited since and whatever id it got here. The rule a migration from
#   LongTermMemory relies on; a MemVault export's ids are this vault's own, not origins.
# - An item without an `id` is also already present when a memory of this chat has the same
#   speaker and text (and the same created_at, if the item states one): a memory an earlier
#   MemVault imported under a random id, or one remembered by hand.
#
# Items are compared with what the chat held before the import, never with each other: a
# file's items are all written (two alike get two ids), and a second import finds each.

_DERIVED = re.compile(r"ep_\d{8}_([0-9a-f]{12})")


def identity(scope: ScopeId, item: ImportItem) -> str:
    """12 hex digits of the item's identity (48 bits: no two of a chat's items meet)."""
    episode = item.episode
    parts = (
        scope.index_key,
        item.old_id,
        episode.speaker.id if episode.speaker else "",
        format_datetime(episode.created_at) if item.dated else "",
        episode.body,
    )
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:12]


def _speaker(episode: Episode) -> str:
    return episode.speaker.id if episode.speaker else ""


@dataclass
class Present:
    """What the target chat holds, grown by each item the import writes."""

    scope: ScopeId
    by_id: dict[str, Episode] = field(default_factory=dict)
    taken: set[str] = field(default_factory=set)  # ids written by this import
    derived: set[str] = field(default_factory=set)
    said: set[tuple[str, str]] = field(default_factory=set)  # (speaker, text)
    dated: set[tuple[str, str, str]] = field(default_factory=set)  # (speaker, when, text)
    origins: dict[str, str] = field(default_factory=dict)  # imported_from -> the id here

    @classmethod
    def of(cls, scope: ScopeId, stored: list[StoredEpisode]) -> Present:
        present = cls(scope)
        for s in stored:
            present.add(s.episode.id, s.episode)
        return present

    def add(self, episode_id: str, episode: Episode) -> None:
        self.by_id[episode_id] = episode
        if match := _DERIVED.fullmatch(episode_id):
            self.derived.add(match.group(1))
        who = _speaker(episode)
        self.said.add((who, episode.body))
        self.dated.add((who, format_datetime(episode.created_at), episode.body))
        origin = dict(episode.extra).get(IMPORTED_FROM)
        if isinstance(origin, str) and origin:
            self.origins.setdefault(origin, episode_id)

    def claim(self, episode_id: str) -> None:
        """An id this import writes: taken, but not a memory later items are compared to."""
        self.taken.add(episode_id)

    def _used(self, episode_id: str) -> bool:
        return episode_id in self.by_id or episode_id in self.taken

    def holds(self, item: ImportItem) -> bool:
        new = item.episode
        origin = dict(new.extra).get(IMPORTED_FROM)  # the item's own word for its origin
        if isinstance(origin, str) and origin in self.origins:
            return True
        old = self.by_id.get(item.old_id) if item.old_id else None
        if old is not None and (
            old.body == new.body
            or (old.created_at == new.created_at and _speaker(old) == _speaker(new))
        ):
            return True
        if identity(self.scope, item) in self.derived:
            return True
        if item.old_id:
            return False
        who = _speaker(new)
        if item.dated:
            return (who, format_datetime(new.created_at), new.body) in self.dated
        return (who, new.body) in self.said

    def new_id(self, item: ImportItem, valid: bool) -> str:
        """The item's own id when valid and free here, else its derived one (a random one
        only if even that is taken, which takes two items 48 bits alike)."""
        if item.old_id and valid and not self._used(item.old_id):
            return item.old_id
        stamp = f"ep_{item.episode.created_at:%Y%m%d}_"
        chosen = stamp + identity(self.scope, item)
        while self._used(chosen):
            chosen = stamp + secrets.token_hex(3)
        return chosen
