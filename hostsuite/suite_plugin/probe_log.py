"""Where the probe writes what it saw: JSON lines in $SUITE_PROBE_OUT."""

import json
import os
import time


def write(kind: str, **data: object) -> None:
    path = os.environ.get("SUITE_PROBE_OUT")
    if not path:
        return
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps({"kind": kind, "at": time.time(), **data}, default=str) + "\n")


def text_of(message: object) -> str:
    content = getattr(message, "content", None)
    if content is None and isinstance(message, dict):
        content = message.get("content")
    if isinstance(content, str):
        return content
    parts = []
    for part in content or []:
        text = getattr(part, "text", None)
        if text is None and isinstance(part, dict):
            text = part.get("text")
        if text:
            parts.append(text)
    return "\n".join(parts)
