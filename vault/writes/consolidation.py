"""Consolidation's write: one summary episode, its originals archived, optional profile edits,
all in one operation (one git commit, one audit line per change).

The caller (indexer.jobs.consolidate.run) decided what to write from a preview a person saw; this
only refuses to write over anything that changed since (each file's sha is the version the
preview was made from), and is all-or-nothing: when a write fails midway, the files already
written are put back as they were, so no chat is left half consolidated.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from vault.files.safewrite import ConflictError, content_hash, remove_file, rewrite
from vault.format.episodes import edit_front_matter
from vault.format.model import Episode
from vault.layout.keys import ScopeId
from vault.layout.links import read_vault_file
from vault.layout.store import StoredEpisode, read_episode_file
from vault.writes import lifecycle
from vault.writes.duplicates import Duplicate
from vault.writes.operations import Vault
from vault.writes.profile_edit import ProfileEdit
from vault.writes.profile_ops import edit_profile_in
from vault.writes.transaction import Txn

log = logging.getLogger(__name__)

SOURCE = "consolidation"  # the summary episode's `source:`


@dataclass(frozen=True)
class Consolidated:
    summary: Episode
    rel: str
    archived: tuple[str, ...]
    profile_edits: tuple[ProfileEdit, ...]
    # The summary was already remembered (vault.writes.duplicates): `summary` is that memory,
    # the originals were folded into it, and no new episode was written.
    duplicate: Duplicate | None = None


def profile_sha(vault: Vault, scope: ScopeId, speaker: str | None) -> str | None:
    """The sha of a profile file as it is now (None: no file yet)."""
    rel = vault.layout.rel(vault.profile_path(scope, speaker))
    try:
        data, _ = read_vault_file(vault.root, rel)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return content_hash(data)


def consolidate(
    vault: Vault,
    scope: ScopeId,
    summary: Episode,
    originals: Sequence[StoredEpisode],
    profile_edits: Sequence[ProfileEdit] = (),
    *,
    profile_shas: Mapping[str | None, str | None] | None = None,
    source: str = "user",
    into: Duplicate | None = None,
) -> Consolidated:
    """Write `summary` (id still empty) linking `originals`, archive each original with
    `consolidated_into`, and apply `profile_edits` (each of this `scope`), as one operation.

    ConflictError, before anything is written, when an original is no longer the version
    read (`StoredEpisode.sha`) or a profile is not at `profile_shas` (speaker -> sha, None =
    no file), so what a person approved is exactly what is applied.

    `into`: the chat already remembers the summary (an active memory outside `originals`):
    no summary is written, and the originals are folded into that memory instead.
    """
    ids = [s.episode.id for s in originals]
    summary = replace(
        summary, source=SOURCE, status="active", extra=(*summary.extra, ("consolidates", ids))
    )
    with vault.lock.hold():
        _check_unchanged(vault, scope, originals, profile_shas or {})
        for stored in originals:  # archiving commits the file: never one holding a secret
            vault.refuse_secret(stored, "consolidation")
        with vault.operation(scope, "consolidate", source=source) as txn:
            undo: list[Callable[[], None]] = []
            try:
                summary, rel = _write(vault, txn, summary, originals, profile_edits, undo, into)
            except BaseException:
                _roll_back(undo, txn)
                raise
    return Consolidated(summary, rel, tuple(ids), tuple(profile_edits), into)


def _write(
    vault: Vault,
    txn: Txn,
    summary: Episode,
    originals: Sequence[StoredEpisode],
    profile_edits: Sequence[ProfileEdit],
    undo: list[Callable[[], None]],
    into: Duplicate | None,
) -> tuple[Episode, str]:
    listed = ", ".join(s.episode.id for s in originals)
    if into is not None:  # already remembered: fold the originals into that memory
        summary, rel = into.episode, into.rel
        note = f"{into.said()}: {summary.body} (consolidates {listed})"
        txn.record("consolidate", "episode", summary.id, note)
    else:
        before = len(txn.written)
        summary = vault.add_episode(txn, summary)  # the vault's one way to create an episode
        created = txn.written[before]
        undo.append(_remover(created))
        rel = vault.layout.rel(created)
        txn.record("consolidate", "episode", summary.id, f"{summary.body} (consolidates {listed})")
    for stored in originals:
        # vault.writes.lifecycle: archived, `superseded_by` kept, plus where it was folded into.
        changes = lifecycle.front_matter(stored.episode, "archived", stored.episode.superseded_by)
        changes.update(consolidated_into=summary.id, updated_at=vault.stamp())
        data, _ = read_vault_file(vault.root, stored.rel)  # the bytes to put back
        if content_hash(data) != stored.sha:
            raise ConflictError(_changed(stored.rel))
        written = rewrite(
            stored.path,
            lambda raw, ep=stored.episode, ch=changes: edit_front_matter(raw, ch, current=ep),
            expected_hash=stored.sha,
        )
        undo.append(_restorer(stored.path, data, written))
        txn.written.append(stored.path)
        note = f"{stored.episode.body} (consolidated into {summary.id})"
        txn.record("archive", "episode", stored.episode.id, note)
    for edit in profile_edits:
        path = vault.profile_path(txn.scope, edit.speaker)
        old = _read_or_none(vault, path)
        sha = content_hash(old) if old is not None else None
        edit_profile_in(vault, txn, edit, expected_hash=sha)
        new = _read_or_none(vault, path)
        if new is not None and new != old:
            undo.append(_restorer(path, old, new) if old is not None else _remover(path))
    return summary, rel


def _check_unchanged(
    vault: Vault,
    scope: ScopeId,
    originals: Sequence[StoredEpisode],
    profile_shas: Mapping[str | None, str | None],
) -> None:
    for stored in originals:
        try:
            now = read_episode_file(vault.layout, stored.path)
        except (OSError, ValueError) as exc:
            raise ConflictError(f"{_changed(stored.rel)} ({exc})") from exc
        if now.sha != stored.sha:
            raise ConflictError(_changed(stored.rel))
    for speaker, sha in profile_shas.items():
        if profile_sha(vault, scope, speaker) != sha:
            rel = vault.layout.rel(vault.profile_path(scope, speaker))
            raise ConflictError(_changed(rel))


def _changed(rel: str) -> str:
    return (
        f"{rel} changed since the consolidation preview: nothing was changed; make a new "
        "preview, check it, and run that one"
    )


def _read_or_none(vault: Vault, path: Path) -> bytes | None:
    try:
        return read_vault_file(vault.root, vault.layout.rel(path))[0]
    except (FileNotFoundError, NotADirectoryError):
        return None


def _remover(path: Path) -> Callable[[], None]:
    return lambda: remove_file(path)


def _restorer(path: Path, original: bytes, written: bytes) -> Callable[[], None]:
    def put_back() -> None:
        # Only over our own write: a person's save in between wins (ConflictError, logged).
        rewrite(path, lambda _raw: original, expected_hash=content_hash(written))

    return put_back


def _roll_back(undo: list[Callable[[], None]], txn: Txn) -> None:
    failed = 0
    for step in reversed(undo):
        try:
            step()
        except (OSError, ConflictError) as exc:
            failed += 1
            log.warning(
                "op=consolidate_rollback_failed scope=%s error=%r", txn.scope.session_key, str(exc)
            )
    if not failed:
        # Everything is back as it was: nothing to log, nothing for a later commit to make up.
        txn.written.clear()
        txn.entries.clear()
