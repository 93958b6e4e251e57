"""`updated_at` (issue 14): written by every MemVault change to an episode, never by sync.

Real files and the real indexes; the vault's clock ticks a minute per reading so each change
has its own time.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from indexer.engine import Engine
from vault.layout.keys import ScopeId
from vault.writes.consolidation import consolidate
from vault.writes.create import init_vault
from vault.writes.episode_edit import edit_episode
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

SCOPE = ScopeId("bot-1", "group_upd")


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


@pytest.fixture
def world(tmp_path: Path) -> Iterator[tuple[Vault, Engine, Clock]]:
    root = tmp_path / "memory"
    init_vault(root, git=False)
    clock = Clock()
    vault = Vault(root, git=False, clock=clock)
    engine = Engine.open(root)
    engine.attach(vault)
    try:
        yield vault, engine, clock
    finally:
        engine.close()


def _stamp(vault: Vault, engine: Engine, episode_id: str) -> datetime:
    stored = vault.find_episode(SCOPE, episode_id)
    assert stored.episode.updated_at is not None
    line = [x for x in stored.path.read_text("utf-8").splitlines() if x.startswith("updated_at:")]
    assert len(line) == 1  # written once, never duplicated by a later edit
    (doc,) = [
        d for d in engine.manifest.scope_docs([SCOPE.index_key]) if d.episode_id == episode_id
    ]
    assert doc.updated_at == int(stored.episode.updated_at.timestamp())  # the index follows
    return stored.episode.updated_at


def test_updated_at_moves_on_each_change(world) -> None:
    vault, engine, clock = world
    ep = vault.remember(
        NewEpisode(SCOPE, "Dana's locker is number 12", key="locker", source="agent")
    )
    created = _stamp(vault, engine, ep.id)
    assert created == ep.created_at == clock.now
    seen = [created]

    def changed(note: str) -> None:
        now = _stamp(vault, engine, ep.id)
        assert now > seen[-1], note
        assert now == clock.now, note  # the time of that change, not of a later reading
        assert vault.find_episode(SCOPE, ep.id).episode.created_at == created, note
        seen.append(now)

    edit_episode(vault, SCOPE, ep.id, expected_hash=None, content="Dana's locker is number 14")
    changed("edit body")
    edit_episode(vault, SCOPE, ep.id, expected_hash=None, tags=["work"])
    changed("edit tags")
    edit_episode(vault, SCOPE, ep.id, expected_hash=None, verified=True)
    changed("verify")
    vault.archive(SCOPE, ep.id)
    changed("archive")
    vault.restore(SCOPE, ep.id)
    changed("restore")
    newer = vault.remember(NewEpisode(SCOPE, "Dana's locker is number 20", key="locker"))
    changed("superseded by a new memory with the same key")
    assert vault.find_episode(SCOPE, ep.id).episode.superseded_by == newer.id

    before = _stamp(vault, engine, newer.id)
    other = vault.remember(NewEpisode(SCOPE, "Dana moved lockers twice this year"))
    stored = [vault.find_episode(SCOPE, i) for i in (newer.id, other.id)]
    summary = vault.new_episode(
        NewEpisode(
            SCOPE,
            "Dana's locker is 20 after two moves",
            None,
            (),
            2,
            None,
            None,
            "user",
            created_at=None,
            status="active",
        )
    )
    done = consolidate(vault, SCOPE, summary, stored)
    assert _stamp(vault, engine, newer.id) > before  # archived into the summary
    assert _stamp(vault, engine, done.summary.id) == done.summary.updated_at


def test_an_edit_that_changes_nothing_keeps_updated_at(world) -> None:
    vault, engine, _ = world
    ep = vault.remember(NewEpisode(SCOPE, "Eve prefers window seats", tags=["travel"]))
    before = vault.find_episode(SCOPE, ep.id)
    edit_episode(vault, SCOPE, ep.id, expected_hash=None, tags=["travel"])
    after = vault.find_episode(SCOPE, ep.id)
    assert after.sha == before.sha and after.episode.updated_at == ep.updated_at
