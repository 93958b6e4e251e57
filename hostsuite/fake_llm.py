"""FAKE remote LLM for the real-host suite: an OpenAI-compatible server on loopback.

It is not a model. `/v1/chat/completions` answers with a fixed text that quotes what the
request carried (so a test can see which messages reached "the model"), and writes every
request body to a JSON-lines log. `/v1/embeddings` returns deterministic hash vectors.

Scripted tool calls: when the newest user message is `tool NAME {json}` and no tool result
follows it yet, the answer is an OpenAI `tool_calls` message calling the offered tool whose
name is NAME (or ends with NAME) with those arguments; the follow-up request, which carries
the tool's result, is answered with text quoting that result (`TOOL-RESULT ...`). So a real
agent runner (LocalAgent) drives a plugin's tools through its own tool loop.

Scripted candidate extraction: a request whose system prompt is MemVault's extraction prompt
(templates/candidates_en.yaml, "You read one turn of a chat...") is answered with the JSON
the prompt asks for: one episode candidate when the turn's user message is a first-person
statement ("I'm moving to Lisbon on 3 June" -> "Alice is moving to Lisbon on 3 June", the
speaker's name from the request's data), `{"candidates": []}` for anything else (questions,
greetings), so only a turn meant to produce a candidate does.

    python -m hostsuite.fake_llm --port 0 --log requests.jsonl --port-file port.txt
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import re
import time
from pathlib import Path
from typing import Any

from aiohttp import web

REPLY_PREFIX = "FAKE-LLM-REPLY"
DIM = 64


def text_of(content: Any) -> str:
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


TOOL_PREFIX = "tool "


def script_tool_call(body: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """(the scripted tool call, None) or (None, the text answer for a scripted turn)."""
    messages = body.get("messages") or []
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    if last_user < 0:
        return None, None
    text = text_of(messages[last_user].get("content")).strip()
    if not text.startswith(TOOL_PREFIX):
        return None, None
    results = [text_of(m.get("content")) for m in messages[last_user:] if m.get("role") == "tool"]
    if results:
        return None, f"TOOL-RESULT {results[-1][:400]}"
    name, _, raw = text[len(TOOL_PREFIX) :].partition(" ")
    offered = [str((t.get("function") or {}).get("name", "")) for t in body.get("tools") or []]
    chosen = next((t for t in offered if t == name), None) or next(
        (t for t in offered if t.endswith(name)), None
    )
    if chosen is None:
        return None, f"TOOL-NOT-OFFERED {name!r} among {offered}"
    call = {
        "id": f"call_{hashlib.sha256(text.encode()).hexdigest()[:12]}",
        "type": "function",
        "function": {"name": chosen, "arguments": raw.strip() or "{}"},
    }
    return call, None


EXTRACTION_PROMPT = "You read one turn of a chat"  # templates/candidates_en.yaml `system`
# A leading first-person subject and what it becomes with the speaker's name in front.
FIRST_PERSON = (
    (re.compile(r"^(?:I'm|I am)\s+", re.IGNORECASE), "{who} is "),
    (re.compile(r"^I'll\s+", re.IGNORECASE), "{who} will "),
    (re.compile(r"^I\s+"), "{who} "),
)


def extraction_data(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSON document after the `DATA ...:` line of the extraction request's user message
    (indexer/jobs/candidates_prompt.py build_messages); {} when it is not there."""
    user = next((text_of(m.get("content")) for m in messages if m.get("role") == "user"), "")
    _, _, document = user.partition("\n")
    try:
        data = json.loads(document)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def script_extraction(body: dict[str, Any]) -> str | None:
    """The answer to MemVault's candidate extraction request; None for any other request."""
    messages = body.get("messages") or []
    system = next((text_of(m.get("content")) for m in messages if m.get("role") == "system"), "")
    if not system.startswith(EXTRACTION_PROMPT):
        return None
    data = extraction_data(messages)
    said = " ".join(str(data.get("last_user_message") or "").split())
    speaker = data.get("speaker") if isinstance(data.get("speaker"), dict) else {}
    who = str(speaker.get("name") or speaker.get("id") or "The user")
    candidates = []
    for pattern, subject in FIRST_PERSON:
        if said and not said.endswith("?") and pattern.match(said):
            text = pattern.sub(subject.format(who=who), said, count=1).rstrip(".!")
            candidates.append(
                {
                    "kind": "episode",
                    "text": text,
                    "importance": 3,
                    "tags": ["plan"],
                    "category": "plan",
                    "supersedes": None,
                    "evidence": said,
                }
            )
            break
    return json.dumps({"candidates": candidates}, ensure_ascii=False)


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
            (text_of(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), ""
        )
        extraction = script_extraction(body)
        call, scripted = (None, extraction) if extraction is not None else script_tool_call(body)
        reply = scripted or f"{REPLY_PREFIX} messages={len(messages)} user={user[:80]!r}"
        message: dict[str, Any] = {"role": "assistant", "content": reply}
        finish_reason = "stop"
        if call is not None:
            message = {"role": "assistant", "content": None, "tool_calls": [call]}
            finish_reason = "tool_calls"
        created = int(time.time())
        if body.get("stream"):
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await response.prepare(request)
            first = dict(message)
            if call is not None:
                first["tool_calls"] = [{"index": 0, **call}]
            for delta, finish in ((first, None), ({}, finish_reason)):
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
                "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
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
