"""Memory operations: the one write path the CLI, the plugin and the console all call.

Each operation takes the vault lock, writes its files atomically, appends to the session's
audit log and commits exactly the files it wrote, so git history reads as a log of memory
operations and a person's own uncommitted edits are never swept into it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from vault import gitlog
from vault.episode_create import build_episode, create_episode_file
from vault.episodes import edit_front_matter
from vault.keys import ScopeId
from vault.model import DEFAULT_PROFILE_LIMITS, Episode, Profile, ProfileLimits, Speaker
from vault.op_results import Forgotten, StatusChange
from vault.profile_ops import update_profile
from vault.safewrite import ConflictError, VaultLock, remove_file, rewrite
from vault.store import BadRequestError, StoredEpisode, VaultReader
from vault.transaction import (
    CommitFailure,
    Txn,
    finish,
    journaled,
    notify,
    now_utc,
    recover_on_open,
)

log = logging.getLogger(__name__)


class Vault(VaultReader):
    def __init__(
        self,
        root: Path,
        *,
        git: bool = True,
        clock: Callable[[], datetime] = now_utc,
        profile_limits: ProfileLimits = DEFAULT_PROFILE_LIMITS,
    ) -> None:
        super().__init__(root)
        self.git = git
        self.clock = clock
        # How full a profile's lists may get (the plugin's max_profile_* settings).
        self.profile_limits = profile_limits
        self.lock = VaultLock(self.layout.state_dir / "locks" / "write.lock")
        # Called with the vault-relative paths an operation wrote, once it is done: the
        # indexer hooks in here so a write is searchable when the call returns.
        self.on_written: Callable[[list[str]], None] | None = None
        self._recovered = False
        self._last = threading.local()

    @property
    def commit_failure(self) -> CommitFailure | None:
        """Why this thread's last operation saved its files but could not commit them."""
        return getattr(self._last, "failure", None)

    @contextmanager
    def operation(
        self, scope: ScopeId, name: str, *, source: str, query_id: int | str | None = None
    ) -> Iterator[Txn]:
        # Every operation ends by writing the session's audit log: a session name that can
        # have no folder must refuse now, before (with isolation bot) an episode is written.
        self.layout.audit_path(scope)
        with self.lock.hold():
            if not self._recovered:  # under the lock: no other MemVault writer is mid-write
                recover_on_open(self.layout, git=self.git)
                self._recovered = True
            txn = Txn(scope, source, query_id, name=name, git=self.git)
            with journaled(txn, self.layout):
                yield txn
                finish(txn, name, self.layout, git=self.git)
            self._last.failure = txn.commit_failure(self.layout)
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
        priority: str | None = None,
        confidence: float | None = None,
        expires_at: datetime | None = None,
        expires_in: str | timedelta | None = None,
        verified: bool | None = None,
    ) -> Episode:
        """Write one new episode. `priority` defaults to what `importance` maps onto;
        `expires_in` is a duration like "7d" (vault.durations) counted from now."""
        episode = self.new_episode(
            text,
            speaker,
            tags,
            importance,
            key,
            category,
            source,
            created_at,
            status,
            priority=priority,
            confidence=confidence,
            expires_at=expires_at,
            expires_in=expires_in,
            verified=verified,
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
        episode = create_episode_file(self.layout, txn.scope, episode, episode_id, txn)
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
        **fields: Any,
    ) -> Episode:
        """A checked new episode (id still empty), dated by this vault's clock if undated;
        `fields`: build_episode's priority, confidence, expires_at, expires_in."""
        return build_episode(
            text,
            speaker,
            tags,
            importance,
            key,
            category,
            source,
            created_at,
            status,
            clock=self.clock,
            **fields,
        )

    def _set_status(
        self,
        stored: StoredEpisode,
        status: str,
        txn: Txn,
        *,
        superseded_by: str | None = None,
        expected_hash: str | None = None,
    ) -> None:
        changes: dict[str, object] = {"status": status, "updated_at": self.stamp()}
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
    ) -> StatusChange:
        """archive (status archived) or restore (status active) one episode of this scope.

        Asking for the status it already has succeeds and writes nothing (no file, audit
        line or commit), like verifying a verified one: a retried script, a second click or
        `!memory` sent twice is no error. `changed` says which it was."""
        if status not in ("archived", "active"):
            raise BadRequestError(f"status must be archived or active (got {status!r})")
        with self.lock.hold():
            stored = self.find_episode(scope, episode_id)
            if stored.episode.status == status:
                return StatusChange(stored.episode, changed=False)
            op = "archive" if status == "archived" else "restore"
            with self.operation(scope, op, source=source, query_id=query_id) as txn:
                self._set_status(stored, status, txn, expected_hash=expected_hash)
        return StatusChange(self.find_episode(scope, episode_id).episode, changed=True)

    def archive(self, scope: ScopeId, episode_id: str, **kw: object) -> Episode:
        return self.change_status(scope, episode_id, "archived", **kw).episode  # type: ignore[arg-type]

    def restore(self, scope: ScopeId, episode_id: str, **kw: object) -> Episode:
        return self.change_status(scope, episode_id, "active", **kw).episode  # type: ignore[arg-type]

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
    ) -> Forgotten:
        """Delete the episode's file (git history still has it: `git log -- <path>`).

        Bytes git does not hold yet (a person's uncommitted edit, a file written by hand) are
        committed first, alone, so the delete never loses them; if that commit fails, nothing
        is deleted. Without git (`--no-git`, no repository) a forget is final.
        """
        with self.lock.hold():
            stored = self.find_episode(scope, episode_id)
            with self.operation(scope, "forget", source=source, query_id=query_id) as txn:
                # Inside the operation: after its start-up recovery (a stale git lock), and a
                # failure here ends it before anything is deleted or logged.
                kept = self.keep_in_git(stored)
                note = f" (its uncommitted changes are kept in commit {kept[:12]})" if kept else ""
                remove_file(stored.path)
                txn.written.append(stored.path)
                txn.record("forget", "episode", stored.episode.id, stored.episode.body + note)
        return Forgotten(stored.episode, stored.rel, kept)

    def keep_in_git(self, stored: StoredEpisode) -> str | None:
        """Commit the file alone if git does not hold its bytes yet; call under the lock,
        before deleting it. Returns that commit's sha (None: nothing to keep, or no git)."""
        if not self.git:
            return None
        message = (
            f"keep {stored.rel} before forget\n\nIt had changes git did not hold yet (a "
            f"person's edit?); `git show <this commit>:{stored.rel}` gives them back.\n"
        )
        try:  # None when git already holds these bytes (or the vault is no repository)
            kept = gitlog.commit_paths(self.root, [stored.rel], message)
        except (gitlog.GitCommitError, OSError) as exc:
            raise ConflictError(
                f"{stored.rel} has changes git does not hold yet, and committing them before "
                f"the delete failed ({exc}): nothing was deleted; retry, or commit or delete "
                "the file by hand"
            ) from exc
        if kept:
            log.warning("op=forget_kept_uncommitted path=%s commit=%s", stored.rel, kept[:12])
        return kept

    def stamp(self) -> datetime:
        """The `updated_at` an operation writes: this vault's clock, in UTC."""
        return self.clock().astimezone(UTC)

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
