"""The round trip through each surface a person uses: `memvault export` / `import` (the
installed console script) and the Memory Console's /export and /import. Category, source,
verified, confidence, priority, expiry, updated_at and unknown fields all come back, and an
expired memory is still not recalled in the target chat (issue 14, Build 5)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from console.api import dispatch
from console.context import ConsoleContext
from tests.cli.test_cli import SCOPE, run, run_json
from vault.format.model import Speaker
from vault.layout.keys import ScopeId
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

OTHER = ["--bot", "b1", "--session", "group_456"]


@pytest.fixture
def cli_vault(tmp_path):
    root = tmp_path / "memory"
    run("init", str(root))
    return root


def seed(vault: Vault, scope: ScopeId) -> tuple[str, str]:
    now = datetime.now(UTC)
    kept = vault.remember(
        NewEpisode(
            scope,
            "Pia restores old pianos",
            speaker=Speaker("u8", "Pia"),
            tags=["Craft"],
            category="skill",
            priority="high",
            confidence=0.55,
            source="agent",
            expires_at=now + timedelta(days=60),
        ),
    )
    gone = vault.remember(
        NewEpisode(
            scope,
            "Pia's piano workshop opens at noon today",
            source="agent",
            expires_at=now - timedelta(minutes=5),
        ),
    )
    stored = vault.find_episode(scope, kept.id)
    text = stored.path.read_text(encoding="utf-8")
    stored.path.write_text(text.replace("---\nPia", "workshop: Bergen\n---\nPia"), "utf-8")
    return kept.id, gone.id


def by_id(items: list[dict]) -> dict[str, dict]:
    return {item["id"]: item for item in items}


def test_memvault_export_then_import_keeps_every_field(cli_vault, tmp_path):
    vault = Vault(cli_vault)
    kept, gone = seed(vault, ScopeId("b1", "group_123"))
    run("verify", *SCOPE, kept, vault=cli_vault)
    out = tmp_path / "chat.json"
    run("export", *SCOPE, "--out", str(out), vault=cli_vault)
    first = json.loads(out.read_text(encoding="utf-8"))
    item = by_id(first["episodes"])[kept]
    assert (item["category"], item["source"], item["verified"]) == ("skill", "agent", True)
    assert (item["confidence"], item["priority"], item["extra"]) == (
        0.55, "high", {"workshop": "Bergen"},
    )  # fmt: skip
    result = run_json("import", str(out), *OTHER, vault=cli_vault)
    assert result["imported"] == 2 and result["renamed"] == {}
    second = json.loads(run("export", *OTHER, vault=cli_vault).stdout)
    assert second["episodes"] == first["episodes"]
    hits = run_json("search", "piano workshop", *OTHER, vault=cli_vault)
    assert [h["id"] for h in hits] == [kept]  # the expired one stays expired
    assert gone in by_id(second["episodes"])  # ... and is kept on disk


def test_console_export_then_import_keeps_every_field(vault):
    a, b = ScopeId("bot-1", "group_1"), ScopeId("bot-1", "group_2")
    kept, _ = seed(vault, a)
    ctx = ConsoleContext(vault=vault, engine=None)

    def scope_body(scope: ScopeId) -> dict[str, str | None]:
        return {"bot": scope.bot, "session": scope.session, "isolation": scope.isolation}

    stored = vault.find_episode(a, kept)
    dispatch(ctx, "/episode/verify", {"scope": scope_body(a), "id": kept,
                                      "expected_sha256": stored.sha})  # fmt: skip
    first = dispatch(ctx, "/export", {"scope": scope_body(a)})
    payload = json.loads(json.dumps(first))  # as the page sends it back
    result = dispatch(ctx, "/import", {"scope": scope_body(b), "payload": payload})
    assert result["imported"] == 2
    second = dispatch(ctx, "/export", {"scope": scope_body(b)})
    assert second["episodes"] == first["episodes"]
    assert by_id(second["episodes"])[kept]["verified"] is True
    mine = {s.episode.id: s.episode for s in vault.load_episodes(a)[0]}
    assert {s.episode.id: s.episode for s in vault.load_episodes(b)[0]} == mine
