"""Where each kind of file lives in a vault (DESIGN.md 2): scope -> path and path -> role."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from vault.files.regular import is_regular_or_missing
from vault.layout.keys import (
    GLOBAL_USER_KEY,
    ScopeId,
    bot_index_key,
    index_key,
    profile_index_key,
    session_key,
)
from vault.layout.links import check_no_link
from vault.layout.names import (
    ID_FILE,
    IGNORED_SUFFIXES,
    UnsafeNameError,
    encode_name,
    folder_id,
    is_hashed,
    safe_child,
)

NOBOT = "_nobot"
STATE_DIR = ".memvault"
CANDIDATES_DIR = "candidates"
# A person of a bot, across its chats: key events (vault.events) and their audit log.
PEOPLE_DIR, EVENTS_DIR = "people", "events"
# One human the operator linked across sender ids (vault.persons): `persons/<person>/`, a
# folder of its own so no sender id (people/<sender>/) can ever name a person's folder.
PERSONS_DIR, PERSON_FILE = "persons", "person.yaml"
# The files that are memory (what the indexes hold, what `check`, `status` and the console
# count as "memory files"); audit logs and candidates are checked but are not memory.
MEMORY_KINDS: frozenset[str] = frozenset({"episode", "profile", "speaker"})
_IGNORED_SUFFIXES = IGNORED_SUFFIXES  # one list: encode_name never makes such a name
_IGNORED_INNER = tuple(f"{s}/" for s in _IGNORED_SUFFIXES)  # a folder name ending so


def is_ignored(name: str) -> bool:
    """Editor droppings, temp files and dot-files never count as memory."""
    return name.startswith(".") or name.endswith(_IGNORED_SUFFIXES)


@dataclass(frozen=True)
class FileRole:
    """What a vault file is, and whose: the indexer and `check` both route by this."""

    # candidate: a proposed memory awaiting review (vault.candidates); never indexed as
    # memory, never recalled, only listed and accepted or rejected.
    # event: a key event of one person of a bot (`speaker`), never indexed (vault.events).
    # person: a linked person of a bot (`person`: its id), never indexed (vault.persons).
    kind: str  # episode | profile | speaker | audit | candidate | event | person | other
    bot: str | None = None
    session: str | None = None
    # The injective scope the indexes file it under (vault.layout.keys.index_key for episodes,
    # profile_index_key for profiles and speakers); None for files the indexes skip.
    index_key: str | None = None
    speaker: str | None = None
    person: str | None = None

    @property
    def session_key(self) -> str | None:
        return session_key(self.bot, self.session) if self.session is not None else None

    @property
    def user_key(self) -> str | None:
        """An episode's DISPLAYED L2 key (LangBot's); never a filter, it can collide."""
        if self.kind != "episode":
            return None
        if self.session is None:
            return f"bot:{self.bot}" if self.bot else GLOBAL_USER_KEY
        return session_key(self.bot, self.session)


class Layout:
    """Paths of a vault. Every path it builds for a scope is refused (VaultLinkError) when an
    existing part of it is a symbolic link, so no write or read by path goes through one."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR

    def bot_dir(self, bot: str | None) -> Path:
        if bot == NOBOT:
            raise UnsafeNameError(f"bot id {NOBOT!r} is reserved for memory without a bot")
        bots = self.root / "bots"
        if bot is None:
            return check_no_link(self.root, bots / NOBOT)
        return self._child(bots, bot, "bot id")

    def session_dir(self, scope: ScopeId) -> Path:
        return self._child(self.bot_dir(scope.bot) / "sessions", scope.session, "session name")

    def _child(self, parent: Path, value: str, what: str) -> Path:
        # The link check first: its message says what to do, safe_child's only "refused".
        name = encode_name(value, what)
        check_no_link(self.root, parent / name)
        if is_hashed(name) and not is_regular_or_missing(parent / name / ID_FILE):
            # Refused before anything is written: its `.id` (a link, a FIFO) can be neither
            # read nor written, so the folder's memories could never be found.
            rel = self.rel(parent / name / ID_FILE)
            raise UnsafeNameError(
                f"{rel} is not a regular file: MemVault keeps the folder's full id there; "
                "delete it (the next write recreates it)"
            )
        return safe_child(parent, value, what)

    def profile_path(self, scope: ScopeId) -> Path:
        return self._plain(self.session_dir(scope) / "profile.yaml")

    def _plain(self, path: Path) -> Path:
        """`path`, after proving it is no link and, if it exists, a regular file: a FIFO
        planted as `audit.jsonl` or `profile.yaml` would hang a write holding the lock."""
        check_no_link(self.root, path)
        if not is_regular_or_missing(path):
            raise UnsafeNameError(
                f"{self.rel(path)} is not a regular file (a folder, FIFO, socket or device): "
                "MemVault only reads and writes plain files; replace it with a file or delete it"
            )
        return path

    def speakers_dir(self, scope: ScopeId) -> Path:
        return check_no_link(self.root, self.session_dir(scope) / "speakers")

    def speaker_path(self, scope: ScopeId, speaker_id: str) -> Path:
        path = self.speakers_dir(scope) / f"{encode_name(speaker_id, 'speaker id')}.yaml"
        return self._plain(path)

    def candidates_dir(self, scope: ScopeId) -> Path:
        """Always the chat's own folder, whatever the L2 isolation: a proposal comes from
        one chat's turn and is reviewed there."""
        return check_no_link(self.root, self.session_dir(scope) / CANDIDATES_DIR)

    def audit_path(self, scope: ScopeId) -> Path:
        return self._plain(self.session_dir(scope) / "audit.jsonl")

    def person_dir(self, bot: str | None, person: str) -> Path:
        """`bots/<bot>/people/<encoded sender>`: one person across the bot's chats."""
        return self._child(self.bot_dir(bot) / PEOPLE_DIR, person, "sender id")

    def events_dir(self, bot: str | None, person: str) -> Path:
        return check_no_link(self.root, self.person_dir(bot, person) / EVENTS_DIR)

    def person_audit_path(self, bot: str | None, person: str) -> Path:
        return self._plain(self.person_dir(bot, person) / "audit.jsonl")

    def persons_dir(self, bot: str | None) -> Path:
        return check_no_link(self.root, self.bot_dir(bot) / PERSONS_DIR)

    def person_folder(self, bot: str | None, person: str) -> Path:
        """`bots/<bot>/persons/<encoded person id>`: one linked person (vault.persons)."""
        return self._child(self.persons_dir(bot), person, "person id")

    def person_path(self, bot: str | None, person: str) -> Path:
        return self._plain(self.person_folder(bot, person) / PERSON_FILE)

    def person_log_path(self, bot: str | None, person: str) -> Path:
        return self._plain(self.person_folder(bot, person) / "audit.jsonl")

    def episodes_dir(self, scope: ScopeId) -> Path:
        if scope.isolation == "session":
            return check_no_link(self.root, self.session_dir(scope) / "episodes")
        return check_no_link(self.root, self.bot_dir(scope.bot) / "episodes")

    def new_episode_path(self, scope: ScopeId, episode_id: str, created_at: datetime) -> Path:
        folder = self.episodes_dir(scope) / f"{created_at:%Y}" / f"{created_at:%m}"
        return check_no_link(self.root, folder / f"{encode_name(episode_id, 'episode id')}.md")

    def rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def iter_episode_files(self, scope: ScopeId) -> Iterator[Path]:
        yield from iter_markdown(self.episodes_dir(scope))

    def iter_vault_files(
        self, links: list[str] | None = None, specials: list[str] | None = None
    ) -> Iterator[Path]:
        """Every file sync and `check` look at, in a stable order; the symbolic links met
        (never followed) are appended to `links` as vault-relative paths, and FIFOs, sockets
        and devices (never opened) to `specials`."""
        yield from _walk_top(self.root, "bots", links, specials)

    def find_links(self) -> list[str]:
        """Every symbolic link under bots/ (not ignored), vault-relative, sorted."""
        links: list[str] = []
        for _ in self.iter_vault_files(links):
            pass
        return sorted(links)

    def classify(self, path: Path) -> FileRole:
        return classify(self.root, self.rel(path))


