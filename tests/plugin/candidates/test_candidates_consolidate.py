"""`!memory consolidate preview` / `!memory consolidate run` through the SDK's real
Command._execute and the FAKE host (its INVOKE_LLM is the FAKE LLM), over a real vault,
indexes, embedding model and git."""

from __future__ import annotations

import json
import logging

import pytest

from indexer.retrieval.search_query import SearchQuery
from tests.conftest import git
from tests.helpers.consolidate_helpers import SUMMARY, answer, seed, tree_hash
from tests.plugin.candidates_setup import MODEL, ON, at_rest, candidates_plugin, chat, say

CHAT_DIR = "bots/bot-1/sessions/group_123/"
OTHER_DIR = "bots/bot-1/sessions/group_456"


@pytest.fixture
async def plugin(tmp_path, host):
    plug = await candidates_plugin(host, tmp_path, **ON)
    yield plug
    plug.memory.close()


@pytest.fixture
def seeded(plugin):
    vault, _ = plugin.memory.require()
    seed(vault, chat(plugin, "456"))
    return seed(vault, chat(plugin))


def root(plugin):
    return plugin.memory.settings.vault_path


def commits(plugin) -> list[str]:
    return git(root(plugin), "log", "--format=%H").split()


def saved(plugin) -> dict[str, str]:
    """Every memory file and all of git (the index may merge segments in the background)."""
    return tree_hash(root(plugin), under="bots") | tree_hash(root(plugin), under=".git")


async def test_preview_shows_what_run_does_and_changes_no_file(plugin, host, seeded):
    host.llm_script = [json.dumps(answer())]
    await at_rest(plugin)
    before = tree_hash(root(plugin))
    text = await say(plugin, host, "!memory consolidate preview")
    assert tree_hash(root(plugin)) == before  # no file, no index, no audit, no commit
    lines = text.splitlines()
    assert lines[0] == f"[Memory] Consolidation preview (model {MODEL}); nothing was changed."
    assert lines[1] == "Archive 3 memories (status archived, linked to the summary):"
    for original in (seeded.old, seeded.chatter, seeded.superseded):
        assert f"  [{original.id}] " in text
    assert f"[{seeded.current.id}]" not in text and seeded.kept.id not in text  # kept
    assert f"  {SUMMARY}" in lines
    assert lines[-1] == "!memory consolidate run applies exactly this preview."
    (request,) = host.llm_requests
    assert request["llm_model_uuid"] == MODEL


async def test_run_applies_that_preview_in_one_commit_of_only_this_chats_files(
    plugin, host, seeded
):
    host.llm_script = [json.dumps(answer())]
    await say(plugin, host, "!memory consolidate preview")
    other = tree_hash(root(plugin), under=OTHER_DIR)
    before = commits(plugin)
    text = await say(plugin, host, "!memory consolidate run")
    after = commits(plugin)
    assert len(after) == len(before) + 1
    changed = git(root(plugin), "show", "--name-only", "--format=", after[0]).split()
    assert len(changed) == 5 and all(p.startswith(CHAT_DIR) for p in changed)  # +audit
    assert tree_hash(root(plugin), under=OTHER_DIR) == other
    vault, engine = plugin.memory.require()
    archived = [seeded.old.id, seeded.chatter.id, seeded.superseded.id]
    for original in archived:
        assert vault.find_episode(chat(plugin), original).episode.status == "archived"
    summary_id = text.split(" into ", 1)[1].split(" ", 1)[0]
    assert text.startswith(f"[Memory] Consolidated 3 memories into {summary_id} (")
    assert vault.find_episode(chat(plugin), summary_id).episode.source == "consolidation"
    found = [
        r.doc.episode_id for r in engine.search(SearchQuery("Alice Beijing robotics", chat(plugin)))
    ]
    assert summary_id in found and seeded.old.id not in found
    # the preview was used up: a second run applies nothing
    again = await say(plugin, host, "!memory consolidate run")
    assert again.startswith("[Memory] No consolidation preview was shown in this chat.")
    assert commits(plugin) == after


