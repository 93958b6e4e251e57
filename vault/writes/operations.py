"""Memory operations: the one write path the CLI, the plugin and the console all call.

Each operation takes the vault lock, writes its files atomically, appends to the session's
audit log and commits exactly the files it wrote (vault.writes.core.VaultCore), so git
history reads as a log of memory operations and a person's own uncommitted edits are never
swept into it. A new memory arrives as one vault.writes.new_episode.NewEpisode, a profile
change as one vault.writes.profile_edit.ProfileEdit.
"""

from __future__ import annotations

from vault.errors import BadRequestError
from vault.format.model import Episode
from vault.layout.keys import ScopeId
from vault.writes import profile_ops, status_ops
from vault.writes.core import VaultCore
from vault.writes.new_episode import NewEpisode
from vault.writes.op_results import Remembered


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

    def remember_once(self, request: NewEpisode, *, allow_duplicate: bool = False) -> Remembered:
        """Write one new episode unless its scope already holds it (vault.writes.duplicates,
        with this vault's finder): then nothing is written and the answer names the memory
        that says it. Checked under the vault lock, so two writers of one text store it once.
        `allow_duplicate`: a person insists (`memvault remember --allow-duplicate`)."""
        with self.lock.hold():
            if not allow_duplicate:
                found = self.find_duplicate(request.scope, self.new_episode(request))
                if found is not None:
                    return Remembered(found.episode, found)
            return Remembered(self.remember(request))

    # archive (status archived) or restore (status active), forget and what a delete keeps:
    # the functions of vault.writes.status_ops, bound as methods (one signature, theirs).
    change_status = status_ops.change_status
    forget = status_ops.forget
    follow_forget = status_ops.follow_forget
    keep_before_delete = status_ops.keep_before_delete

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

    # -- profiles -----------------------------------------------------------------------

    # set/add/remove one profile field as a vault.writes.profile_edit.ProfileEdit says (the
    # rules: vault.format.profile_edit): vault.writes.profile_ops.update_profile, bound.
    update_profile = profile_ops.update_profile
