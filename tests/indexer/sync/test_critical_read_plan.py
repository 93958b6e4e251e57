"""The chat's critical memories are read every turn (the injector, Engine.critical): through
the manifest's chunks_priority index, never by parsing every doc of the chat (on a
10,000-episode chat that parse took 36 ms a turn, more than the whole injector's budget)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from indexer.engine import Engine
from vault.layout.keys import ScopeId
from vault.writes.create import init_vault
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

SCOPE = ScopeId("bot-1", "group_1")


def plan_of_critical(engine: Engine) -> list[str]:
    db: sqlite3.Connection = engine.manifest._db
    executed: list[str] = []
    db.set_trace_callback(executed.append)
    try:
        found = engine.critical(SCOPE)
    finally:
        db.set_trace_callback(None)
    assert [r.doc.text for r in found] == ["Allergic to peanuts"]
    (sql,) = [s for s in executed if "priority" in s]
    return [row[3] for row in db.execute(f"EXPLAIN QUERY PLAN {sql}")]


def test_the_critical_read_uses_the_priority_index(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    init_vault(root, git=False)
    vault = Vault(root, git=False)
    for i in range(30):
        vault.remember(NewEpisode(SCOPE, f"Ordinary note number {i}"))
    vault.remember(NewEpisode(SCOPE, "Allergic to peanuts", priority="critical"))
    with Engine.open(root) as engine:
        engine.attach(vault)
        engine.reconcile()
        plan = plan_of_critical(engine)
    assert any("USING INDEX chunks_priority" in step for step in plan), plan
    assert not any(step.startswith("SCAN") for step in plan), plan


def test_a_manifest_made_before_the_index_gets_it_on_open(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    init_vault(root, git=False)
    vault = Vault(root, git=False)
    vault.remember(NewEpisode(SCOPE, "Allergic to peanuts", priority="critical"))
    with Engine.open(root) as engine:
        engine.attach(vault)
        engine.reconcile()
        path = engine.manifest.path
    with sqlite3.connect(path) as db:  # as an older MemVault left it
        db.execute("DROP INDEX chunks_priority")
    with Engine.open(root) as engine:
        engine.attach(vault)
        assert any("USING INDEX chunks_priority" in step for step in plan_of_critical(engine))
