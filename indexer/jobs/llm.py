"""A chat LLM for the engine's own jobs (candidate extraction, consolidation).

The engine never needs a model to store or recall memory; only the optional jobs that *propose*
memory ask one. Inside LangBot the plugin passes the host's model (its own adapter satisfies
`LLM`); standalone, `llm_from_env()` talks to any OpenAI-compatible `/chat/completions`.
Every failure (unreachable, timeout, HTTP error, refusal, empty or malformed answer) is one
`LLMError` whose message says what to check, so a caller logs one line and changes nothing.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any, Protocol

import httpx

from vault.errors import BadRequestError, Unavailable
from vault.format.input_limits import MAX_JSON_DEPTH
from vault.format.jsonin import check_data

URL_VAR = "MEMVAULT_LLM_URL"
MODEL_VAR = "MEMVAULT_LLM_MODEL"
KEY_VAR = "MEMVAULT_LLM_KEY"
TIMEOUT_VAR = "MEMVAULT_LLM_TIMEOUT"
DEFAULT_TIMEOUT = 60.0


class LLMError(Unavailable, RuntimeError):
    """The model could not give a usable answer; nothing was changed because of it."""


class LLM(Protocol):
    def complete(self, messages: list[dict[str, str]], *, timeout: float) -> str: ...


def _chat_url(url: str) -> str:
    # Accept the base (`http://h/v1`) as the OpenAI clients do, or the full endpoint.
    base = url.rstrip("/")
    return base if base.endswith("/chat/completions") else base + "/chat/completions"


class OpenAICompatibleLLM:
    """Non-streaming `POST {url}/chat/completions` (OpenAI, vLLM, Ollama, LM Studio, ...)."""

    def __init__(
        self, url: str, model: str, key: str = "", timeout: float = DEFAULT_TIMEOUT
    ) -> None:
        self.url = _chat_url(url)
        self.model = model
        self.key = key
        self.timeout = timeout

    def complete(self, messages: list[dict[str, str]], *, timeout: float | None = None) -> str:
        limit = self.timeout if timeout is None else timeout
        headers = {"Content-Type": "application/json"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        body = {"model": self.model, "messages": messages, "stream": False, "temperature": 0}
        try:
            response = httpx.post(self.url, json=body, headers=headers, timeout=limit)
        except httpx.TimeoutException as exc:
            raise LLMError(
                f"{self.url} did not answer within {limit:g} s: "
                f"raise {TIMEOUT_VAR} or use a faster model"
            ) from exc
        except httpx.HTTPError as exc:
            raise LLMError(f"cannot reach {self.url} ({exc}): is the server running?") from exc
        if response.status_code != 200:
            detail = response.text[:200].replace("\n", " ")
            raise LLMError(
                f"{self.url} answered HTTP {response.status_code} ({detail}): "
                "check the URL, model and key"
            )
        try:
            payload = response.json()
        except ValueError as exc:
            raise LLMError(f"{self.url} answered with a body that is not JSON") from exc
        return answer_text(payload, self.url)


def answer_text(payload: Any, where: str) -> str:
    """The assistant's text from a chat/completions payload, or LLMError (refusal, empty)."""
    try:
        choice = payload["choices"][0]
        message = choice["message"]
    except (KeyError, IndexError, TypeError) as exc:
        raise LLMError(f"{where} returned no `choices[0].message`") from exc
    if not isinstance(message, Mapping):
        raise LLMError(f"{where} returned no `choices[0].message`")
    refusal = message.get("refusal")
    if refusal:
        raise LLMError(f"the model refused: {str(refusal)[:200]}")
    if choice.get("finish_reason") == "content_filter":
        raise LLMError("the model's answer was withheld by its content filter")
    content = message.get("content")
    if not isinstance(content, str) or not content.strip():
        raise LLMError(f"{where} returned an empty answer")
    return content


def llm_from_env(environ: Mapping[str, str] | None = None) -> OpenAICompatibleLLM:
    env = os.environ if environ is None else environ
    missing = [name for name in (URL_VAR, MODEL_VAR) if not env.get(name, "").strip()]
    if missing:
        raise LLMError(
            f"set {' and '.join(missing)} (an OpenAI-compatible endpoint, e.g. "
            f"{URL_VAR}=http://localhost:11434/v1 {MODEL_VAR}=qwen2.5:7b; {KEY_VAR} if it "
            "needs a key)"
        )
    raw_timeout = env.get(TIMEOUT_VAR, "").strip()
    try:
        timeout = float(raw_timeout) if raw_timeout else DEFAULT_TIMEOUT
    except ValueError as exc:
        raise LLMError(f"{TIMEOUT_VAR}={raw_timeout!r} is not a number of seconds") from exc
    if timeout <= 0:
        raise LLMError(f"{TIMEOUT_VAR} must be a positive number of seconds")
    return OpenAICompatibleLLM(
        env[URL_VAR].strip(), env[MODEL_VAR].strip(), env.get(KEY_VAR, "").strip(), timeout
    )


_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


def parse_json_reply(text: str) -> Any:
    """The JSON value in a model's answer: bare, inside a ```json fence, or after some prose.

    Models wrap JSON in fences or lead with a sentence; anything else is LLMError so a caller
    never acts on a half-understood answer. A model's JSON is input like any other: the
    limits of vault.format.jsonin apply (nesting, numbers), so a runaway answer is an LLMError too.
    """
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    try:
        found, value = _first_value(candidates)
        if found:
            check_data(value, "the model's answer")
            return value
    except RecursionError:
        raise LLMError(
            f"the model's answer nests deeper than {MAX_JSON_DEPTH} levels: try a stronger model"
        ) from None
    except BadRequestError as exc:
        raise LLMError(f"{exc}: try a stronger model") from None
    preview = text.strip().replace("\n", " ")[:120]
    raise LLMError(f"the model's answer is not JSON ({preview!r}): try a stronger model")


def _first_value(candidates: list[str]) -> tuple[bool, Any]:
    decoder = json.JSONDecoder()
    for chunk in candidates:
        stripped = chunk.strip()
        try:
            return True, json.loads(stripped)
        except ValueError:
            pass
        # Leading prose: decode from the first `{` or `[` that starts a complete value.
        for match in re.finditer(r"[\[{]", stripped):
            try:
                value, _end = decoder.raw_decode(stripped, match.start())
            except ValueError:
                continue
            return True, value
    return False, None
