"""The one FAKE OpenAI-compatible LLM, on loopback, for the real-host suite and the tests.

It is not a model. `POST /v1/chat/completions` answers with the next scripted `Reply` (a
test scripts exactly what "the model" says: a text, a delay, an HTTP error, a malformed body,
a refusal) or, when none is queued, with `default`; without a default it answers as
hostsuite/fake_llm_answers.py scripts the real-host suite's turns (tool calls, candidate
extraction, a text quoting the request). A request with `"stream": true` is answered as
server-sent events. `POST /v1/embeddings` returns deterministic hash vectors (DIM);
`GET /v1/models` lists one model.

Every chat request body (and its HTTP headers) is kept in `requests` / `headers`; with `log`
every request is also appended to that JSON-lines file as {"kind", "at", "body"} (what
hostsuite/llm_requests.py reads). In a test it runs in a thread (`FakeLLM(...).start()`, see
tests/helpers/llm_fake.py); for the suite in its own process:

    python -m hostsuite.fake_llm --port 0 --log requests.jsonl --port-file port.txt
"""

from __future__ import annotations

import argparse
import asyncio
import json
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

from hostsuite.fake_llm_answers import (
    DIM,
    EXTRACTION_PROMPT,
    REPLY_PREFIX,
    extraction_data,
    host_answer,
    script_extraction,
    script_tool_call,
    text_of,
    vector,
)

__all__ = [
    "DIM",
    "EXTRACTION_PROMPT",
    "FAKE_MODEL",
    "REPLY_PREFIX",
    "FakeLLM",
    "Reply",
    "as_reply",
    "extraction_data",
    "script_extraction",
    "script_tool_call",
    "text_of",
]

FAKE_MODEL = "fake-llm"
STOP_SECONDS = 0.5  # a scripted slow reply is cut off at stop(), not waited for


@dataclass(frozen=True)
class Reply:
    """One scripted answer: `content` as the message text, after `sleep` seconds; `status`
    other than 200 sends an error body, `raw` sends these bytes as they are, `refusal` an
    OpenAI-style refusal."""

    content: str | None = "{}"
    sleep: float = 0.0
    status: int = 200
    raw: bytes | None = None
    refusal: str | None = None


def as_reply(item: Reply | str | dict[str, Any] | list[Any]) -> Reply:
    """A string is the answer's text; a dict or list is sent as its JSON text."""
    if isinstance(item, Reply):
        return item
    if isinstance(item, str):
        return Reply(content=item)
    return Reply(content=json.dumps(item, ensure_ascii=False))


class FakeLLM:
    def __init__(self, log: Path | None = None, default: Reply | None = None) -> None:
        self.log = log
        self.default = default
        self.requests: list[dict[str, Any]] = []  # each chat request's body, in order
        self.headers: list[dict[str, str]] = []  # each chat request's HTTP headers, in order
        self.port = 0
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._runner: web.AppRunner | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def script(self, *items: Reply | str | dict[str, Any] | list[Any]) -> None:
        with self._lock:
            self._queue.extend(as_reply(item) for item in items)

    def record(self, kind: str, body: Any) -> None:
        if self.log is not None:
            with self.log.open("a", encoding="utf-8") as f:
                f.write(json.dumps({"kind": kind, "at": time.time(), "body": body}) + "\n")

    def _next(self, body: dict[str, Any], headers: dict[str, str]) -> Reply | None:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            return self._queue.popleft() if self._queue else self.default

    async def chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.record("chat", body)
        reply = self._next(body, dict(request.headers.items()))
        if reply is None:
            message, finish_reason = host_answer(body)
        else:
            if reply.sleep:
                await asyncio.sleep(reply.sleep)
            if reply.raw is not None:
                return web.Response(
                    body=reply.raw, status=reply.status, content_type="application/json"
                )
            if reply.status != 200:
                error = {"error": {"message": "FAKE-LLM scripted error"}}
                return web.json_response(error, status=reply.status)
            message, finish_reason = {"role": "assistant", "content": reply.content}, "stop"
            if reply.refusal is not None:
                message = {"role": "assistant", "content": None, "refusal": reply.refusal}
        head = {
            "id": f"fake-{len(self.requests)}",
            "created": int(time.time()),
            "model": body.get("model", FAKE_MODEL),
        }
        if body.get("stream"):
            return await _stream(request, head, message, finish_reason)
        choice = {"index": 0, "message": message, "finish_reason": finish_reason}
        usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
        answer = {**head, "object": "chat.completion", "choices": [choice], "usage": usage}
        return web.Response(
            text=json.dumps(answer, ensure_ascii=False), content_type="application/json"
        )

    async def embeddings(self, request: web.Request) -> web.Response:
        body = await request.json()
        # The key the caller sent (a suite key, never a real one): the settings checks
        # assert a changed `openai_key` reaches the requests (checks_settings.secret).
        auth = request.headers.get("Authorization", "")
        self.record(
            "embeddings",
            {"model": body.get("model"), "n": len(body.get("input") or []), "auth": auth},
        )
        inputs = body.get("input") or []
        inputs = [inputs] if isinstance(inputs, str) else inputs
        data = [
            {"object": "embedding", "index": i, "embedding": vector(str(t))}
            for i, t in enumerate(inputs)
        ]
        return web.json_response(
            {"object": "list", "data": data, "model": body.get("model", "fake"), "usage": {}}
        )

    async def models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "fake-chat"}]})

    async def open(self, port: int = 0) -> int:
        """Serve on 127.0.0.1:`port` (0: a free one) in the running loop; the port taken."""
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self.chat)
        app.router.add_post("/v1/embeddings", self.embeddings)
        app.router.add_get("/v1/models", self.models)
        self._runner = web.AppRunner(app, shutdown_timeout=STOP_SECONDS, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self.port

    def start(self) -> FakeLLM:
        """Serve from a thread of its own (in a test); stop() ends it."""
        loop = self._loop = asyncio.new_event_loop()
        opened = threading.Event()

        def serve() -> None:
            loop.run_until_complete(self.open())
            opened.set()
            loop.run_forever()

        self._thread = threading.Thread(target=serve, name="fake-llm", daemon=True)
        self._thread.start()
        if not opened.wait(10):
            raise TimeoutError("the fake LLM did not start within 10 s")
        return self

    def stop(self) -> None:
        loop, runner, thread = self._loop, self._runner, self._thread
        if loop is None or runner is None or thread is None:
            return
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


async def _stream(
    request: web.Request, head: dict[str, Any], message: dict[str, Any], finish_reason: str
) -> web.StreamResponse:
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    first = dict(message)
    if message.get("tool_calls"):
        first["tool_calls"] = [{"index": 0, **call} for call in message["tool_calls"]]
    for delta, finish in ((first, None), ({}, finish_reason)):
        chunk = {
            **head,
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
    await response.write(b"data: [DONE]\n\n")
    await response.write_eof()
    return response


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--port-file", type=Path, required=True)
    args = parser.parse_args()
    fake = FakeLLM(args.log)

    async def serve() -> None:
        args.port_file.write_text(str(await fake.open(args.port)))
        while True:
            await asyncio.sleep(3600)

    asyncio.run(serve())


if __name__ == "__main__":
    main()
