"""The real-host suite's FAKE LLM answers MemVault's candidate extraction request: it must
recognise the request MemVault really builds (indexer/jobs/candidates_prompt.py with the wording in
templates/), and its answer must read back through MemVault's own parser, or the host suite's
candidate check would measure the fake instead of the plugin. Also: the restart that check
makes keeps MemVault's earlier log."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from hostsuite.fake_llm import script_extraction, script_tool_call
from hostsuite.host import Processes
from indexer.jobs.candidates_prompt import Turn, build_messages, read_proposals


def extraction_body(said: str, speaker: dict[str, str] | None) -> dict[str, object]:
    messages = build_messages(
        last_user_message=said,
        reply="FAKE-LLM-REPLY ...",
        recent_turns=[Turn("user", "hello"), Turn("assistant", "hi")],
        speaker=speaker,
        known=[{"id": "ep_20260101_abcdef", "text": "Alice likes tea"}],
        profiles={"session": {"name": None, "traits": [], "preferences": [], "notes": None}},
        max_candidates=3,
    )
    return {"model": "fake-chat", "messages": messages}


def test_a_plan_in_the_real_extraction_prompt_becomes_one_episode_candidate() -> None:
    body = extraction_body("I'm moving to Lisbon on 3 June", {"id": "u1", "name": "Alice"})
    answer = script_extraction(body)
    assert answer is not None
    (proposal,) = read_proposals(answer)
    assert proposal.kind == "episode"
    assert proposal.text == "Alice is moving to Lisbon on 3 June"
    assert proposal.evidence == "I'm moving to Lisbon on 3 June"


def test_without_a_speaker_name_the_candidate_names_the_id_or_the_user() -> None:
    by_id = script_extraction(extraction_body("I am flying to Oslo", {"id": "u7", "name": ""}))
    assert by_id is not None and read_proposals(by_id)[0].text == "u7 is flying to Oslo"
    nobody = script_extraction(extraction_body("I'll start on Monday.", None))
    assert nobody is not None and read_proposals(nobody)[0].text == "The user will start on Monday"


@given(
    st.sampled_from(
        ["When do I move to Lisbon?", "hello from A", "what's 17 times 23?", "I'm off?", ""]
    )
)
def test_questions_and_greetings_get_no_candidate(said: str) -> None:
    answer = script_extraction(extraction_body(said, {"id": "u1", "name": "Alice"}))
    assert answer is not None and json.loads(answer) == {"candidates": []}
    assert read_proposals(answer) == []


@given(st.text(max_size=200))
def test_a_chat_turn_is_never_answered_as_an_extraction(said: str) -> None:
    # The runner's requests (pipeline prompt first) keep their normal or tool-call answer.
    body = {
        "messages": [
            {"role": "system", "content": "You are the MemVault suite's bot."},
            {"role": "user", "content": said},
        ]
    }
    assert script_extraction(body) is None
    if not said.strip().startswith("tool "):
        assert script_tool_call(body) == (None, None)


def test_a_restarted_child_keeps_the_log_of_the_run_before(tmp_path: Path) -> None:
    # The candidates check restarts MemVault; the first run's log is often the one that
    # says why extraction failed, so a restart must append, not truncate.
    procs = Processes(tmp_path)
    try:
        for word in ("first-run", "second-run"):
            procs.start("child", ["sh", "-c", f"echo {word}"], tmp_path).wait(10)
            procs.stop("child")
    finally:
        procs.stop_all()
    assert (tmp_path / "child.log").read_text("utf-8").split() == ["first-run", "second-run"]
