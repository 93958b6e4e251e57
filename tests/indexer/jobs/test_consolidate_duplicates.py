"""Consolidation never stores its summary twice: when the chat already remembers what the
summary says (an active memory it does not fold), running the preview writes no new memory
and folds the originals into that one (vault.writes.consolidation `into`); another chat's
identical text is no reason. Real vault, indexes and git; the tiny TEST FAKE embedder (the
selection here needs no model: duplicates off); a FAKE LLM answers the summary."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from indexer.engine import Engine
from indexer.jobs.consolidate import ConsolidateSettings, preview, run
from tests.helpers.consolidate_helpers import CHAT, DAY, NOW, OTHER, SUMMARY, answer, seed
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

SETTINGS = ConsolidateSettings(duplicates=False)


@pytest.fixture
def engine(vault: Vault, tiny_embedder) -> Iterator[Engine]:
    with Engine.open(vault.root, embedder=tiny_embedder) as opened:
        opened.attach(vault)
        yield opened


def files(vault: Vault) -> int:
    return len(vault.load_episodes(CHAT)[0])


def test_a_summary_the_chat_already_remembers_folds_the_originals_into_it(vault, engine, fake_llm):
    s = seed(vault, CHAT)
    said = vault.remember(NewEpisode(CHAT, SUMMARY.upper(), importance=3, created_at=NOW - DAY))
    engine.reconcile()
    fake_llm.script(answer())
    made = preview(fake_llm.llm(), vault, engine, CHAT, SETTINGS, now=NOW)
    assert said.id not in [v.id for v in made.archive]  # it is not folded: it stays
    before = files(vault)
    done = run(vault, engine, made)
    assert done.duplicate is not None and done.duplicate.id == said.id
    assert done.summary.id == said.id and files(vault) == before  # no new memory
    for original in (s.old, s.chatter, s.superseded):
        ep = vault.find_episode(CHAT, original.id).episode
        assert ep.status == "archived" and dict(ep.extra)["consolidated_into"] == said.id
    assert vault.find_episode(CHAT, said.id).episode.status == "active"


def test_another_chats_identical_summary_is_no_reason_not_to_write_it(vault, engine, fake_llm):
    seed(vault, CHAT)
    vault.remember(NewEpisode(OTHER, SUMMARY, importance=3, created_at=NOW - DAY))
    engine.reconcile()
    fake_llm.script(answer())
    made = preview(fake_llm.llm(), vault, engine, CHAT, SETTINGS, now=NOW)
    before = files(vault)
    done = run(vault, engine, made)
    assert done.duplicate is None and files(vault) == before + 1
    assert vault.find_episode(CHAT, done.summary.id).episode.body == SUMMARY
