"""The lifecycle of a memory (an L2 episode): its statuses, the transitions between them and
what each keeps. Every MemVault operation that changes a status asks this module what the
new status is; nothing else decides.

    status      in recall   how it gets there
    active      yes         remember / import / accept a candidate / consolidation summary;
                            restore, when nothing newer replaces it
    superseded  no          a newer memory with the same `key` in the same chat (or a
                            correction, or an imported newer memory) replaced it:
                            `superseded_by` names the replacement
    archived    no          archive / bulk archive / consolidation (`consolidated_into`)
    (deleted)   -           forget / bulk delete: the file is gone

Transitions (anything else is refused or changes nothing):

    create            -> active, or superseded when the chat already holds a newer active
                         memory with that key (an import of an older memory)
    active            -> superseded  (a newer memory with the same key arrives)
    active|superseded -> archived    (archive: `superseded_by` is KEPT, so restore knows)
    archived|superseded -> restore:  superseded again while its replacement exists, or when
                         a newer active memory holds its key; otherwise active (and it then
                         supersedes older active memories of its key)
    any               -> deleted     (forget: memories it had replaced now name its own
                         replacement, or a newer memory of their key; with none left they
                         are archived: out of recall, restore brings them back)

Invariants (tests/indexer/retrieval/test_lifecycle_property.py): at most one active memory per key
per chat,
and every `superseded_by` names an existing memory of the chat at least as new.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from vault.format.model import Episode

ACTIVE, SUPERSEDED, ARCHIVED = "active", "superseded", "archived"


@dataclass(frozen=True)
class Change:
    """One memory's new status (and the link it keeps or gets)."""

    id: str
    status: str
    superseded_by: str | None = None


def front_matter(current: Episode, status: str, superseded_by: str | None) -> dict[str, object]:
    """The front-matter changes of a status change (without `updated_at`).

    Archiving keeps `superseded_by`: it is what tells a later restore that a newer memory
    replaced this one. Only becoming active again drops it."""
    changes: dict[str, object] = {"status": status}
    if status == SUPERSEDED:
        changes["superseded_by"] = superseded_by
    elif status == ACTIVE and current.superseded_by is not None:
        changes["superseded_by"] = None
    elif status == ARCHIVED and superseded_by != current.superseded_by:
        changes["superseded_by"] = superseded_by
    return changes


def _at_least_as_new(a: Episode, b: Episode) -> bool:
    return a.created_at >= b.created_at


def arrivals(existing: Sequence[Episode], incoming: Sequence[Episode]) -> list[Change]:
    """New memories (remember, import, accept) joining a chat: which of them and of the
    existing ones end active or superseded. Per key, the newest memory (by `created_at`; on
    a tie the one arriving) stays active and every other active one of that key is
    superseded by it, so an imported older memory never replaces a newer one."""
    current: dict[str, list[Episode]] = {}
    for ep in existing:
        if ep.key and ep.status == ACTIVE:
            current.setdefault(ep.key, []).append(ep)
    changes: dict[str, Change] = {}
    for new in sorted(incoming, key=lambda e: e.created_at):
        if not new.key or new.status != ACTIVE:
            continue
        holders = [e for e in current.get(new.key, []) if e.id != new.id]
        newer = [e for e in holders if e.created_at > new.created_at]
        if newer:
            winner = max(newer, key=lambda e: e.created_at)
            changes[new.id] = Change(new.id, SUPERSEDED, winner.id)
            continue
        for old in holders:
            changes[old.id] = Change(old.id, SUPERSEDED, new.id)
        current[new.key] = [new]
    return list(changes.values())


def imported_links(existing: Sequence[Episode], incoming: Sequence[Episode]) -> list[Change]:
    """Imported superseded (or archived) memories whose `superseded_by` names no memory of
    the chat or of the import (an export without the replacement): archived without the
    link, out of recall as they were (restore can bring them back). Other links are kept
    as the file says, so an export imported and exported again is the same."""
    known = {e.id for e in (*existing, *incoming)}
    return [
        Change(ep.id, ARCHIVED, None)
        for ep in incoming
        if ep.superseded_by is not None and ep.superseded_by not in known and ep.status != ACTIVE
    ]


def restored(chat: Sequence[Episode], target: Episode) -> list[Change]:
    """What `restore` of `target` does: the target's change first, then the older active
    memories of its key it supersedes (only when it becomes active itself)."""
    others = {e.id: e for e in chat if e.id != target.id}
    link = target.superseded_by
    if link and link in others and _at_least_as_new(others[link], target):
        return [Change(target.id, SUPERSEDED, link)]  # its replacement is still there
    holders = [e for e in others.values() if target.key and e.key == target.key]
    active = [e for e in holders if e.status == ACTIVE]
    newer = [e for e in active if _at_least_as_new(e, target)]
    if newer:
        winner = max(newer, key=lambda e: e.created_at)
        return [Change(target.id, SUPERSEDED, winner.id)]
    return [Change(target.id, ACTIVE), *(Change(e.id, SUPERSEDED, target.id) for e in active)]


def after_forget(chat: Sequence[Episode], gone: Iterable[str]) -> list[Change]:
    """Memories whose `superseded_by` names a forgotten one: they name the forgotten
    memory's own replacement, or the newest memory of their key at least as new (active
    ones first), and with none left they are archived (out of recall, as before)."""
    gone_ids = set(gone)
    by_id = {e.id: e for e in chat}
    left = [e for e in chat if e.id not in gone_ids]
    changes: list[Change] = []
    for ep in left:
        if ep.superseded_by not in gone_ids:
            continue
        heir = _heir(by_id, gone_ids, ep)
        if heir is None:
            changes.append(Change(ep.id, ARCHIVED, None))
        elif ep.status == ARCHIVED:
            changes.append(Change(ep.id, ARCHIVED, heir))
        else:
            changes.append(Change(ep.id, SUPERSEDED, heir))
    return changes


def _heir(by_id: dict[str, Episode], gone: set[str], ep: Episode) -> str | None:
    seen: set[str] = set()
    link = ep.superseded_by
    while link in gone and link not in seen and link in by_id:  # follow the chain onwards
        seen.add(link)
        link = by_id[link].superseded_by
    found = link and link not in gone and link in by_id and link != ep.id
    if found and _at_least_as_new(by_id[link], ep):  # type: ignore[index]
        return link
    same_key = [
        e
        for e in by_id.values()
        if ep.key and e.key == ep.key and e.id != ep.id and e.id not in gone
        and _at_least_as_new(e, ep)
    ]  # fmt: skip
    if not same_key:
        return None
    return max(same_key, key=lambda e: (e.status == ACTIVE, e.created_at)).id


def problems(chat: Sequence[Episode]) -> list[str]:
    """Where a chat's memories break the lifecycle's invariants (empty: none)."""
    found: list[str] = []
    active: dict[str, list[str]] = {}
    by_id = {e.id: e for e in chat}
    for ep in chat:
        if ep.key and ep.status == ACTIVE:
            active.setdefault(ep.key, []).append(ep.id)
        link = ep.superseded_by
        if link is None:
            continue
        if link not in by_id or link == ep.id:
            found.append(f"{ep.id}: superseded_by {link} names no other memory of the chat")
        elif not _at_least_as_new(by_id[link], ep):
            found.append(f"{ep.id}: superseded_by {link} is older than it")
    for key, ids in sorted(active.items()):
        if len(ids) > 1:
            found.append(f"key {key}: {len(ids)} active memories ({', '.join(sorted(ids))})")
    return found
