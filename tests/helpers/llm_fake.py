"""The FAKE OpenAI-compatible LLM for tests: hostsuite/fake_llm.py's server, in a thread.

It is not a model, and it is the same fake the real-host suite runs (one implementation).
Here each chat request takes the next scripted `Reply` from a queue, or `{"candidates": []}`
when the queue is empty, and the request body and headers are kept, so a test scripts exactly
what "the model" says and sees what it was asked:

    fake_llm.script(Reply(content='{"candidates": []}'))
    fake_llm.script(Reply(sleep=2.0))            # slower than the caller's timeout
    fake_llm.script(Reply(status=500))           # an HTTP error
    fake_llm.script(Reply(raw=b"not json"))      # a malformed body
    fake_llm.script(Reply(refusal="I can't"))    # an OpenAI-style refusal
    llm = fake_llm.llm()                         # indexer.jobs.llm.OpenAICompatibleLLM at it
"""

from __future__ import annotations

from hostsuite.fake_llm import FAKE_MODEL, FakeLLM, Reply, as_reply
from indexer.jobs.llm import OpenAICompatibleLLM

__all__ = ["FAKE_MODEL", "FakeLLMServer", "Reply", "as_reply"]


class FakeLLMServer(FakeLLM):
    """The shared fake with the tests' default answer and the clients that point at it."""

    def __init__(self) -> None:
        super().__init__(default=Reply(content='{"candidates": []}'))

    def llm(self, timeout: float = 10.0) -> OpenAICompatibleLLM:
        return OpenAICompatibleLLM(self.url, FAKE_MODEL, "fake-key", timeout)

    def env(self) -> dict[str, str]:
        return {
            "MEMVAULT_LLM_URL": self.url,
            "MEMVAULT_LLM_MODEL": FAKE_MODEL,
            "MEMVAULT_LLM_KEY": "fake-key",
        }
