"""Memory operations: the one write path the CLI, the plugin and the console all call.

Each operation takes the vault lock, writes its files atomically, appends to the session's
audit log and commits exactly the files it wrote (vault.writes.core.VaultCore), so git
history reads as a log of memory operations and a person's own uncommitted edits are never
swept into it. A new memory arrives as one vault.writes.new_episode.NewEpisode.
"""

from __future__ import annotations

from typing import Any

from vault.format.model import Episode, Profile
from vault.layout.keys import ScopeId
from vault.layout.store import BadRequestError, StoredEpisode
from vault.redaction.secret_guard import Kept
from vault.writes import status_ops
from vault.writes.core import VaultCore
from vault.writes.new_episode import NewEpisode
from vault.writes.op_results import Forgotten, StatusChange
from vault.writes.profile_ops import update_profile
from vault.writes.transaction import Txn


class Vault(VaultCore):
    # -- episodes ---------------------------------------------------------------------

    def remember(self, request: NewEpisode) -> Episode:
        """Write one new episode, as `request` asks (vault.writes.new_episode)."""
        episode = self.new_episode(request)
        with self.operation(
            request.scope, "remember", source=request.source, query_id=request.query_id
        ) as txn:
            episode = self.add_episode(txn, episode, request.episode_id, audit_as="remember")
        return episode

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
        """archive (status archived) or restore (status active): vault.writes.status_ops."""
        return status_ops.change_status(
            self, scope, episode_id, status,
            source=source, query_id=query_id, expected_hash=expected_hash,
        )  # fmt: skip

    def archive(self, scope: ScopeId, episode_id: str, **kw: object) -> Episode:
        return self.change_status(scope, episode_id, "archived", **kw).episode  # type: ignore[arg-type]

    def restore(self, scope: ScopeId, episode_id: str, **kw: object) -> Episode:
        return self.change_status(scope, episode_id, "active", **kw).episode  # type: ignore[arg-type]

    def supersede(
        self, scope: ScopeId, old_id: str, new_id: str, *, source: str = "agent"
    ) -> Episode:
        """Mark `old_id` superseded by `new_id` (a correction): the newer must exist here."""
        with self.lock.hold():
            stored = self.find_episode(scope, old_id)
            newer = self.find_episode(scope, new_id).episode
            if newer.created_at < stored.episode.created_at:
                raise BadRequestError(
                    f"{new_id} is older than {old_id}: an older memory cannot supersede a newer one"
                )
            self.refuse_secret(stored, "supersede")
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
        """Delete the episode's file, keeping what git does not hold: vault.writes.status_ops."""
        return status_ops.forget(self, scope, episode_id, source=source, query_id=query_id)

    def follow_forget(self, chat: list[StoredEpisode], gone: set[str], txn: Txn) -> None:
        status_ops.follow_forget(self, chat, gone, txn)

    def keep_before_delete(self, rels: list[str], what: str) -> Kept:
        return status_ops.keep_before_delete(self, rels, what)

    # -- profiles -----------------------------------------------------------------------

    def update_profile(
        self,
        scope: ScopeId,
        field: str,
        action: str,
        value: str,
        **kw: Any,
    ) -> Profile:
        """set/add/remove one profile field; see vault.format.profile_edit for the rules."""
        return update_profile(self, scope, field, action, value, **kw)
