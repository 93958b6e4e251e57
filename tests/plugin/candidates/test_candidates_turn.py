"""Candidate memories from each answered turn, through the SDK's real event contexts and the
FAKE host (its INVOKE_LLM is the FAKE LLM: the host's remote model cannot run here), over a
real vault, real indexes, the real embedding model and real git."""

from __future__ import annotations

import json
import logging
import threading

import pytest
from langbot_plugin.api.entities.builtin.provider.message import ContentElement, Message
from langbot_plugin.entities.io.actions.enums import PluginToRuntimeAction as A
from memvault_plugin import host_llm

from indexer.jobs.llm import LLMError
from indexer.retrieval.search_query import SearchQuery
from tests.conftest import git
from tests.helpers.consolidate_helpers import tree_hash
from tests.helpers.secret_scan import places_holding
from tests.plugin.candidates_setup import (
    MODEL,
    ON,
    PLAN,
    PLAN_ANSWER,
    QUESTION,
    REPLY,
    SAID,
    at_rest,
    candidates_plugin,
    chat,
    injected,
    respond,
    say,
    settled,
)
from vault.candidates import list_candidates
from vault.format.model import Speaker
from vault.writes.new_episode import NewEpisode


@pytest.fixture
async def plugin(tmp_path, host):
    plug = await candidates_plugin(host, tmp_path, **ON)
    yield plug
    plug.memory.close()


def commits(plugin) -> int:
    return int(git(plugin.memory.settings.vault_path, "rev-list", "--count", "HEAD").strip())


def pending(plugin, launcher_id: str = "123"):
    vault, _ = plugin.memory.require()
    return [s for s in list_candidates(vault, chat(plugin, launcher_id)).items]


# --------------------------------------------------------------------------- a turn


async def test_a_plan_becomes_a_pending_file_that_is_not_injected_until_accepted(plugin, host):
    host.llm_script = [PLAN_ANSWER]
    before = commits(plugin)
    await respond(plugin, host)
    await settled(plugin)

    (stored,) = pending(plugin)
    assert stored.rel.startswith("bots/bot-1/sessions/group_123/candidates/cand_")
    text = stored.path.read_text(encoding="utf-8")
    assert "source: candidate\nstatus: pending\nkind: episode\n" in text
    c = stored.candidate
    assert (c.body, c.speaker, c.proposed_by) == (PLAN, Speaker("u1", "Alice"), MODEL)
    assert c.evidence.text == "flying to Tokyo on March 12"
    assert commits(plugin) == before + 1
    # the model was asked with the host model chosen in the settings, about this turn
    (request,) = host.llm_requests
    assert request["llm_model_uuid"] == MODEL
    asked = json.dumps(request["messages"], ensure_ascii=False)
    assert SAID in asked and REPLY in asked and "L1 profile" in asked

    # the next turn: the candidate is not in the prompt, not in any search mode
    assert PLAN not in await injected(plugin, host, QUESTION)
    _, engine = plugin.memory.require()
    for mode in ("hybrid", "text", "vector"):
        assert (
            engine.search(SearchQuery(QUESTION, chat(plugin), mode=mode, include_profiles=True))
            == []
        )

    # ... and the same question recalls it once a person accepted it (the contrast)
    answer = await say(plugin, host, f"!memory candidate accept {c.id}")
    assert answer.startswith(f"[Memory] Candidate {c.id} accepted as episode ep_")
    assert PLAN in await injected(plugin, host, QUESTION)


async def test_earlier_turns_of_the_chat_reach_the_model_as_recent_turns(plugin, host):
    await respond(plugin, host, "We are planning the spring release", "Sounds good", query_id=1)
    await settled(plugin)
    host.llm_script = [PLAN_ANSWER]
    await respond(plugin, host, query_id=2)
    await settled(plugin)
    data = json.loads(host.llm_requests[-1]["messages"][1]["content"].split("\n", 1)[1])
    assert data["last_user_message"] == SAID and data["assistant_reply"] == REPLY
    assert [t["content"] for t in data["recent_turns"]] == [
        "We are planning the spring release",
        "Sounds good",
    ]


async def test_a_password_in_the_message_reaches_no_file_and_no_commit(plugin, host):
    secret = "Tr0ub4dor-hunter2"
    said = f"my wifi password is {secret}, and I'm flying to Tokyo on Friday"
    answer = {
        "candidates": [
            {
                "kind": "episode",
                "text": f"Alice flies to Tokyo on Friday; her wifi password is {secret}.",
                "evidence": said,
            }
        ]
    }
    host.llm_script = [json.dumps(answer)]
    await respond(plugin, host, said)
    await settled(plugin)
    (stored,) = pending(plugin)
    assert stored.candidate.redacted == ("password",)
    assert "[redacted:password]" in stored.path.read_text(encoding="utf-8")
    assert places_holding(plugin.memory.settings.vault_path, secret) == []


# --------------------------------------------------------------------------- the reply


async def test_the_handler_returns_at_once_while_the_model_takes_five_seconds(plugin, host):
    # host.emit revokes the SDK invocation when the handler returns, as the runtime does:
    # extraction must still reach the model afterwards.
    host.llm_script = [PLAN_ANSWER]
    host.llm_gate = threading.Event()  # the model answers only when released below
    handler_s = await respond(plugin, host)
    assert handler_s < 0.5
    assert pending(plugin) == []  # the reply goes out before the model has answered
    host.llm_gate.set()
    await settled(plugin)
    assert [s.candidate.body for s in pending(plugin)] == [PLAN]