async def test_run_without_a_preview_in_this_chat_refuses(plugin, host, seeded):
    host.llm_script = [json.dumps(answer())]
    text = await say(plugin, host, "!memory consolidate preview")
    assert text.startswith("[Memory] Consolidation preview")
    before = saved(plugin)
    reply = await say(plugin, host, "!memory consolidate run", launcher_id="456")
    assert reply == (
        "[Memory] No consolidation preview was shown in this chat. Run !memory consolidate "
        "preview, check it, then !memory consolidate run."
    )
    assert saved(plugin) == before


async def test_a_memory_edited_after_the_preview_makes_run_refuse(plugin, host, seeded):
    host.llm_script = [json.dumps(answer())]
    await say(plugin, host, "!memory consolidate preview")
    vault, _ = plugin.memory.require()
    path = vault.find_episode(chat(plugin), seeded.old.id).path  # a person edits it
    path.write_text(path.read_text(encoding="utf-8") + "She gave a talk there.\n", "utf-8")
    before, count = saved(plugin), commits(plugin)
    text = await say(plugin, host, "!memory consolidate run")
    assert text.startswith(
        f"[Memory] the chat's memories changed since the preview (edited since: {seeded.old.id})"
    )
    assert text.endswith("Run !memory consolidate preview, check it, then !memory consolidate run.")
    assert saved(plugin) == before and commits(plugin) == count


@pytest.mark.parametrize(
    "answer_text", ['{"summary": ', "I cannot summarise this."], ids=["malformed", "refusal"]
)
async def test_a_failing_model_answers_one_line_and_changes_nothing(
    plugin, host, seeded, caplog, answer_text
):
    host.llm_script = [answer_text]
    await at_rest(plugin)
    before = tree_hash(root(plugin))
    caplog.set_level(logging.INFO)
    text = await say(plugin, host, "!memory consolidate preview")
    assert text.startswith("[Memory] consolidation preview: ") and "nothing was changed" in text
    assert len(text.splitlines()) == 1
    assert tree_hash(root(plugin)) == before
    run = await say(plugin, host, "!memory consolidate run")
    assert run.startswith("[Memory] No consolidation preview was shown in this chat.")


async def test_without_a_model_consolidation_says_which_setting_to_choose(tmp_path, host):
    plugin = await candidates_plugin(host, tmp_path)
    try:
        text = await say(plugin, host, "!memory consolidate preview")
        assert text == (
            "[Memory] Consolidation asks a model: choose one in the plugin setting "
            "candidates_model, then preview again."
        )
        assert host.llm_requests == []
    finally:
        plugin.memory.close()


@pytest.mark.parametrize("text", ["!memory consolidate", "!memory consolidate now"])
async def test_consolidate_without_preview_or_run_answers_with_usage(plugin, host, text):
    assert await say(plugin, host, text) == (
        "Usage: !memory consolidate preview | !memory consolidate run"
    )


UPDATES = [{"profile": "session", "field": "traits", "action": "add", "value": "likes robotics"}]


@pytest.mark.parametrize("apply", [False, True], ids=["setting off", "setting on"])
async def test_profile_updates_are_shown_and_applied_only_with_the_setting(tmp_path, host, apply):
    plugin = await candidates_plugin(
        host, tmp_path, **ON, consolidation_apply_profile_updates=apply
    )
    try:
        vault, _ = plugin.memory.require()
        seed(vault, chat(plugin))
        host.llm_script = [json.dumps(answer(updates=UPDATES))]
        text = await say(plugin, host, "!memory consolidate preview")
        state = (
            "applied by run"
            if apply
            else ("NOT applied: the setting consolidation_apply_profile_updates is off")
        )
        assert f"Profile changes ({state}):" in text
        assert "  add session profile traits: likes robotics" in text
        await say(plugin, host, "!memory consolidate run")
        assert ("likes robotics" in vault.read_profile(chat(plugin)).traits) is apply
    finally:
        plugin.memory.close()
