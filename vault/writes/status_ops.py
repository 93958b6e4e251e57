"""The status-changing operations of vault.writes.operations.Vault: archive/restore and forget
(the Vault methods of the same names are these functions, bound). What a status becomes is
decided by vault.writes.lifecycle; what may be committed by vault.git.secret_guard."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from vault.errors import BadRequestError
from vault.files.safewrite import ConflictError, remove_file
from vault.git import gitlog, secret_guard
from vault.git.secret_guard import Kept, SecretInFileError, kept_note
from vault.layout.keys import ScopeId
from vault.layout.store import StoredEpisode
from vault.writes import lifecycle
from vault.writes.op_results import Forgotten, StatusChange
from vault.writes.transaction import Txn

if TYPE_CHECKING:
    from vault.writes.core import VaultCore

log = logging.getLogger(__name__)


def change_status(
    vault: VaultCore,
    scope: ScopeId,
    episode_id: str,
    status: str,
    *,
    source: str = "user",
    query_id: int | str | None = None,
    expected_hash: str | None = None,
) -> StatusChange:
    """archive (status archived) or restore (status active) one episode of this scope.

    Restore follows vault.writes.lifecycle: while a newer memory replaces it, the episode goes
    back to superseded, not active (`StatusChange.note` says so). Asking for the status
    it already has succeeds and writes nothing (no file, audit line or commit), like
    verifying a verified one: a retried script, a second click or `!memory` sent twice
    is no error. `changed` says which it was."""
    if status not in ("archived", "active"):
        raise BadRequestError(f"status must be archived or active (got {status!r})")
    op = "archive" if status == "archived" else "restore"
    with vault.lock.hold():
        chat = vault.load_episodes(scope)[0]
        stored = vault.find_episode(scope, episode_id)
        ep = stored.episode
        if status == "archived" or ep.status == "active":
            plan = [lifecycle.Change(ep.id, status, ep.superseded_by)]
        else:
            plan = lifecycle.restored([s.episode for s in chat], ep)
        first = plan[0]
        if (first.status, first.superseded_by) == (ep.status, ep.superseded_by) or (
            ep.status == status == "archived"
        ):
            return StatusChange(ep, changed=False)
        by_id = {s.episode.id: s for s in chat}
        targets = [(stored, first), *((by_id[c.id], c) for c in plan[1:] if c.id in by_id)]
        for target, _ in targets:
            vault.refuse_secret(target, op)
        with vault.operation(scope, op, source=source, query_id=query_id) as txn:
            for target, change in targets:
                sha = expected_hash if target is stored else target.sha
                vault.apply(target, change, txn, expected_hash=sha)
    now = vault.find_episode(scope, episode_id).episode
    return StatusChange(now, changed=True, superseded=tuple(c.id for c in plan[1:]))


def forget(
    vault: VaultCore,
    scope: ScopeId,
    episode_id: str,
    *,
    source: str = "user",
    query_id: int | str | None = None,
) -> Forgotten:
    """Delete the episode's file (git history still has it: `git log -- <path>`).

    Bytes git does not hold yet (a person's uncommitted edit, a file written by hand) are
    kept first, so the delete never loses them: committed alone, or, when they hold what
    looks like a secret, copied outside git to .memvault/forgotten/ (vault.git.secret_guard);
    if that fails, nothing is deleted. Memories the forgotten one had replaced follow
    vault.writes.lifecycle.after_forget. Without git (`--no-git`, no repository) a forget is final.
    """
    with vault.lock.hold():
        chat = vault.load_episodes(scope)[0]
        stored = vault.find_episode(scope, episode_id)
        with vault.operation(scope, "forget", source=source, query_id=query_id) as txn:
            # Inside the operation: after its start-up recovery (a stale git lock), and a
            # failure here ends it before anything is deleted or logged.
            kept = keep_before_delete(vault, [stored.rel], f"forget {stored.rel}")
            note = kept_note(kept)
            remove_file(stored.path)
            txn.written.append(stored.path)
            txn.record("forget", "episode", stored.episode.id,
                       stored.episode.body + (f" ({note})" if note else ""))  # fmt: skip
            follow_forget(vault, chat, {stored.episode.id}, txn)
    return Forgotten(stored.episode, stored.rel, kept.commit, kept.aside)


def follow_forget(vault: VaultCore, chat: list[StoredEpisode], gone: set[str], txn: Txn) -> None:
    """Memories that named a forgotten one as their replacement (vault.writes.lifecycle); one
    holding a secret is left as it is (never committed), and the log says so."""
    by_id = {s.episode.id: s for s in chat}
    for change in lifecycle.after_forget([s.episode for s in chat], gone):
        target = by_id[change.id]
        try:
            vault.refuse_secret(target, "relinking it")
        except SecretInFileError as exc:
            log.warning("op=forget_relink_skipped id=%s reason=%r", change.id, str(exc))
            continue
        vault.apply(target, change, txn, expected_hash=target.sha)


def keep_before_delete(vault: VaultCore, rels: list[str], what: str) -> Kept:
    """vault.git.secret_guard.keep_before_delete; call under the lock, before deleting."""
    try:
        kept = secret_guard.keep_before_delete(
            vault.root, vault.layout.state_dir, rels, what, git=vault.git
        )
    except (gitlog.GitCommitError, OSError) as exc:
        raise ConflictError(
            f"{', '.join(rels[:3])} had changes git does not hold yet, and keeping them "
            f"before the delete failed ({exc}): nothing was deleted; retry, or commit or "
            "delete the file by hand"
        ) from exc
    if kept.commit:
        log.warning("op=kept_uncommitted files=%d commit=%s", len(rels), kept.commit[:12])
    return kept
