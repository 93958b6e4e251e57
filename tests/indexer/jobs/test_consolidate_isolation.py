"""A consolidation touches one chat only, and all or nothing (real vault, index, git)."""

from __future__ import annotations

import tempfile
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from indexer.engine import Engine
from indexer.jobs.consolidate import ConsolidateSettings, preview, run
from tests.conftest import git
from tests.helpers.consolidate_helpers import CHAT, NOW, OTHER, answer, seed, tree_hash
from vault.errors import BadRequestError
from vault.writes.consolidation import consolidate
from vault.writes.create import init_vault
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault
from vault.writes.profile_edit import ProfileEdit

SENTENCES = [
    "The book club meets on Fridays.",
    "Our office moved to the fifth floor.",
    "小王下个月去北京出差。",
    "Grace adopted a grey cat called Pixel.",
    "李伟的女儿在学钢琴。",
    "Heidi runs the Berlin marathon in autumn.",
    "The team retro is on Tuesday mornings.",
    "Ivan repaired the balcony door.",
]
MEMORIES = st.lists(
    st.tuples(st.integers(0, 7), st.integers(0, 300), st.integers(1, 5)), max_size=5
)


def fill(vault: Vault, scope, rows) -> None:
    # Two old ones always: every example has something to consolidate.
    for n, days in enumerate((150, 160)):
        vault.remember(
            NewEpisode(scope, f"{SENTENCES[n]} ({scope.session})", created_at=NOW - days * DAY)
        )
    for sentence, days, importance in rows:
        text = f"{SENTENCES[sentence]} #{days}"
        vault.remember(NewEpisode(scope, text, importance=importance, created_at=NOW - days * DAY))


DAY = timedelta(days=1)


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(MEMORIES, MEMORIES)
def test_another_chats_files_are_never_touched(fake_llm, mine, theirs):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "memory"
        init_vault(root)
        vault = Vault(root)
        fill(vault, CHAT, mine)
        fill(vault, OTHER, theirs)
        other = tree_hash(root, under="bots/bot-1/sessions/group_2")
        mine_before = tree_hash(root, under="bots/bot-1/sessions/group_1")
        fake_llm.script(answer())
        with Engine.open(root) as engine:
            engine.attach(vault)
            made = preview(fake_llm.llm(), vault, engine, CHAT, ConsolidateSettings(), now=NOW)
            assert len(made.archive) >= 2
            done = run(vault, engine, made)
        assert tree_hash(root, under="bots/bot-1/sessions/group_2") == other
        changed = git(root, "show", "--name-only", "--format=", "HEAD").split()
        assert all(p.startswith("bots/bot-1/sessions/group_1/") for p in changed)
        archived = {v.rel for v in made.archive}
        touched = archived | {done.rel, "bots/bot-1/sessions/group_1/audit.jsonl"}
        assert set(changed) == touched
        mine_after = tree_hash(root, under="bots/bot-1/sessions/group_1")
        # Every file of this chat that was not selected is byte for byte as it was.
        assert {k: v for k, v in mine_after.items() if k not in touched} == {
            k: v for k, v in mine_before.items() if k not in touched
        }


def test_a_write_failing_midway_puts_every_file_back_and_commits_nothing(vault):
    s = seed(vault, CHAT)
    before = tree_hash(vault.root, under="bots")
    head = git(vault.root, "rev-parse", "HEAD")
    originals = [vault.find_episode(CHAT, e.id) for e in (s.old, s.chatter)]
    summary = vault.new_episode(
        NewEpisode(
            CHAT,
            "A summary.",
            None,
            (),
            2,
            None,
            None,
            "consolidation",
            created_at=NOW,
            status="active",
        )
    )
    # The summary and both archives are written before this edit fails (nothing to remove).
    failing = ProfileEdit(CHAT, "traits", "remove", "a trait nobody has")
    with pytest.raises(BadRequestError, match="no item"):
        consolidate(vault, CHAT, summary, originals, [failing])
    assert tree_hash(vault.root, under="bots") == before
    assert git(vault.root, "rev-parse", "HEAD") == head
    assert git(vault.root, "status", "--porcelain").strip() == ""
    # and the next operation commits only its own files, with no word of the failed one
    vault.remember(NewEpisode(CHAT, "Next memory."))
    message = git(vault.root, "log", "-1", "--format=%B")
    assert "consolidate" not in message
