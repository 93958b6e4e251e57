"""Reading the persons of a bot: who each sender id is, and what is wrong with the files.

`bots/<bot>/persons/*/person.yaml` (vault.persons.person_file). A sender id belongs to at
most one person of a bot: when hand edits list it in two files, both are reported and it
belongs to neither (a link is the operator's decision; a doubtful one opens nothing). A
malformed file is reported as a Problem and skipped, never rewritten. Nothing here crosses
bots: every lookup takes the bot and reads only that bot's folder.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from vault.files.safewrite import content_hash
from vault.format.model import FormatError, Problem
from vault.layout.chats import bots_with
from vault.layout.layout import PERSON_FILE, PERSONS_DIR, Layout, is_ignored
from vault.layout.links import read_vault_file
from vault.layout.names import UnsafeNameError, folder_id, is_hashed, refuse_foreign_owner
from vault.persons.person_file import Person, parse_person

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StoredPerson:
    person: Person
    path: Path
    rel: str
    sha: str


@dataclass(frozen=True)
class PersonBook:
    """The persons of one bot as the files say now."""

    bot: str | None
    stored: tuple[StoredPerson, ...] = ()
    problems: tuple[Problem, ...] = ()  # files that cannot be read (skipped)
    conflicts: tuple[Problem, ...] = ()  # senders listed by two readable files
    # sender id -> person id, for senders listed in exactly one readable file
    owners: Mapping[str, str] = field(default_factory=dict)
    # sender id -> every person whose file lists it, when that is more than one
    disputed: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def every_problem(self) -> tuple[Problem, ...]:
        return tuple(sorted((*self.problems, *self.conflicts), key=lambda p: (p.path, p.line)))

    def get(self, person_id: str) -> StoredPerson | None:
        return next((s for s in self.stored if s.person.id == person_id), None)

    def person_of(self, sender: str) -> Person | None:
        owner = self.owners.get(sender.strip()) if isinstance(sender, str) else None
        found = self.get(owner) if owner is not None else None
        return found.person if found is not None else None

    def senders_of(self, sender: str) -> tuple[str, ...]:
        """Every sender id that is the same person as `sender` (itself first), or just
        `sender` when it is linked to no one (or disputed)."""
        person = self.person_of(sender)
        mine = sender.strip()
        if person is None:
            return (mine,)
        # A sender the files dispute is nobody's, not even this person's.
        return (mine, *(s for s in person.senders if s != mine and self.owners.get(s) == person.id))


# One parse per file while its stat is unchanged (as vault.events.event_store does: every
# turn of a bot with the feature on reads this bot's persons). A file modified within
# RACY_NS of being read could change again within the same timestamp tick unseen: not kept.
_PARSED: dict[str, tuple[tuple[int, int, int, int], Person, str]] = {}
_MAX_PARSED = 20_000
RACY_NS = 2_000_000_000


def _stamp(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _read(root: Path, path: Path, rel: str, person_id: str) -> tuple[Person, str]:
    key = str(path)
    hit = _PARSED.get(key)
    if hit is not None and hit[0] == _stamp(os.lstat(path)) and hit[1].id == person_id:
        return hit[1], hit[2]
    data, st = read_vault_file(root, rel)  # never through a link (vault.layout.links)
    person = parse_person(data, person_id=person_id, rel_path=rel)
    sha = content_hash(data)
    if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) >= RACY_NS:
        if len(_PARSED) >= _MAX_PARSED:
            _PARSED.clear()
        _PARSED[key] = (_stamp(st), person, sha)
    return person, sha


# The whole book of a bot, while no person file (nor a long name's `.id`) changed: a turn
# with the feature on costs a scandir and one lstat per person, not a walk of pathlib
# objects (1,000 persons: ~90 ms a turn before, a few ms now). Not kept while racy.
_BOOKS: dict[str, tuple[tuple[object, ...], PersonBook]] = {}
_MAX_BOOKS = 1_000


def _racy(stamp: tuple[int, int, int, int], now: int) -> bool:
    return now - max(stamp[2], stamp[3]) < RACY_NS


def load_persons(layout: Layout, bot: str | None) -> PersonBook:
    """Every person of `bot`, sorted by folder name, with the problems of its files."""
    folder = layout.persons_dir(bot)  # refused (VaultLinkError) when it is a link
    base = str(folder)
    try:
        with os.scandir(base) as entries:
            names = sorted(
                e.name
                for e in entries
                if e.is_dir(follow_symlinks=False) and not is_ignored(e.name)
            )
    except (FileNotFoundError, NotADirectoryError):
        return PersonBook(bot)
    now, key, fresh = time.time_ns(), [], True
    for name in names:
        try:
            stamp = _stamp(os.lstat(f"{base}/{name}/{PERSON_FILE}"))
        except FileNotFoundError:
            continue  # only an audit log left, or an empty folder: no one
        marker = None
        if is_hashed(name):
            try:
                marker = _stamp(os.lstat(f"{base}/{name}/.id"))
            except FileNotFoundError:
                marker = ()
        fresh = fresh and not _racy(stamp, now)
        key.append((name, stamp, marker))
    hit = _BOOKS.get(base)
    if hit is not None and hit[0] == tuple(key):
        return hit[1]
    book = _load(layout, bot, folder, [entry[0] for entry in key])
    if fresh:
        if len(_BOOKS) >= _MAX_BOOKS:
            _BOOKS.clear()
        _BOOKS[base] = (tuple(key), book)
    return book


def _load(layout: Layout, bot: str | None, folder: Path, names: list[str]) -> PersonBook:
    stored: list[StoredPerson] = []
    problems: list[Problem] = []
    for name in names:
        person_id = folder_id(folder / name)
        if person_id is None:
            continue  # not an encoded id: `memvault check` names the folder
        path = folder / name / PERSON_FILE
        rel = layout.rel(path)
        try:
            person, sha = _read(layout.root, path, rel, person_id)
        except FormatError as exc:
            problems.append(Problem(rel, exc.line, exc.message))
            continue
        except UnsafeNameError as exc:
            problems.append(Problem(rel, 1, str(exc)))
            continue
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(Problem(rel, 1, f"cannot read file: {exc}"))
            continue
        stored.append(StoredPerson(person, path, rel, sha))
    return _book(bot, stored, problems)


def _book(bot: str | None, stored: list[StoredPerson], problems: list[Problem]) -> PersonBook:
    claims: dict[str, list[StoredPerson]] = {}
    for entry in stored:
        for sender in entry.person.senders:
            claims.setdefault(sender, []).append(entry)
    owners = {s: c[0].person.id for s, c in claims.items() if len(c) == 1}
    disputed = {s: tuple(e.person.id for e in c) for s, c in claims.items() if len(c) > 1}
    conflicts: list[Problem] = []
    for sender, claimants in sorted(disputed.items()):
        rels = [e.rel for e in claims[sender]]
        for entry in claims[sender]:
            others = ", ".join(r for r in rels if r != entry.rel)
            conflicts.append(
                Problem(
                    entry.rel,
                    1,
                    f"sender {sender[:80]!r} is also listed in {others}: one sender id "
                    f"belongs to at most one person of a bot, so it is linked to none of "
                    f"{', '.join(claimants)} until it is removed from all but one file",
                )
            )

    def ordered(found: list[Problem]) -> tuple[Problem, ...]:
        return tuple(sorted(found, key=lambda p: (p.path, p.line, p.message)))

    return PersonBook(bot, tuple(stored), ordered(problems), ordered(conflicts), owners, disputed)


def linked_senders(layout: Layout, bot: str | None, sender: str) -> tuple[str, ...]:
    """`sender` and every sender id linked to the same person of `bot` (itself first)."""
    return load_persons(layout, bot).senders_of(sender)


@dataclass(frozen=True)
class Identity:
    """Who a speaker is for one turn: their own sender id, or (when linking is on) the
    person of the bot it is linked to and every sender id of that person, own id first."""

    senders: tuple[str, ...] = ()
    person: Person | None = None


def identity_of(layout: Layout, bot: str | None, sender: str, enabled: bool) -> Identity:
    """Off, unlinked or unreadable (logged): the sender alone, as before persons existed.
    Only `bot`'s persons are read, so nothing crosses bots."""
    if not sender:
        return Identity()
    alone = Identity((sender.strip(),))
    if not enabled:
        return alone
    try:
        book = load_persons(layout, bot)
    except (ValueError, OSError) as exc:
        log.warning("memvault=persons_unreadable bot=%s error=%r", bot or "-", str(exc))
        return alone
    person = book.person_of(sender)
    return Identity(book.senders_of(sender), person) if person else alone


def refuse_foreign_folder(layout: Layout, bot: str | None, person_id: str) -> None:
    """A shortened person folder whose `.id` names another person is refused, so a hash
    collision can never mix two persons."""
    folder = layout.person_folder(bot, person_id)
    refuse_foreign_owner(folder, person_id, layout.rel(folder), "person id")


def bots_with_persons(layout: Layout) -> list[str | None]:
    """Bots (None = no bot) that have a persons/ folder (what `check` and the console list)."""
    return bots_with(layout, PERSONS_DIR)
