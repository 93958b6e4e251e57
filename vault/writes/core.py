"""VaultCore: the machinery every memory operation of vault.writes.operations.Vault runs on.

An operation takes the vault lock, writes its files atomically inside a Txn, appends to the
session's audit log and commits exactly the files it wrote. The operation modules
(status_ops, profile_ops, ...) take a VaultCore, so none of them imports the Vault that
calls them.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from vault.files.safewrite import VaultLock, rewrite
from vault.format.episodes import edit_front_matter
from vault.format.model import DEFAULT_PROFILE_LIMITS, Episode, ProfileLimits
from vault.git.secret_guard import guarding, refuse_secret_file
from vault.layout.keys import ScopeId
from vault.layout.store import StoredEpisode, VaultReader
from vault.writes import lifecycle
from vault.writes.duplicates import (
    Duplicate,
    DuplicateFinder,
    FileDuplicates,
    KnownTexts,
    Probe,
    is_correction,
)
from vault.writes.episode_create import build_episode, create_episode_file
from vault.writes.new_episode import NewEpisode
from vault.writes.transaction import (
    CommitFailure,
    Txn,
    finish,
    journaled,
    notify,
    now_utc,
    recover_on_open,
)

log = logging.getLogger(__name__)

NEW = "\x00new"  # the id a new episode is planned under before its file names it


class VaultCore(VaultReader):
    """The vault's writing machinery: its lock, clock and operations (transactions), and the
    steps every operation is made of (add an episode, apply a status change)."""

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
        # What a write is compared with before it is stored (vault.writes.duplicates): the
        # files (exact text); a process holding an index installs its own (Engine.attach),
        # which also finds the same thing said in other words.
        self.duplicates: DuplicateFinder = FileDuplicates(self)
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
            with journaled(txn, self.layout), guarding(self.root, git=self.git):
                yield txn
                finish(txn, name, self.layout, git=self.git)
            self._last.failure = txn.commit_failure(self.layout)
        if self.on_written is not None and txn.written:
            notify(self.on_written, sorted({self.layout.rel(p) for p in txn.written}))

    # -- the steps operations are made of ------------------------------------------

    def add_episode(
        self,
        txn: Txn,
        episode: Episode,
        episode_id: str | None = None,
        *,
        audit_as: str | None = None,
    ) -> Episode:
        """Write a new episode file inside `txn`; a `key` supersedes older active episodes
        (vault.writes.lifecycle.arrivals: a newer active one of its key supersedes it instead)."""
        arriving = replace(episode, id=episode_id or episode.id or NEW)
        # Only an active memory with a key can supersede or be superseded (lifecycle.arrivals):
        # reading the whole chat for every other write made n writes cost n^2 file reads.
        keyed = bool(arriving.key) and arriving.status == lifecycle.ACTIVE
        chat = self.load_episodes(txn.scope)[0] if keyed else []
        plan = lifecycle.arrivals([s.episode for s in chat], [arriving])
        olds = {s.episode.id: s for s in chat}
        others = [c for c in plan if c.id != arriving.id and c.id in olds]
        for change in others:  # before the new file: a refusal leaves nothing half done
            self.refuse_secret(olds[change.id], "superseding it by the new memory")
        mine = next((c for c in plan if c.id == arriving.id), None)
        if mine is not None:
            episode = replace(episode, status=mine.status, superseded_by=mine.superseded_by)
        episode = create_episode_file(self.layout, txn.scope, episode, episode_id, txn)
        if audit_as:
            txn.record(audit_as, "episode", episode.id, episode.body)
        for change in others:
            self.apply(olds[change.id], replace(change, superseded_by=episode.id), txn)
        return episode

    def find_duplicate(
        self,
        scope: ScopeId,
        episode: Episode,
        *,
        ignore: Iterable[str] = (),
        chat: KnownTexts | None = None,
    ) -> Duplicate | None:
        """The memory of `scope` that already says what `episode` (built, not yet written)
        says, or None; a correction or an episode written inactive is never a duplicate."""
        if episode.status != lifecycle.ACTIVE or is_correction(episode.tags):
            return None
        found = self.duplicates.find(Probe.of(scope, episode, self.clock(), ignore), chat)
        if found is not None:
            log.info(
                "event=duplicate_found scope=%s of=%s match=%s cosine=%s",
                scope.session_key,
                found.id,
                found.match,
                "-" if found.cosine is None else f"{found.cosine:.3f}",
            )
        return found

    def new_episode(self, request: NewEpisode) -> Episode:
        """The checked, redacted episode `request` asks for (id still empty), dated by this
        vault's clock if undated: vault.writes.episode_create.build_episode."""
        return build_episode(request, clock=self.clock)

    def _set_status(
        self,
        stored: StoredEpisode,
        status: str,
        txn: Txn,
        *,
        superseded_by: str | None = None,
        expected_hash: str | None = None,
    ) -> None:
        """A status change (archiving keeps the episode's `superseded_by`)."""
        link = stored.episode.superseded_by if status == "archived" else superseded_by
        change = lifecycle.Change(stored.episode.id, status, link)
        self.apply(stored, change, txn, expected_hash=expected_hash)

    def apply(
        self,
        stored: StoredEpisode,
        change: lifecycle.Change,
        txn: Txn,
        *,
        expected_hash: str | None = None,
    ) -> None:
        """Write one vault.writes.lifecycle change into the episode's file, with its audit line."""
        changes = lifecycle.front_matter(stored.episode, change.status, change.superseded_by)
        changes["updated_at"] = self.stamp()
        rewrite(
            stored.path,
            lambda data: edit_front_matter(data, changes, current=stored.episode),
            expected_hash=expected_hash,
        )
        txn.written.append(stored.path)
        verb = {"superseded": "supersede", "archived": "archive", "active": "restore"}
        by = change.superseded_by if change.status == "superseded" else None
        note = f" by {by}" if by else ""
        txn.record(
            verb[change.status], "episode", stored.episode.id, f"{stored.episode.body}{note}"
        )

    def refuse_secret(self, stored: StoredEpisode, doing: str) -> None:
        """vault.git.secret_guard's rule, before an operation that keeps this memory
        writes."""
        if self.git:
            refuse_secret_file(self.root, stored.rel, f"{doing} ({stored.episode.id})")

    def stamp(self) -> datetime:
        """The `updated_at` an operation writes: this vault's clock, in UTC."""
        return self.clock().astimezone(UTC)
