"""indexer/jobs/llm.py against the loopback FAKE OpenAI-compatible LLM (tests/helpers/llm_fake.py):
every failure is one LLMError that says what to check, and JSON answers are read whether
bare, fenced or after a sentence."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from indexer.jobs.llm import LLMError, OpenAICompatibleLLM, llm_from_env, parse_json_reply
from tests.helpers.llm_fake import Reply

HI = [{"role": "user", "content": "hi"}]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
containers = st.one_of(
    st.dictionaries(st.text(max_size=8), json_values, max_size=4), st.lists(json_values, max_size=4)
)
prose = st.text(st.characters(blacklist_characters="{}[]`"), max_size=40)


@given(containers, prose, st.sampled_from(["bare", "fence", "json-fence", "prose"]))
def test_a_json_answer_is_read_however_it_is_wrapped(value, lead, wrap):
    text = json.dumps(value, ensure_ascii=False)
    wrapped = {
        "bare": text,
        "fence": f"```\n{text}\n```",
        "json-fence": f"{lead}\n```json\n{text}\n```\nHope that helps.",
        "prose": f"{lead} {text}",
    }[wrap]
    assert parse_json_reply(wrapped) == value


@pytest.mark.parametrize("text", ["", "no JSON here", '{"candidates": [', "```json\n{oops}\n```"])
def test_an_answer_without_json_is_an_llm_error(text):
    with pytest.raises(LLMError, match="not JSON"):
        parse_json_reply(text)


def test_the_answer_text_and_the_request_sent(fake_llm):
    fake_llm.script("the answer")
    assert fake_llm.llm().complete(HI, timeout=5) == "the answer"
    (body,) = fake_llm.requests
    assert body["model"] == "fake-llm" and body["messages"] == HI and body["stream"] is False


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (Reply(status=500), "answered HTTP 500"),
        (Reply(status=401), "check the URL, model and key"),
        (Reply(sleep=1.0), "did not answer within 0.3 s"),
        (Reply(refusal="I cannot do that"), "the model refused: I cannot do that"),
        (Reply(content=""), "empty answer"),
        (Reply(raw=b"not json"), "not JSON"),
        (Reply(raw=b'{"choices": []}'), r"no `choices\[0\]\.message`"),
    ],
)
def test_each_failure_is_one_llm_error_saying_what_to_check(fake_llm, reply, message):
    fake_llm.script(reply)
    with pytest.raises(LLMError, match=message):
        fake_llm.llm().complete(HI, timeout=0.3)


def test_an_unreachable_endpoint_is_an_llm_error():
    llm = OpenAICompatibleLLM("http://127.0.0.1:9/v1", "m", timeout=2)
    with pytest.raises(LLMError, match="is the server running"):
        llm.complete(HI, timeout=2)


def test_llm_from_env_names_what_is_missing():
    with pytest.raises(LLMError, match="set MEMVAULT_LLM_URL and MEMVAULT_LLM_MODEL"):
        llm_from_env({})
    with pytest.raises(LLMError, match="set MEMVAULT_LLM_MODEL"):
        llm_from_env({"MEMVAULT_LLM_URL": "http://x/v1"})
    with pytest.raises(LLMError, match="MEMVAULT_LLM_TIMEOUT='soon' is not a number"):
        llm_from_env(
            {"MEMVAULT_LLM_URL": "u", "MEMVAULT_LLM_MODEL": "m", "MEMVAULT_LLM_TIMEOUT": "soon"}
        )
    llm = llm_from_env(
        {
            "MEMVAULT_LLM_URL": "http://x/v1/",
            "MEMVAULT_LLM_MODEL": "m",
            "MEMVAULT_LLM_KEY": "k",
            "MEMVAULT_LLM_TIMEOUT": "5",
        }
    )
    assert (llm.url, llm.model, llm.key, llm.timeout) == (
        "http://x/v1/chat/completions",
        "m",
        "k",
        5.0,
    )


def test_the_key_is_sent_as_a_bearer_token(fake_llm):
    fake_llm.script("ok")
    OpenAICompatibleLLM(fake_llm.url, "m", "secret-key").complete(HI, timeout=5)
    assert fake_llm.headers[-1]["Authorization"] == "Bearer secret-key"
