"""The rule of every synchronous call MemVault makes to the host (its embedding model, its
LLM): it is made from a worker thread and waits there for the host loop's answer."""

from __future__ import annotations

import asyncio


def refuse_on_loop(loop: asyncio.AbstractEventLoop, error: Exception) -> None:
    """Raise `error` when called on `loop` itself: waiting there for an answer that comes on
    that same loop would deadlock it."""
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        raise error
