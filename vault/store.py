"""Reading a vault: episodes and profiles of one scope, parsed once into frozen records.

Malformed files never stop a read: they come back as `Problem`s next to the good records,
so one bad hand edit cannot hide the rest of the vault.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from vault.episodes import parse_episode
from vault.keys import ScopeId
from vault.layout import Layout
from vault.model import STATUSES, Episode, FormatError, Problem, Profile
from vault.names import decode_name, is_hashed
from vault.profiles import parse_profile
from vault.safewrite import content_hash

# Episode ids come from chat (tools, commands): refuse anything that is not a plain token.
_EPISODE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}")
PAGE_SIZE = 10


class NotFoundError(LookupError):
    pass


class BadRequestError(ValueError):
    """Input from a person or a model that cannot be used; the message says how to fix it."""


def check_episode_id(value: str) -> str:
    text = (value or "").strip()
    if not _EPISODE_ID.fullmatch(text):
        raise BadRequestError(
            f"episode id {value[:40]!r} is not valid: use the id shown by list or search, "
            "e.g. ep_20261130_7f3a9c"
        )
    return text


@dataclass(frozen=True)
class StoredEpisode:
    episode: Episode
    path: Path
    rel: str
    sha: str


@dataclass(frozen=True)
class EpisodePage:
    total: int
    page: int
    page_size: int
    items: tuple[StoredEpisode, ...]

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.page_size))


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
    data = path.read_bytes()
    rel = layout.rel(path)
    episode = parse_episode(data, rel_path=rel, mtime=path.stat().st_mtime)
    return StoredEpisode(episode, path, rel, content_hash(data))


class VaultReader:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.layout = Layout(root)

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
        for stored in episodes:
            if stored.episode.id == wanted:
                return stored
        raise NotFoundError(
            f"no episode {wanted} in {scope.label()}: run `memvault list` to see the ids here"
        )

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
            return self.layout.speaker_path(scope, speaker)
        return self.layout.profile_path(scope)

    def read_profile(self, scope: ScopeId, speaker: str | None = None) -> Profile:
        """The profile, or an empty one if the file does not exist yet."""
        path = self.profile_path(scope, speaker)
        if not path.exists():
            return Profile()
        return parse_profile(path.read_bytes(), rel_path=self.layout.rel(path))

    def list_speakers(self, scope: ScopeId) -> list[str]:
        folder = self.layout.speakers_dir(scope)
        if not folder.is_dir():
            return []
        names = sorted(p.stem for p in folder.glob("*.yaml") if not p.name.startswith("."))
        return [decode_name(n) for n in names if not is_hashed(n)]
