"""FAKE remote LLM for the real-host suite: an OpenAI-compatible server on loopback.

It is not a model. `/v1/chat/completions` answers with a fixed text that quotes what the
request carried (so a test can see which messages reached "the model"), and writes every
request to a JSON-lines log. `/v1/embeddings` returns deterministic hash vectors.

    python -m hostsuite.fake_llm --port 0 --log requests.jsonl --port-file port.txt
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import time
from pathlib import Path
from typing import Any

from aiohttp import web

REPLY_PREFIX = "FAKE-LLM-REPLY"
DIM = 64


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _vector(text: str) -> list[float]:
    digest = hashlib.sha256(text.encode("utf-8")).digest() * (DIM // 32)
    raw = [b / 255.0 - 0.5 for b in digest[:DIM]]
    norm = math.sqrt(sum(v * v for v in raw)) or 1.0
    return [v / norm for v in raw]


class FakeLLM:
    def __init__(self, log: Path) -> None:
        self.log = log

    def record(self, kind: str, body: Any) -> None:
        with self.log.open("a", encoding="utf-8") as f:
            f.write(json.dumps({"kind": kind, "at": time.time(), "body": body}) + "\n")

    async def chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.record("chat", body)
        messages = body.get("messages") or []
        user = next(
            (_text(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), ""
        )
        reply = f"{REPLY_PREFIX} messages={len(messages)} user={user[:80]!r}"
        created = int(time.time())
        if body.get("stream"):
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await response.prepare(request)
            for delta, finish in (({"role": "assistant", "content": reply}, None), ({}, "stop")):
                chunk = {
                    "id": "fake-1",
                    "object": "chat.completion.chunk",
                    "created": created,
                    "model": body.get("model", "fake"),
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                }
                await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
            await response.write(b"data: [DONE]\n\n")
            await response.write_eof()
            return response
        return web.json_response(
            {
                "id": "fake-1",
                "object": "chat.completion",
                "created": created,
                "model": body.get("model", "fake"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": reply},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        )

    async def embeddings(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.record("embeddings", {"model": body.get("model"), "n": len(body.get("input") or [])})
        inputs = body.get("input") or []
        inputs = [inputs] if isinstance(inputs, str) else inputs
        data = [
            {"object": "embedding", "index": i, "embedding": _vector(str(t))}
            for i, t in enumerate(inputs)
        ]
        return web.json_response(
            {"object": "list", "data": data, "model": body.get("model", "fake"), "usage": {}}
        )

    async def models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "fake-chat"}]})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--port-file", type=Path, required=True)
    args = parser.parse_args()
    fake = FakeLLM(args.log)
    app = web.Application()
    app.router.add_post("/v1/chat/completions", fake.chat)
    app.router.add_post("/v1/embeddings", fake.embeddings)
    app.router.add_get("/v1/models", fake.models)

    async def serve() -> None:
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", args.port)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        args.port_file.write_text(str(port))
        while True:
            await asyncio.sleep(3600)

    asyncio.run(serve())


if __name__ == "__main__":
    main()
