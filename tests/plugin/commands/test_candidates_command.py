"""`!memory candidates [page]` and `!memory candidate accept|reject <id>` through the SDK's
real Command._execute and the FAKE host, over a real vault, indexes, model and git: the
candidates come from real turns (the FAKE LLM scripted per test)."""

from __future__ import annotations

import json

import pytest

from indexer.retrieval.search_query import SearchQuery
from tests.conftest import git
from tests.plugin.candidates_setup import (
    ON,
    PLAN,
    PLAN_ANSWER,
    QUESTION,
    candidates_plugin,
    chat,
    injected,
    respond,
    say,
    settled,
)
from vault.candidates import list_candidates
from vault.files import audit


@pytest.fixture
async def plugin(tmp_path, host):
    plug = await candidates_plugin(host, tmp_path, **ON)
    yield plug
    plug.memory.close()


async def proposed(plugin, host, answer: str = PLAN_ANSWER, launcher_id: str = "123") -> str:
    """One turn whose FAKE model answer becomes one pending candidate; its id."""
    host.llm_script = [answer]
    await respond(plugin, host, launcher_id=launcher_id)
    await settled(plugin)
    vault, _ = plugin.memory.require()
    (stored,) = list_candidates(vault, chat(plugin, launcher_id)).items
    return stored.candidate.id


def commits(plugin) -> list[str]:
    root = plugin.memory.settings.vault_path
    return git(root, "log", "--format=%H").split()


def changed_in(plugin, commit: str) -> list[str]:
    root = plugin.memory.settings.vault_path
    return git(root, "show", "--name-only", "--format=", commit).split()


async def test_the_list_shows_each_pending_candidate_with_its_id(plugin, host):
    cid = await proposed(plugin, host)
    text = await say(plugin, host, "!memory candidates")
    lines = text.splitlines()
    assert lines[0] == "[Memory] Pending candidates (page 1/1, 1 total):"
    assert lines[1].startswith(f"  [{cid}] ") and f"Alice: episode imp:3: {PLAN}" in lines[1]
    assert "!memory candidate accept <id>" in lines[2]
    assert await say(plugin, host, "!memory candidates 2") == (
        "[Memory] Pending candidates (page 2/1, 1 total):\n  (no page 2: there are 1)\n"
        "Accept: !memory candidate accept <id> | Reject: !memory candidate reject <id>"
    )
    assert (await say(plugin, host, "!memory candidates x")).startswith("Usage: !memory candidates")


async def test_accept_recalls_it_next_turn_with_one_commit_and_an_audit_line(plugin, host):
    cid = await proposed(plugin, host)
    assert PLAN not in await injected(plugin, host, QUESTION)
    before = commits(plugin)
    answer = await say(plugin, host, f"!memory candidate accept {cid}")
    after = commits(plugin)
    assert len(after) == len(before) + 1
    vault, _ = plugin.memory.require()
    (stored,) = list_candidates(vault, chat(plugin), status="all").items
    episode_id = stored.candidate.accepted_as
    assert answer == f"[Memory] Candidate {cid} accepted as episode {episode_id}: {PLAN}"
    episode = vault.find_episode(chat(plugin), episode_id)
    assert episode.episode.verified is True  # a person accepted it
    # the one commit holds the new episode, the candidate's decision and the audit line
    assert {episode.rel, stored.rel} <= set(changed_in(plugin, after[0]))
    entries, _ = audit.read(vault.layout.audit_path(chat(plugin)))
    accepted = [e for e in entries if e.operation == "accept_candidate"]
    assert [(e.target_id, e.source) for e in accepted] == [(cid, "user")]
    memory = await injected(plugin, host, QUESTION)
    assert PLAN in memory and episode_id in memory


async def test_the_plural_form_accepts_too(plugin, host):
    cid = await proposed(plugin, host)
    assert (await say(plugin, host, f"!memory candidates accept {cid}")).startswith(
        f"[Memory] Candidate {cid} accepted as episode ep_"
    )


async def test_reject_keeps_it_out_of_memory_and_keeps_the_file(plugin, host):
    cid = await proposed(plugin, host)
    answer = await say(plugin, host, f"!memory candidate reject {cid}")
    assert answer.startswith(f"[Memory] Candidate {cid} rejected")
    vault, engine = plugin.memory.require()
    (stored,) = list_candidates(vault, chat(plugin), status="all").items
    assert stored.candidate.status == "rejected"
    assert "status: rejected" in stored.path.read_text(encoding="utf-8")
    assert await say(plugin, host, "!memory candidates") == (
        "[Memory] No pending candidates in this chat."
    )
    assert PLAN not in await injected(plugin, host, QUESTION)
    assert engine.search(SearchQuery(QUESTION, chat(plugin))) == []
    # a decision is not taken twice
    again = await say(plugin, host, f"!memory candidate accept {cid}")
    assert again.startswith(f"[Memory] candidate {cid} is already rejected")


async def test_a_profile_candidate_accepted_changes_the_speakers_profile(plugin, host):
    answer = {
        "candidates": [
            {
                "kind": "profile",
                "profile": "speaker",
                "field": "preferences",
                "key": "coffee",
                "value": "oat flat white",
                "text": "Alice drinks oat flat whites",
                "evidence": "flying to Tokyo",
            }
        ]
    }
    cid = await proposed(plugin, host, json.dumps(answer))
    assert "oat flat white" not in await injected(plugin, host, "hello")
    reply = await say(plugin, host, f"!memory candidate accept {cid}")
    assert reply == (
        f"[Memory] Candidate {cid} accepted: the speaker profile's preferences coffee is now "
        "oat flat white"
    )
    assert "Preferences: coffee: oat flat white" in await injected(plugin, host, "hello")


async def test_ids_of_another_chat_or_hostile_ids_change_nothing(plugin, host):
    other = await proposed(plugin, host, launcher_id="456")
    before = commits(plugin)
    assert (await say(plugin, host, f"!memory candidate accept {other}")).startswith(
        f"[Memory] no candidate {other} in bot-1:group_123"
    )
    for hostile in ("../../profile", "cand_x/../../y", "-rf"):
        text = await say(plugin, host, f"!memory candidate accept {hostile}")
        assert text.startswith("[Memory] candidate id") and "is not valid" in text, text
    assert commits(plugin) == before
    vault, _ = plugin.memory.require()
    assert list_candidates(vault, chat(plugin, "456")).items[0].candidate.status == "pending"


@pytest.mark.parametrize(
    "text", ["!memory candidate", "!memory candidate accept", "!memory candidate keep x"]
)
async def test_review_without_a_verb_and_an_id_answers_with_usage(plugin, host, text):
    assert await say(plugin, host, text) == (
        "Usage: !memory candidate accept <id> | !memory candidate reject <id>"
    )


async def test_help_lists_the_review_and_consolidation_subcommands(plugin, host):
    text = await say(plugin, host, "!memory help")
    for usage in (
        "!memory candidates [page]",
        "!memory candidate accept|reject <id>",
        "!memory consolidate preview|run",
    ):
        assert f"  {usage} - " in text


async def test_a_wrong_candidate_id_names_the_list_in_the_chat_too(plugin, host):
    """A chat member cannot run the CLI: the hint names `!memory candidates` (and the other
    surfaces' lists), for a well-formed id that is not there and for a malformed one."""
    for wrong in ("cand_20261130_aaaaaa", "nope!"):
        reply = await say(plugin, host, f"!memory candidate accept {wrong}")
        assert "`!memory candidates`" in reply and "memvault candidates list" in reply, reply
