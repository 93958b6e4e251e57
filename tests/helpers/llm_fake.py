"""FAKE OpenAI-compatible LLM for tests: a real HTTP server on loopback, scripted answers.

It is not a model. Each `POST /v1/chat/completions` takes the next scripted `Reply` from a
queue (or the default reply when the queue is empty) and logs the request body, so a test
scripts exactly what "the model" says, and sees what it was asked:

    fake_llm.script(Reply(content='{"candidates": []}'))
    fake_llm.script(Reply(sleep=2.0))            # slower than the caller's timeout
    fake_llm.script(Reply(status=500))           # an HTTP error
    fake_llm.script(Reply(raw=b"not json"))      # a malformed body
    fake_llm.script(Reply(refusal="I can't"))    # an OpenAI-style refusal
    llm = fake_llm.llm()                         # indexer.jobs.llm.OpenAICompatibleLLM at it
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from indexer.jobs.llm import OpenAICompatibleLLM

FAKE_MODEL = "fake-llm"


@dataclass(frozen=True)
class Reply:
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


class FakeLLMServer:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []  # each request's HTTP headers, in order
        self.default = Reply(content='{"candidates": []}')
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> FakeLLMServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def script(self, *items: Reply | str | dict[str, Any] | list[Any]) -> None:
        with self._lock:
            self._queue.extend(as_reply(item) for item in items)

    def llm(self, timeout: float = 10.0) -> OpenAICompatibleLLM:
        return OpenAICompatibleLLM(self.url, FAKE_MODEL, "fake-key", timeout)

    def env(self) -> dict[str, str]:
        return {
            "MEMVAULT_LLM_URL": self.url,
            "MEMVAULT_LLM_MODEL": FAKE_MODEL,
            "MEMVAULT_LLM_KEY": "fake-key",
        }

    def _next(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            return self._queue.popleft() if self._queue else self.default

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                reply = fake._next(body, dict(self.headers.items()))
                if reply.sleep:
                    time.sleep(reply.sleep)
                if reply.raw is not None:
                    payload = reply.raw
                elif reply.status != 200:
                    payload = json.dumps({"error": {"message": "FAKE-LLM scripted error"}}).encode()
                else:
                    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
                    if reply.refusal is not None:
                        message = {"role": "assistant", "content": None, "refusal": reply.refusal}
                    payload = json.dumps(
                        {
                            "id": f"fake-{len(fake.requests)}",
                            "object": "chat.completion",
                            "model": body.get("model", FAKE_MODEL),
                            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                        },
                        ensure_ascii=False,
                    ).encode("utf-8")
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    # The client gave up (a scripted timeout): nothing left to answer.
                    pass

        return Handler
