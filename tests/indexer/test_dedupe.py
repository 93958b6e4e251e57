"""The duplicate check of a process that holds an index (indexer.dedupe), through
Vault.remember_once on a vault attached to a real Engine (Tantivy, FAISS, the manifest) with
the tiny deterministic embedder: it is bag-of-words, so the same words in another order are
the "same thing in other words" here; what the shipped model finds is bench/dedupe.py's."""

from __future__ import annotations

import logging

import pytest

from indexer.backends.calibration import calibrate
from indexer.backends.embeddings import EmbeddingError
from indexer.dedupe import episode_text, probe_text
from indexer.engine import Engine
from vault.format.model import Speaker
from vault.layout.keys import ScopeId
from vault.writes.duplicates import Probe
from vault.writes.new_episode import NewEpisode

CHAT = ScopeId("bot-1", "group_1")
OTHER = ScopeId("bot-1", "group_2")
ALICE = Speaker("u42", "Alice")
SAID = "Alice flies to Tokyo next week for the robotics fair."
REORDERED = "Next week Alice flies to Tokyo, for the robotics fair!"


@pytest.fixture
def engine(vault, tiny_embedder):
    with Engine.open(vault.root, embedder=tiny_embedder) as opened:
        opened.attach(vault)
        yield opened


def test_the_same_thing_in_other_words_is_already_remembered(vault, engine):
    first = vault.remember_once(NewEpisode(CHAT, SAID, speaker=ALICE)).episode
    again = vault.remember_once(NewEpisode(CHAT, REORDERED, speaker=ALICE))
    assert not again.stored and again.episode.id == first.id
    assert again.duplicate is not None and again.duplicate.match == "near"
    assert again.duplicate.cosine is not None and again.duplicate.cosine >= 0.99
    exact = vault.remember_once(NewEpisode(CHAT, SAID.upper(), speaker=ALICE))
    assert exact.duplicate is not None and exact.duplicate.match == "exact"
    assert len(vault.load_episodes(CHAT)[0]) == 1


def test_a_close_text_that_states_another_fact_is_stored(vault, engine, tiny_embedder):
    words = (
        "Alice keeps her old bicycle in the wooden shed behind the blue house on Station Road "
        "near the river, next to the garden where the apple trees grow, the children play "
        "after school and the neighbours meet on warm summer evenings to talk about the "
        "weather and the harvest"
    )
    old, new = f"{words} since 2019.", f"{words} since 2021."
    vault.remember_once(NewEpisode(CHAT, old, speaker=ALICE))
    vectors = tiny_embedder.embed_documents([f"Alice: {old}", f"Alice: {new}"])
    assert float(vectors[0] @ vectors[1]) >= calibrate(tiny_embedder).duplicate_line  # close
    assert vault.remember_once(NewEpisode(CHAT, new, speaker=ALICE)).stored  # another year


def test_another_chat_holding_the_same_words_is_no_duplicate(vault, engine):
    theirs = vault.remember_once(NewEpisode(OTHER, SAID)).episode
    mine = vault.remember_once(NewEpisode(CHAT, REORDERED))
    assert mine.stored and mine.episode.id != theirs.id
    assert vault.remember_once(NewEpisode(CHAT, SAID)).duplicate.id == mine.episode.id


def test_a_memory_of_the_same_key_is_updated_not_a_duplicate(vault, engine):
    old = vault.remember_once(NewEpisode(CHAT, SAID, key="alice_trip")).episode
    new = vault.remember_once(NewEpisode(CHAT, REORDERED, key="alice_trip"))
    assert new.stored
    assert vault.find_episode(CHAT, old.id).episode.superseded_by == new.episode.id


def test_without_vectors_the_exact_rule_still_applies(vault, engine, monkeypatch, caplog):
    vault.remember_once(NewEpisode(CHAT, SAID))

    def refused(request: object) -> list[object]:  # the vector search: provider down
        raise EmbeddingError("the embedding provider refused: check its URL")

    monkeypatch.setattr(engine, "run", refused)
    with caplog.at_level(logging.WARNING):
        exact = vault.remember_once(NewEpisode(CHAT, SAID.lower()))
        near = vault.remember_once(NewEpisode(CHAT, REORDERED))
    assert exact.duplicate is not None and exact.duplicate.match == "exact"
    assert near.stored  # the near rule could not run: a write is never refused for that
    assert "event=duplicate_check_degraded" in caplog.text


def test_the_probe_is_embedded_as_the_index_embeds_an_episode(vault):
    stored = vault.remember(NewEpisode(CHAT, SAID, speaker=ALICE))
    probe = Probe.of(CHAT, stored, vault.clock())
    assert probe_text(probe) == episode_text(stored) == f"Alice: {SAID}"
