"""Reading a vault: episodes and profiles of one scope, parsed once into frozen records.

Malformed files never stop a read: they come back as `Problem`s next to the good records,
so one bad hand edit cannot hide the rest of the vault.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from vault.errors import BadRequestError, NotFoundError
from vault.files.safewrite import content_hash
from vault.format.episode_fields import clean_text
from vault.format.episodes import parse_episode
from vault.format.ids import episode_id_problem
from vault.format.model import STATUSES, Episode, FormatError, Problem, Profile
from vault.format.profiles import parse_profile
from vault.layout.keys import ScopeId
from vault.layout.layout import STATE_DIR, Layout
from vault.layout.links import check_state_dir, read_vault_file
from vault.layout.names import decode_name, is_hashed

PAGE_SIZE = 10
T = TypeVar("T")


class EpisodeNotFoundError(NotFoundError):
    """No episode with this id in the scope. The message names no command: each surface
    says how to see the ids there (the CLI its `memvault list --bot ... --session ...`,
    `!memory list`, the console its list); `what` is the part they all share."""

    def __init__(self, episode_id: str, scope: ScopeId) -> None:
        self.episode_id = episode_id
        self.scope = scope
        self.what = f"no episode {episode_id} in {scope.label()}"
        super().__init__(f"{self.what}: check the id against this chat's list of memories")


class AmbiguousIdError(BadRequestError):
    """Two files of one scope state the same id: acting on either could hit the wrong one."""


def check_episode_id(value: str) -> str:
    """An id from chat, the CLI or the console, by the same rule `check` applies to files."""
    text = (value or "").strip()
    problem = episode_id_problem(text)
    if problem is not None:
        raise BadRequestError(
            f"episode id {value[:40]!r} is not valid: {problem}; use the id shown by list or "
            "search, e.g. ep_20261130_7f3a9c"
        )
    return text


def check_speaker_id(value: str) -> str:
    """A speaker id as the parser reads it back (stripped); a blank one is refused."""
    text = clean_text(value)
    if text is None:
        raise BadRequestError(
            f"speaker id {value[:40]!r} is blank: pass the sender's id, or no speaker at all"
        )
    return text


def ambiguous_id_message(episode_id: str, rels: list[str]) -> str:
    """What operations (and sync/status/check) say about an id stated by several files."""
    return (
        f"episode id {episode_id} is used by {len(rels)} files: {', '.join(rels)}; nothing "
        "was changed: give one of the copies a new id (edit its id: line) or delete one of "
        "them by hand, then retry"
    )


def only_match(kind: str, wanted: str, matches: list[T], rels: list[str], missing: str) -> T:
    """The one file of `matches` (their paths: `rels`) that states `kind` id `wanted`; two
    are refused (acting on either could hit the wrong one), none raises `missing`."""
    if len(matches) > 1:
        raise AmbiguousIdError(
            f"{kind} id {wanted} is used by {', '.join(sorted(rels))}: nothing was changed; "
            "give one copy a new id or delete it, then retry"
        )
    if not matches:
        raise NotFoundError(missing)
    return matches[0]


def episodes_folder(rel: str) -> str:
    """The episodes folder (one per L2 scope) an episode's vault-relative path is under."""
    parts = rel.split("/")
    return "/".join(parts[:3] if parts[2:3] == ["episodes"] else parts[:5])


def duplicate_problems(episodes: Iterable[tuple[str, str]]) -> list[Problem]:
    """One Problem per file whose (path, id) shares its id with another file of its scope:
    the one wording `check`, sync and `status` report, naming every other copy."""
    paths: dict[tuple[str, str], list[str]] = defaultdict(list)
    for rel, episode_id in episodes:
        paths[(episodes_folder(rel), episode_id)].append(rel)
    problems = []
    for (_, episode_id), rels in paths.items():
        for rel in rels if len(rels) > 1 else ():
            others = ", ".join(r for r in sorted(rels) if r != rel)
            problems.append(
                Problem(
                    rel,
                    1,
                    f"episode id {episode_id} is also used by {others}: show, forget and "
                    "archive refuse this id until you give one of the copies a new id (edit "
                    "its id: line) or delete one of them by hand",
                )
            )
    return sorted(problems, key=lambda p: p.path)


