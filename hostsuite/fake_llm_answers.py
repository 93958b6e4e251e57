"""What the FAKE LLM (hostsuite/fake_llm.py) answers when no reply is scripted: it is not a model.

- Scripted tool calls: when the newest user message is `tool NAME {json}` and no tool result
  follows it yet, the answer is an OpenAI `tool_calls` message calling the offered tool whose
  name is NAME (or ends with NAME) with those arguments; the follow-up request, which carries
  the tool's result, is answered with text quoting that result (`TOOL-RESULT ...`). So a real
  agent runner (LocalAgent) drives a plugin's tools through its own tool loop.
- Scripted candidate extraction: a request whose system prompt is MemVault's extraction prompt
  (templates/candidates_en.yaml, "You read one turn of a chat...") is answered with the JSON
  the prompt asks for: one episode candidate when the turn's user message is a first-person
  statement ("I'm moving to Lisbon on 3 June" -> "Alice is moving to Lisbon on 3 June", the
  speaker's name from the request's data), `{"candidates": []}` for anything else (questions,
  greetings), so only a turn meant to produce a candidate does.
- Anything else: a fixed text that quotes what the request carried (`REPLY_PREFIX ...`), so a
  check can see which messages reached "the model".
- Embeddings: deterministic hash vectors of DIM dimensions.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

REPLY_PREFIX = "FAKE-LLM-REPLY"
DIM = 64


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def vector(text: str) -> list[float]:
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


def host_answer(body: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """(the assistant message, its finish_reason) for a chat request nothing was scripted for."""
    messages = body.get("messages") or []
    user = next(
        (text_of(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), ""
    )
    extraction = script_extraction(body)
    call, scripted = (None, extraction) if extraction is not None else script_tool_call(body)
    if call is not None:
        return {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
    reply = scripted or f"{REPLY_PREFIX} messages={len(messages)} user={user[:80]!r}"
    return {"role": "assistant", "content": reply}, "stop"
