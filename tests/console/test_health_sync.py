"""The console's Health shows replicas (vault.git.syncstate): a file `memvault sync` kept
twice, and a last sync that failed, in the git card and in the reader's language."""

from __future__ import annotations

import pytest

from console.api import dispatch
from tests.console.test_health_codes import shown
from vault.git import gitsync


def git_lines(ctx) -> tuple[dict[str, dict], dict]:
    out = dispatch(ctx, "/health", {})
    (card,) = [c for c in out["cards"] if c["id"] == "git"]
    return {line["code"]: line for line in card["lines"]}, out


def test_a_failing_sync_then_a_kept_conflict_show_in_the_git_card(ctx, tmp_path):
    assert "sync_failing" not in git_lines(ctx)[0]  # never synced: no line at all
    with pytest.raises(gitsync.SyncError):
        gitsync.sync(ctx.vault, str(tmp_path / "no-such-remote.git"))
    lines, _ = git_lines(ctx)
    assert lines["sync_failing"]["level"] != "green"
    assert "no-such-remote.git" in shown("zh_Hans", lines["sync_failing"])

    # A version `sync` kept beside its conflicting file (the name gitmerge gives it).
    copy = ctx.vault.root / "bots/bot-a/sessions/group_1/episodes/2026/11/ep_x.md.conflict-0a1b2c3d"
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_text("---\nid: ep_x\n---\nthe other replica's version\n", encoding="utf-8")
    lines, out = git_lines(ctx)
    assert lines["sync_conflicts"]["params"]["count"] == 1
    assert "ep_x.md.conflict-0a1b2c3d" in shown("en_US", lines["sync_conflicts"])
    assert any(p["path"].endswith("ep_x.md.conflict-0a1b2c3d") for p in out["problems"])