def iter_markdown(folder: Path) -> Iterator[Path]:
    if folder.is_dir() and not folder.is_symlink():
        yield from (p for p in _walk(folder) if p.suffix == ".md")


def _walk_top(
    root: Path, rel: str, links: list[str] | None, specials: list[str] | None = None
) -> Iterator[Path]:
    folder = root / rel
    if folder.is_symlink():
        if links is not None:
            links.append(rel)
        return
    if folder.is_dir():
        yield from _walk(folder, rel, links, specials)


def _walk(
    folder: Path,
    rel: str = "",
    links: list[str] | None = None,
    specials: list[str] | None = None,
) -> Iterator[Path]:
    # os.scandir: the entry's cached type saves a stat per file. Links are never followed
    # (vault.layout.links): not into a folder, not to a file.
    try:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return
    for entry in entries:
        if is_ignored(entry.name):
            continue
        child_rel = f"{rel}/{entry.name}" if rel else entry.name
        if _is_link(entry):
            if links is not None:
                links.append(child_rel)
        elif _is_real_dir(entry):
            yield from _walk(folder / entry.name, child_rel, links, specials)
        elif _is_file(entry):
            yield folder / entry.name
        elif specials is not None:
            specials.append(child_rel)  # a FIFO, socket or device: never opened


