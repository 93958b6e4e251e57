"""A chat on the real host: one group or private chat over the Page Bot's embed WebSocket."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import websockets

from hostsuite.host import Host, SuiteError


class Chat:
    """One chat over the Page Bot's embed WebSocket (a real LangBot chat surface): a group
    chat, or with session_type "person" a private one. LangBot 4.11.2 names the sender
    `websocket_<pipeline>:<session_id>` in both (websocket_adapter.handle_websocket_message),
    so a group and a private chat with the same session_id are one person in two chats."""

    def __init__(
        self, host: Host, bot_uuid: str, session_id: str, name: str, session_type: str = "group"
    ) -> None:
        port = host.base.rsplit(":", 1)[1]
        self.session_id = session_id
        self.session_type = session_type
        self.url = (
            f"ws://127.0.0.1:{port}/api/v1/embed/{bot_uuid}/ws/connect"
            f"?session_type={session_type}&session_id={session_id}"
        )
        self.origin = host.base
        self.name = name
        self.frames: list[dict[str, Any]] = []

    async def send(self, text: str, timeout: float = 90) -> str:
        """Send one message and return the bot's reply text (bounded wait)."""
        async with websockets.connect(self.url, origin=self.origin, open_timeout=20) as ws:  # type: ignore[arg-type]
            await ws.send(json.dumps({"type": "authenticate", "token": "suite"}))
            first = json.loads(await asyncio.wait_for(ws.recv(), 20))
            if first.get("type") != "connected":
                raise SuiteError(f"chat {self.name}: {first}")
            await ws.send(
                json.dumps(
                    {
                        "type": "message",
                        "stream": False,
                        "message": [{"type": "Plain", "text": text}],
                    }
                )
            )
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                try:
                    raw = await asyncio.wait_for(ws.recv(), max(0.1, deadline - time.monotonic()))
                except TimeoutError:
                    break
                frame = json.loads(raw)
                self.frames.append(frame)
                reply = _reply_text(frame)
                if reply is not None:
                    return reply
        raise SuiteError(f"chat {self.name}: no reply to {text!r} within {timeout:.0f}s")


def _reply_text(frame: dict[str, Any]) -> str | None:
    if frame.get("type") in ("error",):
        raise SuiteError(f"chat error frame: {frame}")
    data = frame.get("data") if isinstance(frame.get("data"), dict) else {}
    is_bot = frame.get("type") in ("response", "bot_message", "assistant_message")
    if (is_bot or data.get("role") == "assistant") and data.get("is_final", True):
        return str(data.get("content") or data.get("text") or frame.get("content") or "")
    return None