async def test_a_streamed_reply_is_extracted_once_with_its_whole_text(plugin, host):
    # LangBot 4.11 emits NormalMessageResponded per streamed chunk, with the text so far.
    plugin.candidates.queue.settle_s = 0.3
    host.llm_script = [PLAN_ANSWER]
    chunks = ["Have a", "Have a great trip", REPLY]
    await respond(plugin, host, reply=chunks[0])
    host.calls.clear()
    for chunk in chunks[1:]:
        assert await respond(plugin, host, reply=chunk) < 0.05
    assert host.calls == []  # the later chunks cost no host call
    await settled(plugin)
    (request,) = host.llm_requests
    data = json.loads(request["messages"][1]["content"].split("\n", 1)[1])
    assert data["assistant_reply"] == REPLY and data["recent_turns"] == []
    assert [s.candidate.body for s in pending(plugin)] == [PLAN]


# --------------------------------------------------------------------------- failures


FAILURES = {
    "malformed JSON": ['{"candidates": [ {"kind": "episode", '],
    "no candidates list": ['{"memories": 3}'],
    "a refusal in prose": ["I'm sorry, I can't help with that."],
    "an empty answer": [""],
    "a host error": [RuntimeError("provider answered HTTP 500")],
}


@pytest.mark.parametrize("case", [*FAILURES, "a timeout"])
async def test_a_failing_model_logs_one_line_and_changes_nothing(
    plugin, host, caplog, monkeypatch, case
):
    vault, _ = plugin.memory.require()
    vault.remember(NewEpisode(chat(plugin), "Alice's sister is called Mei."))
    if case == "a timeout":
        monkeypatch.setattr(host_llm, "MARGIN_S", 0.0)
        plugin.memory.llm.timeout = 0.5
        host.llm_sleep = 3.0
        host.llm_script = [PLAN_ANSWER]
    else:
        host.llm_script = list(FAILURES[case])
    await at_rest(plugin)
    before = tree_hash(vault.root)
    caplog.set_level(logging.INFO)
    await respond(plugin, host)
    await settled(plugin)
    messages = [r.getMessage() for r in caplog.records]
    lines = [m for m in messages if "candidates_failed" in m]  # the engine's line too
    assert len(lines) == 1, lines
    assert lines[0].startswith("memvault=candidates_failed query_id=7 scope=bot-1:group_123")
    assert f"model={MODEL} reason=llm" in lines[0] and "nothing was written" in lines[0]
    assert tree_hash(vault.root) == before
    assert pending(plugin) == []


async def test_the_model_adapter_refuses_to_block_the_event_loop(plugin):
    with pytest.raises(LLMError, match="worker thread"):
        plugin.memory.llm.complete([{"role": "user", "content": "hi"}], timeout=1)


def test_the_answer_text_is_read_from_text_parts_too():
    parts = [ContentElement(type="text", text='{"candidates"'), ContentElement.from_text(": []}")]
    assert host_llm.reply_text(Message(role="assistant", content=parts)) == '{"candidates": []}'
    assert host_llm.reply_text(Message(role="assistant", content=None)) == ""


# --------------------------------------------------------------------------- when not


async def test_candidates_off_by_default_make_no_host_call_at_all(tmp_path, host):
    plugin = await candidates_plugin(host, tmp_path)
    try:
        assert plugin.memory.settings.candidates is False
        host.calls.clear()
        await respond(plugin, host)
        await settled(plugin)
        assert host.calls == [] and host.llm_requests == []
        assert pending(plugin) == []
    finally:
        plugin.memory.close()


async def test_a_pipeline_without_a_memory_kb_is_not_extracted(plugin, host):
    host.pipeline_kbs = [{"uuid": "kb-other", "name": "docs", "description": ""}]
    host.llm_script = [PLAN_ANSWER]
    await respond(plugin, host)
    await settled(plugin)
    assert A.INVOKE_LLM.value not in host.calls and pending(plugin) == []


@pytest.mark.parametrize(
    ("said", "funcs"),
    [("!memory list", []), (SAID, ["remember"]), ("", [])],
    ids=["a command", "a tool-calling step", "no user text"],
)
async def test_commands_tool_steps_and_empty_turns_are_not_extracted(plugin, host, said, funcs):
    host.llm_script = [PLAN_ANSWER]
    await respond(plugin, host, said, funcs_called=funcs)
    await settled(plugin)
    assert host.llm_requests == [] and pending(plugin) == []


async def test_no_model_chosen_means_no_call_and_a_health_warning(tmp_path, host):
    plugin = await candidates_plugin(host, tmp_path, candidates=True)
    try:
        assert any("candidates_model" in w for w in plugin.memory.warnings)
        await respond(plugin, host)
        await settled(plugin)
        assert host.llm_requests == [] and pending(plugin) == []
    finally:
        plugin.memory.close()


# --------------------------------------------------------------------------- auto-accept


async def test_auto_accept_recalls_it_at_once_as_unverified(tmp_path, host):
    plugin = await candidates_plugin(host, tmp_path, **ON, candidates_auto_accept=True)
    try:
        host.llm_script = [PLAN_ANSWER]
        await respond(plugin, host)
        await settled(plugin)
        vault, _ = plugin.memory.require()
        (stored,) = list_candidates(vault, chat(plugin), status="all").items
        assert stored.candidate.status == "accepted"
        episode = vault.find_episode(chat(plugin), stored.candidate.accepted_as).episode
        # (a person's accept is verified: true; see test_candidates_command)
        assert episode.verified is False and episode.source == "candidate"
        assert PLAN in await injected(plugin, host, QUESTION)
    finally:
        plugin.memory.close()