def _is_link(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_symlink()
    except OSError:
        return False


def _is_real_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file(follow_symlinks=False)
    except OSError:
        return False


def classify(root: Path, rel: str, memo: dict[str, str | None] | None = None) -> FileRole:
    """The role of a vault-relative POSIX path; `other` for anything outside the layout.

    `memo` (one per walk of one root) keeps each folder's id so a walk decodes it once.
    """
    parts = rel.split("/")
    if len(parts) < 3 or parts[0] != "bots" or _any_ignored(rel):
        return FileRole("other")
    ids = {} if memo is None else memo
    bot = None if parts[1] == NOBOT else _folder_id(root, ids, parts[1])
    if parts[1] != NOBOT and bot is None:
        return FileRole("other")
    if parts[2] == "episodes" and parts[-1].endswith(".md") and len(parts) >= 4:
        return FileRole("episode", bot=bot, index_key=bot_index_key(bot))
    if parts[2] == PEOPLE_DIR and len(parts) >= 5:
        person = _folder_id(root, ids, parts[1], PEOPLE_DIR, parts[3])
        if person is not None and parts[4:] == ["audit.jsonl"]:
            return FileRole("audit", bot=bot, speaker=person)
        flat = len(parts) == 6 and parts[4] == EVENTS_DIR  # events/ has no subfolders
        if person is not None and flat and rel.endswith(".md"):
            return FileRole("event", bot=bot, speaker=person)
        return FileRole("other", bot=bot, speaker=person)
    if parts[2] == PERSONS_DIR and len(parts) == 5:
        linked = _folder_id(root, ids, parts[1], PERSONS_DIR, parts[3])
        if linked is not None and parts[4] == PERSON_FILE:
            return FileRole("person", bot=bot, person=linked)
        if linked is not None and parts[4] == "audit.jsonl":
            return FileRole("audit", bot=bot, person=linked)
        return FileRole("other", bot=bot, person=linked)
    if parts[2] != "sessions" or len(parts) < 5:
        return FileRole("other")
    session = _folder_id(root, ids, parts[1], "sessions", parts[3])
    if session is None:
        return FileRole("other")
    tail = parts[4:]
    if tail[0] == "episodes" and len(tail) >= 2 and tail[-1].endswith(".md"):
        return FileRole("episode", bot=bot, session=session, index_key=index_key(bot, session))
    pkey = profile_index_key(bot, session)
    if tail == ["profile.yaml"]:
        return FileRole("profile", bot=bot, session=session, index_key=pkey)
    if len(tail) == 2 and tail[0] == "speakers" and tail[1].endswith(".yaml"):
        speaker = _folder_id(root, ids, parts[1], "sessions", parts[3], "speakers", tail[1][:-5])
        return FileRole("speaker", bot=bot, session=session, index_key=pkey, speaker=speaker)
    if tail == ["audit.jsonl"]:
        return FileRole("audit", bot=bot, session=session)
    if len(tail) == 2 and tail[0] == CANDIDATES_DIR and tail[1].endswith(".md"):
        return FileRole("candidate", bot=bot, session=session)
    return FileRole("other", bot=bot, session=session)


def _any_ignored(rel: str) -> bool:
    """`is_ignored` of any part of `rel`, as string tests (classify runs once per file)."""
    if rel.startswith(".") or "/." in rel or rel.endswith(_IGNORED_SUFFIXES):
        return True
    return any(map(rel.__contains__, _IGNORED_INNER))


def _folder_id(root: Path, memo: dict[str, str | None], *names: str) -> str | None:
    key = "/".join(names)
    if key not in memo:
        memo[key] = folder_id(root.joinpath("bots", *names))
    return memo[key]
