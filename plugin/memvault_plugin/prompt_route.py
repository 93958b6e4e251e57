"""The injector's blocks into LangBot's PromptPreProcessing event. Where each block goes is
decided in indexer.injection.route (pure, shared with the Memory Console's recall test);
this appends the planned messages to the event with the SDK's Message type.
"""

from __future__ import annotations

from typing import Any

from langbot_plugin.api.entities.builtin.provider.message import Message

from indexer.injection.route import EVENTS, MEMORIES, PROFILE, ROUTE, Placement, plan

__all__ = ["EVENTS", "MEMORIES", "PROFILE", "ROUTE", "Placement", "place", "plan"]


def place(event: Any, profile_text: str, memory_text: str, events_text: str = "") -> Placement:
    """Append the blocks to the PromptPreProcessing event as system messages."""
    placement = plan(profile_text, memory_text, events_text)
    for _, target, text in placement.messages:
        getattr(event, target).append(Message(role="system", content=text))
    return placement
