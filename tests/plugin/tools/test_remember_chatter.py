"""The `remember` tool refuses what no person said (issue 24 item 5): a model that tries to
store a tool's output, a system or LangBot notice, its own prompt or persona, or a template
gets one line saying why, and nothing is written; a person's fact that mentions tools,
systems or AI is remembered (SDK Tool.call, FAKE host, real vault with git and indexes)."""

from __future__ import annotations

import logging

import pytest

from tests.conftest import git
from tests.plugin.tools.test_tools import call, scope

KB = "kb-memvault"


@pytest.fixture
def opted_in(host):
    host.register_memory_kb(KB)
    return host


def commits(plugin) -> int:
    vault, _ = plugin.memory.require()
    return int(git(vault.root, "rev-list", "--count", "HEAD").strip())


def bodies(plugin) -> list[str]:
    vault, _ = plugin.memory.require()
    return [s.episode.body for s in vault.load_episodes(scope(plugin))[0]]


@pytest.mark.parametrize(
    ("content", "rule"),
    [
        ('{"city": "Oslo", "temp_c": -3, "sky": "snow"}', "tool_output.json"),
        ("Tool result: Oslo is -3°C and snowing", "tool_output.label"),
        ("工具结果：奥斯陆零下3度，下雪", "tool_output.label"),
        ("Remembered: Ben moves to Oslo", "tool_output.memvault"),
        ("[System] Ben has been muted for 10 minutes", "system.notice"),
        ("系统消息：群公告已更新", "system.notice"),
        ("请求过于频繁，请稍后重试。", "system.langbot_notice"),
        ("As an AI, I do not have a home town.", "prompt.persona"),
        ("作为AI助手，我没有个人喜好", "prompt.persona"),
        ("{{user}} likes {{favorite_food}}", "placeholder.template"),
        ("{name} lives in {city}", "placeholder.template"),
        ("<placeholder>", "placeholder.schema_word"),
        ("[Image]", "placeholder.only"),
    ],
)
async def test_remember_refuses_what_no_person_said(plugin, opted_in, caplog, content, rule):
    before = commits(plugin)
    with caplog.at_level(logging.INFO, logger="components.tools.remember"):
        answer = await call(plugin, opted_in, "remember", {"content": content})
    assert answer.startswith("Error: not remembered: this is ") and "\n" not in answer
    assert f"(rule {rule})" in answer
    assert bodies(plugin) == [] and commits(plugin) == before
    assert f"memvault=remember_refused query_id=7 reason={rule}" in caplog.text


@pytest.mark.parametrize(
    ("chatter", "fact"),
    [
        ("Tool result: Ben's tool box is in the garage", "Ben keeps his tool box in the garage"),
        ("[System] Ben is the group admin now", "Ben works as a system administrator at the port"),
        ("As an AI, I have no favourite tool.", "Ben's favourite tool is his grandfather's plane"),
        ("作为AI助手，我没有工具箱", "小李说工具箱放在车库里"),
        ("系统消息：Ben 已被设为管理员", "我用的系统是Windows 11"),
    ],
)
async def test_the_chatter_is_refused_and_the_persons_fact_beside_it_remembered(
    plugin, opted_in, chatter, fact
):
    """Both sides in one chat: the same words (tool, system, AI, 工具, 系统) in a person's
    sentence are remembered, as chatter they are not."""
    refused = await call(plugin, opted_in, "remember", {"content": chatter})
    assert refused.startswith("Error: not remembered: ")
    assert await call(plugin, opted_in, "remember", {"content": fact}) == f"Remembered: {fact}"
    assert bodies(plugin) == [fact]