@dataclass(frozen=True)
class StoredEpisode:
    episode: Episode
    path: Path
    rel: str
    sha: str


def page_count(total: int, page_size: int) -> int:
    """How many pages of `page_size` hold `total` items; one when there are none (an empty
    first page is still a page)."""
    return max(1, -(-total // page_size))


@dataclass(frozen=True)
class EpisodePage:
    total: int
    page: int
    page_size: int
    items: tuple[StoredEpisode, ...]

    @property
    def pages(self) -> int:
        return page_count(self.total, self.page_size)


def page_of(
    episodes: list[StoredEpisode], *, status: str, page: int, page_size: int = PAGE_SIZE
) -> EpisodePage:
    """One page of `episodes` (newest first) with the given status ("all" = any)."""
    if status != "all" and status not in STATUSES:
        raise BadRequestError(f"status must be one of {', '.join(STATUSES)}, all")
    if page < 1:
        raise BadRequestError("page must be 1 or more")
    if status != "all":
        episodes = [s for s in episodes if s.episode.status == status]
    start = (page - 1) * page_size
    return EpisodePage(len(episodes), page, page_size, tuple(episodes[start : start + page_size]))


def read_episode_file(layout: Layout, path: Path) -> StoredEpisode:
    rel = layout.rel(path)
    data, st = read_vault_file(layout.root, rel)  # never through a symbolic link
    episode = parse_episode(data, rel_path=rel, mtime=st.st_mtime)
    return StoredEpisode(episode, path, rel, content_hash(data))


class VaultReader:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.layout = Layout(root)
        check_state_dir(root, STATE_DIR)  # every write and read of derived state is below it

    def load_episodes(self, scope: ScopeId) -> tuple[list[StoredEpisode], list[Problem]]:
        """Every episode of the scope's L2 (its user_key folder), newest first."""
        found: list[StoredEpisode] = []
        problems: list[Problem] = []
        for path in self.layout.iter_episode_files(scope):
            try:
                found.append(read_episode_file(self.layout, path))
            except FormatError as exc:
                problems.append(Problem(self.layout.rel(path), exc.line, exc.message))
            except (OSError, UnicodeDecodeError) as exc:
                problems.append(Problem(self.layout.rel(path), 1, f"cannot read file: {exc}"))
        found.sort(key=lambda s: (s.episode.created_at, s.episode.id), reverse=True)
        return found, problems

    def find_episode(self, scope: ScopeId, episode_id: str) -> StoredEpisode:
        wanted = check_episode_id(episode_id)
        episodes, _ = self.load_episodes(scope)
        found = sorted((s for s in episodes if s.episode.id == wanted), key=lambda s: s.rel)
        if len(found) > 1:
            # A person copied the file (and maybe edited the copy): never guess which is meant.
            raise AmbiguousIdError(ambiguous_id_message(wanted, [s.rel for s in found]))
        if found:
            return found[0]
        raise EpisodeNotFoundError(wanted, scope)

    def list_episodes(
        self,
        scope: ScopeId,
        *,
        status: str = "active",
        page: int = 1,
        page_size: int = PAGE_SIZE,
        now: datetime | None = None,
    ) -> EpisodePage:
        return page_of(self.load_episodes(scope)[0], status=status, page=page, page_size=page_size)

    def profile_path(self, scope: ScopeId, speaker: str | None = None) -> Path:
        if speaker:
            return self.layout.speaker_path(scope, check_speaker_id(speaker))
        return self.layout.profile_path(scope)

    def read_profile(self, scope: ScopeId, speaker: str | None = None) -> Profile:
        """The profile, or an empty one if the file does not exist yet."""
        path = self.profile_path(scope, speaker)
        rel = self.layout.rel(path)
        try:
            data, _ = read_vault_file(self.root, rel)  # never through a symbolic link
        except (FileNotFoundError, NotADirectoryError):
            return Profile()
        return parse_profile(data, rel_path=rel)

    def list_speakers(self, scope: ScopeId) -> list[str]:
        folder = self.layout.speakers_dir(scope)
        if not folder.is_dir():
            return []
        names = sorted(p.stem for p in folder.glob("*.yaml") if not p.name.startswith("."))
        return [decode_name(n) for n in names if not is_hashed(n)]
