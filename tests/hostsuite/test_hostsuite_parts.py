"""The real-host suite's own parts that decide a verdict: how a logged model request is taken
apart (ids counted over every message), the fake LLM's scripted tool call, and the LocalAgent
copy with the renames LangBot 4.11.2 needs. The suite itself runs on a real host
(hostsuite/run.sh); these keep its measuring instruments honest."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hostsuite.fake_llm import script_tool_call
from hostsuite.llm_requests import MEMORY_HEAD, PROFILE_HEAD, Request, table, take_apart
from hostsuite.local_agent import SOURCE, LocalAgentFixtureError, prepare_local_agent


def record(episode_id: str, text: str) -> str:
    return f"[1] [2026-12-01T11:55:20Z] (id:{episode_id}, importance:2) <mem>{text}</mem>"


def request(*messages: tuple[str, str]) -> Request:
    return Request(0.0, tuple({"role": r, "content": c} for r, c in messages))


def retrieved(*chunks: str) -> str:
    data = {"chunks": [{"index": i, "content": c} for i, c in enumerate(chunks, 1)]}
    # LocalAgent's shape (pkg/messages.py build_rag_context_message).
    return json.dumps({"type": "langbot_retrieved_context", "data": data}, ensure_ascii=False)


def test_the_same_memory_in_memvaults_block_and_the_runners_retrieval_is_a_duplicate() -> None:
    # What LangBot 4.11.2 + LocalAgent sent before the ledger: the injector's block AND the
    # runner's retrieve both carried the memory.
    seen = take_apart(
        request(
            ("system", "You are the suite's bot."),
            ("system", f"{PROFILE_HEAD}\n\n## Current Speaker\n- Name: User"),
            (
                "system",
                f"{MEMORY_HEAD}\n\n<memory-records>\n{record('ep_a', 'x')}\n</memory-records>",
            ),
            ("system", retrieved(record("ep_a", "x").removeprefix("[1] "))),
            ("user", [{"type": "text", "text": "When?"}]),
        ),
        "A",
        ("9 May",),
    )
    assert seen.block_ids == ("ep_a",) and seen.retrieved_ids == ("ep_a",)
    assert seen.times("ep_a") == 2 and seen.duplicates == 1
    assert seen.profile.startswith(PROFILE_HEAD) and seen.memory_block
    assert "| 1 " in table([seen]).splitlines()[2]


def test_the_other_chats_text_is_counted_in_history_and_user_text_too() -> None:
    seen = take_apart(
        request(("user", "it is 9 May"), ("assistant", "9 May, noted"), ("user", "again")),
        "A",
        ("9 May", "Osprey"),
    )
    assert seen.other_chat == 2 and not seen.profile and not seen.ids


ids = st.lists(st.sampled_from(["ep_a", "ep_b", "ep_c", "ep_d"]), max_size=6)


@given(block=ids, chunks=ids, history=ids)
def test_every_id_is_counted_once_per_occurrence_wherever_it_sits(
    block: list[str], chunks: list[str], history: list[str]
) -> None:
    records = "\n".join(record(i, "t") for i in block)
    seen = take_apart(
        request(
            ("system", f"{MEMORY_HEAD}\n{records}"),
            ("system", retrieved(*(record(i, "t") for i in chunks))),
            *(("user", record(i, "t")) for i in history),
            ("user", "q"),
        ),
        "x",
        (),
    )
    everything = block + chunks + history
    assert sorted(seen.ids) == sorted(everything)
    assert seen.duplicates == len(everything) - len(set(everything))
    assert (seen.block_ids, seen.retrieved_ids) == (tuple(block), tuple(chunks))


HOST_PYTHON = Path.home() / ".cache" / "memvault" / "langbot-4.11.2" / "bin" / "python"
TOOLS = [{"type": "function", "function": {"name": n}} for n in ("recall_memory", "remember")]


def test_the_fake_llm_scripts_a_tool_call_then_answers_with_its_result() -> None:
    ask = {"role": "user", "content": [{"type": "text", "text": 'tool remember {"content": "x"}'}]}
    call, text = script_tool_call({"messages": [ask], "tools": TOOLS})
    assert text is None and call is not None
    assert call["function"] == {"name": "remember", "arguments": '{"content": "x"}'}
    follow_up = [
        ask,
        {"role": "assistant", "tool_calls": [call]},
        {"role": "tool", "content": "ok"},
    ]
    assert script_tool_call({"messages": follow_up, "tools": TOOLS}) == (None, "TOOL-RESULT ok")


def test_the_fake_llm_says_so_when_the_tool_is_not_offered() -> None:
    ask = {"role": "user", "content": "tool nosuch {}"}
    call, text = script_tool_call({"messages": [ask], "tools": TOOLS})
    assert call is None and text is not None and "TOOL-NOT-OFFERED 'nosuch'" in text
    assert script_tool_call({"messages": [{"role": "user", "content": "hello"}]}) == (None, None)


@pytest.mark.skipif(not SOURCE.is_dir(), reason="the LocalAgent fixture is not on this machine")
def test_local_agent_copy_has_every_rename_and_refuses_an_existing_folder(tmp_path: Path) -> None:
    dest = prepare_local_agent(tmp_path / "LocalAgent")
    text = "\n".join(p.read_text("utf-8") for p in dest.rglob("*.py"))
    assert "agent_runner.runner" not in text and "proxies.agent_run " not in text
    assert "class DefaultAgentRunner(Runner)" in text and "AgentRunContext" not in text
    manifest = (dest / "manifest.yaml").read_text("utf-8")
    assert "Runner:" in manifest and "AgentRunner" not in manifest and "0.2.1" in manifest
    runner = (dest / "components" / "agent_runner" / "default.yaml").read_text("utf-8")
    assert "kind: Runner" in runner and "apiVersion: v1" in runner and "- agent" in runner
    with pytest.raises(LocalAgentFixtureError, match="exists"):
        prepare_local_agent(dest)


@pytest.mark.skipif(not SOURCE.is_dir(), reason="the LocalAgent fixture is not on this machine")
@pytest.mark.skipif(not HOST_PYTHON.exists(), reason="no LangBot 4.11.2 venv (hostsuite/run.sh)")
def test_the_renamed_runner_imports_with_the_sdk_langbot_pins(tmp_path: Path) -> None:
    dest = prepare_local_agent(tmp_path / "LocalAgent")
    probe = (
        "import importlib.util, sys; sys.path.insert(0, '.');"
        "s = importlib.util.spec_from_file_location('d', 'components/agent_runner/default.py');"
        "m = importlib.util.module_from_spec(s); s.loader.exec_module(m);"
        "print(m.DefaultAgentRunner.__mro__[1].__module__)"
    )
    done = subprocess.run(
        [str(HOST_PYTHON), "-c", probe], cwd=dest, capture_output=True, text=True, timeout=120
    )
    assert done.stdout.strip() == "langbot_plugin.api.definition.components.runner.runner", (
        done.stderr[-800:]
    )
