"""Candidate extraction keeps only what the people said (issue 24 item 5): turns full of
tool output, system notices, prompt text and placeholders, with the loopback FAKE LLM and
the real vault, indexes and git. Chatter never reaches the model as something said, a
proposal that is chatter is dropped with `event=candidate_dropped reason=<rule>`, and the
person's own facts in the same transcript are still proposed."""

from __future__ import annotations

import json
import logging

import pytest

from indexer.engine import Engine
from indexer.jobs.candidates_extract import Turn, extract
from tests.indexer.jobs.test_candidates_extract import CHAT, files_and_history
from vault.candidates import list_candidates
from vault.format.model import Speaker

BEN = Speaker("u7", "Ben")
TOOL_JSON = '{"type": "langbot_retrieved_context", "data": {"chunks": ["Ben lives in Oslo"]}}'
TRANSCRIPT = [
    Turn("user", "can you check the weather in Oslo for my move next month?", "u7", "Ben"),
    Turn("assistant", 'Tool result: {"city": "Oslo", "temp_c": -3, "sky": "snow"}'),
    Turn("assistant", "Calling get_weather..."),
    Turn("user", "[Image]", "u7", "Ben"),
    Turn("assistant", "请求过于频繁，请稍后重试。"),
    Turn("user", "[系统] 群公告已更新", "u7", "Ben"),
    Turn("assistant", "It is -3°C and snowing in Oslo. Pack a warm coat!"),
]
SAID = "I'm moving to Oslo in March with my partner Ida, and my system admin job moves with me"


@pytest.fixture
def engine(vault, embedder):
    with Engine.open(vault.root, embedder=embedder) as opened:
        opened.attach(vault)
        yield opened


def run(fake_llm, vault, engine, said=SAID, reply="Congratulations on the move!", recent=()):
    return extract(
        fake_llm.llm(), vault, engine, CHAT, BEN, said, reply, list(recent), model_name="fake"
    )


def what_the_model_saw(fake_llm) -> dict:
    (request,) = fake_llm.requests
    user = request["messages"][-1]["content"]
    return json.loads(user[user.index("\n{") + 1 :])


def test_chatter_in_the_turn_never_reaches_the_model_as_said(fake_llm, vault, engine):
    run(fake_llm, vault, engine, reply=TOOL_JSON, recent=TRANSCRIPT)
    seen = what_the_model_saw(fake_llm)
    assert seen["last_user_message"] == SAID
    assert seen["assistant_reply"] == ""  # the reply was a tool's JSON
    assert [(t["role"], t["content"]) for t in seen["recent_turns"]] == [
        ("user", TRANSCRIPT[0].content),
        ("assistant", TRANSCRIPT[6].content),
    ]
    text = json.dumps(seen, ensure_ascii=False)
    for chatter in ("temp_c", "Calling get_weather", "[Image]", "请求过于频繁", "群公告"):
        assert chatter not in text


def test_proposed_chatter_is_dropped_and_the_persons_facts_kept(fake_llm, vault, engine, caplog):
    fact = {"kind": "episode", "text": "Ben moves to Oslo in March with his partner Ida."}
    job = {"kind": "episode", "text": "Ben works as a system administrator; his job moves too."}
    fake_llm.script(
        {
            "candidates": [
                {"kind": "episode", "text": '{"city": "Oslo", "temp_c": -3}'},
                {"kind": "episode", "text": "Tool result: Oslo is -3°C with snow"},
                {"kind": "episode", "text": "[System] group notice updated"},
                {"kind": "episode", "text": "As an AI, I cannot feel the cold."},
                {"kind": "episode", "text": "{{user}} is moving to {{city}}"},
                {"kind": "profile", "field": "notes", "value": "作为AI助手，我没有住址"},
                fact,
                job,
            ]
        }
    )
    with caplog.at_level(logging.INFO, logger="indexer.jobs.candidates_prompt"):
        written = run(fake_llm, vault, engine, recent=TRANSCRIPT)
    assert sorted(c.body for c in written) == sorted([fact["text"], job["text"]])
    assert list_candidates(vault, CHAT).total == 2
    reasons = [
        r.getMessage().split("reason=")[1].split()[0]
        for r in caplog.records
        if r.getMessage().startswith("event=candidate_dropped")
    ]
    assert reasons == [
        "tool_output.json",
        "tool_output.label",
        "system.notice",
        "prompt.persona",
        "placeholder.template",
        "prompt.persona",
    ]


@pytest.mark.parametrize("message", ["[Image]", "[图片]", "“小王”撤回了一条消息", "[System] muted"])
def test_a_message_no_person_typed_asks_no_model_and_writes_nothing(
    fake_llm, vault, engine, caplog, message
):
    before = files_and_history(vault.root)
    with caplog.at_level(logging.INFO, logger="indexer.jobs.candidates_extract"):
        assert run(fake_llm, vault, engine, said=message) == []
    assert fake_llm.requests == []
    assert files_and_history(vault.root) == before
    lines = [r.getMessage() for r in caplog.records]
    assert any("event=candidates_skipped reason=" in m and "part=user_message" in m for m in lines)
