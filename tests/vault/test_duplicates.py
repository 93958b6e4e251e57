"""Never store the same thing twice, the vault's side (vault.writes.duplicates): the exact
rule with no index and no model, through Vault.remember_once, an import and a candidate's
accept. What a person sees: "already remembered as <id>", nothing written, only within the
chat's own scope."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from vault.candidates import Candidate, accept_candidate, write_candidates
from vault.format.model import Speaker
from vault.layout.keys import ScopeId
from vault.transfer.exchange import import_payload
from vault.writes.new_episode import NewEpisode

CHAT = ScopeId("bot-1", "group_1")
OTHER = ScopeId("bot-1", "group_2")
ALICE = Speaker("u42", "Alice")
SAID = "Alice is going to Beijing next week for a conference."


def files(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "bots").rglob("ep_*.md"))


def test_the_same_text_again_is_already_remembered_and_nothing_is_written(vault):
    first = vault.remember_once(NewEpisode(CHAT, SAID, speaker=ALICE))
    assert first.stored and first.duplicate is None
    before = files(vault.root)
    # Case, full-width letters and digits, doubled spaces, the closing full stop.
    again = vault.remember_once(
        NewEpisode(
            CHAT, "  ALICE is going to  Ｂｅｉｊｉｎｇ next week for a conference ", speaker=ALICE
        )
    )
    assert not again.stored
    assert again.episode.id == first.episode.id
    assert again.duplicate is not None and again.duplicate.match == "exact"
    assert again.duplicate.said() == f"already remembered as {first.episode.id} (exact)"
    assert files(vault.root) == before


def test_a_different_fact_is_stored(vault):
    vault.remember_once(NewEpisode(CHAT, SAID))
    other = vault.remember_once(NewEpisode(CHAT, "Alice is going to Shanghai next week."))
    assert other.stored
    assert not vault.remember_once(NewEpisode(CHAT, "Alice is going to Shanghai next week")).stored
    assert len(files(vault.root)) == 2


def test_allow_duplicate_stores_it_anyway(vault):
    vault.remember_once(NewEpisode(CHAT, SAID))
    assert not vault.remember_once(NewEpisode(CHAT, SAID)).stored
    insisted = vault.remember_once(NewEpisode(CHAT, SAID), allow_duplicate=True)
    assert insisted.stored
    assert len(files(vault.root)) == 2


def test_another_chat_holding_the_same_text_is_no_duplicate_and_is_never_named(vault):
    theirs = vault.remember_once(NewEpisode(OTHER, SAID)).episode
    mine = vault.remember_once(NewEpisode(CHAT, SAID))
    assert mine.stored and mine.episode.id != theirs.id
    # With isolation bot the bot's episodes are shared by its chats: one scope, one memory.
    shared = ScopeId("bot-1", "group_1", "bot")
    vault.remember_once(NewEpisode(shared, SAID))
    again = vault.remember_once(NewEpisode(ScopeId("bot-1", "group_2", "bot"), SAID))
    assert not again.stored and again.episode.id not in (theirs.id, mine.episode.id)


def test_only_an_active_unexpired_memory_of_the_same_speaker_counts(vault):
    old = vault.remember(NewEpisode(CHAT, SAID, speaker=ALICE))
    vault.archive(CHAT, old.id)
    again = vault.remember_once(NewEpisode(CHAT, SAID, speaker=ALICE))
    assert again.stored  # archived: out of recall, so not what the chat remembers
    assert (
        vault.remember_once(NewEpisode(CHAT, SAID, speaker=ALICE)).duplicate.id == again.episode.id
    )
    assert vault.remember_once(NewEpisode(CHAT, "I love jazz", speaker=ALICE)).stored
    bob = vault.remember_once(NewEpisode(CHAT, "I love jazz", speaker=Speaker("u7", "Bob")))
    assert bob.stored  # two people saying it are two memories
    soon = vault.remember(NewEpisode(CHAT, "Gate B12", expires_in=timedelta(minutes=5)))
    vault.clock = lambda: soon.created_at + timedelta(hours=1)
    assert vault.remember_once(NewEpisode(CHAT, "Gate B12")).stored  # the old one expired


def test_a_correction_is_never_a_duplicate(vault):
    vault.remember_once(NewEpisode(CHAT, SAID))
    assert not vault.remember_once(NewEpisode(CHAT, SAID, tags=("travel",))).stored
    fix = vault.remember_once(NewEpisode(CHAT, SAID, tags=("correction",)))
    assert fix.stored


def test_an_import_skips_what_the_chat_already_remembers_and_keeps_the_rest(vault):
    vault.remember(NewEpisode(CHAT, SAID))
    vault.remember(NewEpisode(OTHER, "Bob has a red bike."))
    result = import_payload(
        vault,
        CHAT,
        [
            {"content": "alice is going to beijing next week for a conference"},
            {"content": "Bob has a red bike."},  # only another chat says it
            {"content": "Carol moved to Lisbon."},
        ],
    )
    assert (result["imported"], result["already_present"]) == (2, 1)
    bodies = sorted(s.episode.body for s in vault.load_episodes(CHAT)[0])
    assert bodies == sorted([SAID, "Bob has a red bike.", "Carol moved to Lisbon."])


def test_accepting_a_candidate_the_chat_already_remembers_writes_no_second_memory(vault):
    (c,) = write_candidates(
        vault,
        CHAT,
        [Candidate(id="", created_at=vault.clock(), kind="episode", body=SAID, speaker=ALICE)],
    )
    kept = vault.remember(NewEpisode(CHAT, SAID, speaker=ALICE))  # said meanwhile, by hand
    done = accept_candidate(vault, CHAT, c.id)
    assert done.duplicate is not None and done.duplicate.id == kept.id
    assert done.candidate.status == "accepted" and done.candidate.accepted_as == kept.id
    assert done.episode == kept
    assert [s.episode.id for s in vault.load_episodes(CHAT)[0]] == [kept.id]
    (c2,) = write_candidates(
        vault,
        CHAT,
        [Candidate(id="", created_at=vault.clock(), kind="episode", body="Alice drives.")],
    )
    assert accept_candidate(vault, CHAT, c2.id).duplicate is None
