"""Memory operations: the one write path the CLI, the plugin and the console all call.

Each operation takes the vault lock, writes its files atomically, appends to the session's
audit log and commits exactly the files it wrote, so git history reads as a log of memory
operations and a person's own uncommitted edits are never swept into it.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from vault.episodes import edit_front_matter, render_episode
from vault.keys import ScopeId
from vault.model import CATEGORIES, SOURCES, Episode, Profile, Speaker, default_confidence
from vault.profile_ops import update_profile
from vault.safewrite import VaultLock, create_new, rewrite
from vault.store import BadRequestError, StoredEpisode, VaultReader
from vault.transaction import Txn, finish, notify, now_utc

log = logging.getLogger(__name__)

MAX_EPISODE_CHARS = 20_000
MAX_TAGS = 20


def unique_tags(tags: Iterable[str]) -> tuple[str, ...]:
    """Tags stripped, blanks and repeats dropped (first spelling kept), at most MAX_TAGS."""
    out = tuple(dict.fromkeys(t.strip() for t in tags if t and t.strip()))
    if len(out) > MAX_TAGS:
        raise BadRequestError(f"{len(out)} tags: use at most {MAX_TAGS}")
    return out


class Vault(VaultReader):
    def __init__(
        self, root: Path, *, git: bool = True, clock: Callable[[], datetime] = now_utc
    ) -> None:
        super().__init__(root)
        self.git = git
        self.clock = clock
        self.lock = VaultLock(self.layout.state_dir / "locks" / "write.lock")
        # Called with the vault-relative paths an operation wrote, once it is done: the
        # indexer hooks in here so a write is searchable when the call returns.
        self.on_written: Callable[[list[str]], None] | None = None

    @contextmanager
    def operation(
        self, scope: ScopeId, name: str, *, source: str, query_id: int | str | None = None
    ) -> Iterator[Txn]:
        with self.lock.hold():
            txn = Txn(scope, source, query_id)
            yield txn
            finish(txn, name, self.layout, git=self.git)
        if self.on_written is not None and txn.written:
            notify(self.on_written, sorted({self.layout.rel(p) for p in txn.written}))

    # -- episodes ---------------------------------------------------------------------

    def remember(
        self,
        scope: ScopeId,
        text: str,
        *,
        speaker: Speaker | None = None,
        tags: tuple[str, ...] | list[str] = (),
        importance: int = 2,
        key: str | None = None,
        category: str | None = None,
        source: str = "agent",
        query_id: int | str | None = None,
        created_at: datetime | None = None,
        episode_id: str | None = None,
        status: str = "active",
    ) -> Episode:
        episode = self.new_episode(
            text, speaker, tags, importance, key, category, source, created_at, status
        )
        with self.operation(scope, "remember", source=source, query_id=query_id) as txn:
            episode = self.add_episode(txn, episode, episode_id, audit_as="remember")
        return episode

    def add_episode(
        self,
        txn: Txn,
        episode: Episode,
        episode_id: str | None = None,
        *,
        audit_as: str | None = None,
    ) -> Episode:
        """Write a new episode file inside `txn`; a `key` supersedes older active episodes."""
        episode = self._create_episode_file(txn.scope, episode, episode_id, txn)
        if audit_as:
            txn.record(audit_as, "episode", episode.id, episode.body)
        if episode.key and episode.status == "active":
            for old in self.load_episodes(txn.scope)[0]:
                same_key = old.episode.key == episode.key and old.episode.id != episode.id
                if same_key and old.episode.status == "active":
                    self._set_status(old, "superseded", txn, superseded_by=episode.id)
        return episode

    def new_episode(
        self,
        text: str,
        speaker: Speaker | None,
        tags: tuple[str, ...] | list[str],
        importance: int,
        key: str | None,
        category: str | None,
        source: str,
        created_at: datetime | None,
        status: str,
    ) -> Episode:
        body = (text or "").strip()
        if not body:
            raise BadRequestError("content is empty: say what to remember")
        if len(body) > MAX_EPISODE_CHARS:
            raise BadRequestError(
                f"content is {len(body)} characters: keep one memory under {MAX_EPISODE_CHARS}"
            )
        if (
            isinstance(importance, bool)
            or not isinstance(importance, int)
            or not 1 <= importance <= 5
        ):
            raise BadRequestError(f"importance must be an integer from 1 to 5 (got {importance!r})")
        if category is not None and category not in CATEGORIES:
            raise BadRequestError(f"category must be one of {', '.join(CATEGORIES)}")
        if source not in SOURCES:
            raise BadRequestError(f"source must be one of {', '.join(SOURCES)}")
        clean_tags = unique_tags(tags)
        return Episode(
            id="",
            created_at=(created_at or self.clock()).astimezone(UTC),
            body=body,
            speaker=speaker,
            importance=importance,
            tags=clean_tags,
            status=status,
            key=(key or "").strip() or None,
            category=category,
            source=source,
            verified=source == "user",
            confidence=default_confidence(source),
        )

    def _create_episode_file(
        self, scope: ScopeId, episode: Episode, episode_id: str | None, txn: Txn
    ) -> Episode:
        for _ in range(20):
            new_id = episode_id or f"ep_{episode.created_at:%Y%m%d}_{secrets.token_hex(3)}"
            candidate = replace(episode, id=new_id)
            path = self.layout.new_episode_path(scope, new_id, candidate.created_at)
            if create_new(path, render_episode(candidate).encode("utf-8")):
                txn.written.append(path)
                return candidate
            if episode_id:
                raise BadRequestError(f"an episode file {new_id} already exists: pick another id")
        raise RuntimeError("could not find a free episode id after 20 tries")

    def _set_status(
        self,
        stored: StoredEpisode,
        status: str,
        txn: Txn,
        *,
        superseded_by: str | None = None,
        expected_hash: str | None = None,
    ) -> None:
        changes: dict[str, object] = {"status": status}
        if status == "superseded":
            changes["superseded_by"] = superseded_by
        elif stored.episode.superseded_by is not None:
            changes["superseded_by"] = None
        rewrite(
            stored.path,
            lambda data: edit_front_matter(data, changes, current=stored.episode),
            expected_hash=expected_hash,
        )
        txn.written.append(stored.path)
        verb = {"superseded": "supersede", "archived": "archive", "active": "restore"}[status]
        note = f" by {superseded_by}" if superseded_by else ""
        txn.record(verb, "episode", stored.episode.id, f"{stored.episode.body}{note}")

    def change_status(
        self,
        scope: ScopeId,
        episode_id: str,
        status: str,
        *,
        source: str = "user",
        query_id: int | str | None = None,
        expected_hash: str | None = None,
    ) -> Episode:
        """archive (status archived) or restore (status active) one episode of this scope."""
        with self.lock.hold():
            stored = self.find_episode(scope, episode_id)
            if stored.episode.status == status:
                raise BadRequestError(f"episode {stored.episode.id} is already {status}")
            op = "archive" if status == "archived" else "restore"
            with self.operation(scope, op, source=source, query_id=query_id) as txn:
                self._set_status(stored, status, txn, expected_hash=expected_hash)
        return self.find_episode(scope, episode_id).episode

    def archive(self, scope: ScopeId, episode_id: str, **kw: object) -> Episode:
        return self.change_status(scope, episode_id, "archived", **kw)  # type: ignore[arg-type]

    def restore(self, scope: ScopeId, episode_id: str, **kw: object) -> Episode:
        return self.change_status(scope, episode_id, "active", **kw)  # type: ignore[arg-type]

    def supersede(
        self, scope: ScopeId, old_id: str, new_id: str, *, source: str = "agent"
    ) -> Episode:
        with self.lock.hold():
            stored = self.find_episode(scope, old_id)
            with self.operation(scope, "supersede", source=source) as txn:
                self._set_status(stored, "superseded", txn, superseded_by=new_id)
        return self.find_episode(scope, old_id).episode

    def forget(
        self,
        scope: ScopeId,
        episode_id: str,
        *,
        source: str = "user",
        query_id: int | str | None = None,
    ) -> Episode:
        """Delete the episode's file (git history still has it: `git log -- <path>`)."""
        with self.lock.hold():
            stored = self.find_episode(scope, episode_id)
            with self.operation(scope, "forget", source=source, query_id=query_id) as txn:
                stored.path.unlink()
                txn.written.append(stored.path)
                txn.record("forget", "episode", stored.episode.id, stored.episode.body)
        return stored.episode

    # -- profiles -----------------------------------------------------------------------

    def update_profile(
        self,
        scope: ScopeId,
        field: str,
        action: str,
        value: str,
        **kw: Any,
    ) -> Profile:
        """set/add/remove one profile field; see vault.profile_edit for the rules."""
        return update_profile(self, scope, field, action, value, **kw)
