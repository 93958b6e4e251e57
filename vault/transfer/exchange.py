"""Export one scope as JSON, and import ours or LongTermMemory's export shape.

The export is a superset of both LongTermMemory exports (`profiles` like `!memory export`,
`episodes` like `!memory export l2`), so one file moves a chat's memory either way.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from vault.errors import BadRequestError
from vault.format.model import STATUSES, Episode, FormatError, Problem, Profile
from vault.format.yamlio import format_datetime
from vault.layout.keys import ScopeId
from vault.layout.store import StoredEpisode, check_episode_id
from vault.layout.views import episode_export, iso, profile_json
from vault.transfer.transfer_items import ImportItem, parse_item
from vault.transfer.transfer_profiles import parse_profiles, write_profiles
from vault.writes import lifecycle
from vault.writes.duplicates import KnownTexts
from vault.writes.episode_create import create_episode_file
from vault.writes.operations import Vault

EXPORT_VERSION = 1


def export_scope(vault: Vault, scope: ScopeId) -> dict[str, Any]:
    """The scope's memory as one JSON object. A file that cannot be read (a person's broken
    edit) is left out and named under `unreadable` with its line: an export is a backup, so
    it must say what it does not hold instead of failing whole or dropping it silently."""
    episodes, unreadable = vault.load_episodes(scope)
    profiles: list[dict[str, Any]] = []
    for speaker in (None, *vault.list_speakers(scope)):
        try:
            prof = vault.read_profile(scope, speaker)
        except FormatError as exc:
            rel = vault.layout.rel(vault.profile_path(scope, speaker))
            unreadable.append(Problem(rel, exc.line, exc.message))
            continue
        except (OSError, UnicodeDecodeError) as exc:
            rel = vault.layout.rel(vault.profile_path(scope, speaker))
            unreadable.append(Problem(rel, 1, f"cannot read file: {exc}"))
            continue
        if prof == Profile():  # one holding anything is exported (also only unknown fields)
            continue
        entry: dict[str, Any] = {"type": "speaker" if speaker else "session"}
        entry["scope_key"] = scope.session_key
        if speaker:
            entry["sender_id"] = speaker
        profiles.append({**entry, "profile": profile_json(prof)})
    items = [episode_export(s.episode) for s in reversed(episodes)]
    return {
        "version": EXPORT_VERSION,
        "exported_at": iso(datetime.now(UTC)),
        "scope_key": scope.session_key,
        "user_key": scope.user_key,
        "isolation": scope.isolation,
        "statuses": list(STATUSES),
        "profiles": profiles,
        "episodes": items,
        "count": len(items),
        "unreadable": [
            {"file": p.path, "line": p.line, "message": p.message}
            for p in sorted(unreadable, key=lambda p: p.path)
        ],
    }


def unreadable_warning(data: dict[str, Any]) -> str:
    """One line for a person: which files the export left out and what to do; "" if none."""
    bad = data.get("unreadable") or []
    if not bad:
        return ""
    files = "; ".join(f"{b['file']}:{b['line']}: {b['message']}" for b in bad[:5])
    more = f" (and {len(bad) - 5} more)" if len(bad) > 5 else ""
    return (
        f"{len(bad)} file(s) could not be read and are NOT in this export: {files}{more}. "
        "Fix them (`memvault check` shows each) and export again."
    )


def _episodes_of(payload: Any) -> list[Any]:
    if isinstance(payload, list):
        return payload
    if isinstance(payload, dict):
        if "episodes" not in payload and "profiles" not in payload:
            # Any other object would import nothing and say "imported 0": a wrong file.
            keys = ", ".join(repr(str(k)[:40]) for k in list(payload)[:5]) or "no keys"
            raise BadRequestError(
                f"nothing to import: the object has {keys} but no `episodes` or `profiles` "
                "list; give what `memvault export` (or LongTermMemory's `!memory export` / "
                '`export l2`) wrote, or a list of {"content": ...} objects'
            )
        episodes = payload.get("episodes", [])
        if not isinstance(episodes, list):
            raise BadRequestError("`episodes` must be a list of objects")
        if not isinstance(payload.get("profiles", []), list):
            raise BadRequestError("`profiles` must be a list of objects")
        return episodes
    raise BadRequestError("import JSON must be a list or an object with episodes")


def import_payload(
    vault: Vault, scope: ScopeId, payload: Any, *, source: str = "import"
) -> dict[str, Any]:
    """Import episodes and profiles (our export of either or both, or LongTermMemory's).

    Every field an item states is kept (vault.transfer.transfer_items), its status too: an import
    restores what was exported, so items of one file never supersede each other; an active
    keyed item still supersedes this scope's older active memory with the same key. An item
    whose id already exists here with the same text is skipped, so importing a file twice
    does not duplicate memories, nor does one of items without ids (the rule: `Present`,
    below); an id this scope already uses for another memory gets a new one
    (`renamed`), and `superseded_by` links inside the file follow it.
    """
    items = [
        parse_item(vault, scope, raw, n, source)
        for n, raw in enumerate(_episodes_of(payload), start=1)
    ]
    entries = payload.get("profiles") if isinstance(payload, dict) else None
    profiles = parse_profiles(vault, scope, entries) if isinstance(entries, list) else []
    imported: list[str] = []
    renamed: dict[str, str] = {}
    skipped = deleted = 0
    with vault.operation(scope, "import", source=source) as txn:
        before = vault.load_episodes(scope)[0]
        present = Present.of(scope, before)
        chosen: list[tuple[ImportItem, str]] = []
        known = KnownTexts(before)
        for item in items:
            if item.deleted:
                deleted += 1
                continue
            if present.holds(item):  # the rule: Present, below
                skipped += 1
                continue
            if vault.find_duplicate(scope, item.episode, chat=known):  # vault.writes.duplicates
                skipped += 1
                continue
            new_id = present.new_id(item, _plain_id(item.old_id) if item.old_id else False)
            if item.old_id and new_id != item.old_id:
                renamed[item.old_id] = new_id
            present.claim(new_id)
            chosen.append((item, new_id))
        incoming = _settled(vault, before, chosen, renamed)
        for episode in incoming:
            create_episode_file(vault.layout, scope, episode, episode.id, txn)
            imported.append(episode.id)
        olds = {s.episode.id: s for s in before}
        for change in lifecycle.arrivals([s.episode for s in before], incoming):
            if change.id in olds:
                vault.apply(olds[change.id], change, txn, expected_hash=olds[change.id].sha)
        wrote, existed = write_profiles(vault, txn, profiles)
        summary = f"Imported {len(imported)} L2 episode(s), skipped {skipped + deleted}"
        txn.record("import", "episode", scope.session_key, summary)
    return {
        "imported": len(imported),
        "skipped": skipped,  # already present here (Present)
        "already_present": skipped,
        "deleted": deleted,
        "ids": imported,
        "renamed": renamed,
        "profile": wrote > 0,
        "profiles": wrote,
        "profiles_skipped": existed,  # a profile file already there is never merged over
    }


def _settled(
    vault: Vault,
    before: list[StoredEpisode],
    chosen: list[tuple[ImportItem, str]],
    renamed: dict[str, str],
) -> list[Episode]:
    """The imported episodes as they will be written (vault.writes.lifecycle): links follow renamed
    ids, a link naming nothing is dropped (archived), and per key the newest memory, old or
    imported, is the active one. Refuses first (nothing written) when an existing memory it
    supersedes holds a secret (vault.git.secret_guard)."""
    incoming = []
    for item, new_id in chosen:
        link = item.episode.superseded_by
        link = renamed.get(link, link) if link else None
        incoming.append(replace(item.episode, id=new_id, superseded_by=link))
    existing = [s.episode for s in before]
    fixes = {c.id: c for c in lifecycle.imported_links(existing, incoming)}
    incoming = [_with(e, fixes.get(e.id)) for e in incoming]
    plan = {c.id: c for c in lifecycle.arrivals(existing, incoming)}
    for stored in before:
        if stored.episode.id in plan:
            vault.refuse_secret(stored, "import (a newer imported memory supersedes it)")
    return [_with(e, plan.get(e.id)) for e in incoming]


def _with(episode: Episode, change: lifecycle.Change | None) -> Episode:
    if change is None:
        return episode
    return replace(episode, status=change.status, superseded_by=change.superseded_by)


def _plain_id(value: str) -> bool:
    try:
        check_episode_id(value)
    except BadRequestError:
        return False
    return True


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

    def claim(self, episode_id: str) -> None:
        """An id this import writes: taken, but not a memory later items are compared to."""
        self.taken.add(episode_id)

    def _used(self, episode_id: str) -> bool:
        return episode_id in self.by_id or episode_id in self.taken

    def holds(self, item: ImportItem) -> bool:
        new = item.episode
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
