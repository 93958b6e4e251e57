"""The LangBot host's chat model as indexer.jobs.llm.LLM (the `candidates_model` setting).

MemVault's optional jobs that propose memory (candidate extraction, consolidation) call
`LLM.complete` synchronously from a worker thread (MemoryService.run); the SDK's
`invoke_llm` is async and lives on the plugin's event loop. So each call hops onto that loop
and waits at most `timeout` seconds; a late answer is cancelled, never applied. Every failure
is one LLMError, so the caller logs one line and changes nothing.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Awaitable, Callable
from typing import Any

from langbot_plugin.api.entities.builtin.provider.message import Message
from langbot_plugin.entities.io.errors import ActionCallTimeoutError

from indexer.jobs.llm import LLMError

from .host_loop import refuse_on_loop

# (model uuid, messages, timeout) -> the host's answer; the plugin's `invoke_llm` fits.
Invoke = Callable[..., Awaitable[Message]]
# The host's own timeout is the bound; this margin lets its error arrive before ours.
MARGIN_S = 2.0


def reply_text(message: Any) -> str:
    """The text of the host's answer (a string, or text parts); "" when it has none."""
    content = getattr(message, "content", None)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.text or "" for part in content if getattr(part, "type", "") == "text")
    return ""


class HostLLM:
    """`complete()` over the host's `invoke_llm`, from any thread but the loop's own."""

    def __init__(
        self, invoke: Invoke, model_uuid: str, loop: asyncio.AbstractEventLoop, timeout: float
    ) -> None:
        self._invoke = invoke
        self._loop = loop
        self.model = model_uuid  # what candidates record as proposed_by
        self.timeout = timeout

    def complete(self, messages: list[dict[str, str]], *, timeout: float | None = None) -> str:
        limit = self.timeout if timeout is None else timeout
        refuse_on_loop(
            self._loop, LLMError("HostLLM must be called from a worker thread, not the event loop")
        )
        asked = [Message(role=m["role"], content=m["content"]) for m in messages]
        future = asyncio.run_coroutine_threadsafe(
            self._invoke(self.model, asked, timeout=limit), self._loop
        )
        try:
            answer = future.result(limit + MARGIN_S)
        except (concurrent.futures.TimeoutError, ActionCallTimeoutError) as exc:
            future.cancel()  # the answer, if it ever comes, is dropped with the task
            raise LLMError(
                f"LangBot model {self.model} did not answer within {limit:g} s: choose a "
                "faster model in the candidates_model setting"
            ) from exc
        except concurrent.futures.CancelledError as exc:
            raise LLMError(f"the call to LangBot model {self.model} was cancelled") from exc
        except Exception as exc:  # noqa: BLE001 - the host's errors vary by provider
            raise LLMError(
                f"LangBot model {self.model} failed ({type(exc).__name__}: {exc}): check the "
                "model in LangBot's model settings"
            ) from exc
        text = reply_text(answer)
        if not text.strip():
            raise LLMError(f"LangBot model {self.model} returned an empty answer")
        return text
