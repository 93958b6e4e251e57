"""What the four key-event tools share: is the feature on, whose events these are, and the
run off the event loop (each error reaches the model through error_reply).

LangBot cannot hide a plugin's tool per setting: the runtime lists every Tool component
of the plugin's manifest (langbot_plugin runtime `PluginManager.list_tools`, read from the
components registered when the plugin connects, before its settings are known), so the
tools are always offered and refuse, saying why, while the event-type dictionary is empty.

The person is the turn's sender id as the host reports it (query var `sender_id`), never a
parameter the model could set; the bot is the host's bot uuid. So a tool call reaches the
speaker's own events of this bot and nothing else.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from vault.events import FEATURE_OFF, Actor, EventType
from vault.writes.operations import Vault

from . import pipeline_memory as pm

log = logging.getLogger(__name__)
T = TypeVar("T")

NO_SENDER = (
    "Error: key events belong to a person, and LangBot did not say who is speaking in this "
    "turn; nothing was changed."
)


async def open_turn(
    tool: Any, session: Any, query_id: int, name: str
) -> tuple[Vault, Actor, tuple[EventType, ...]] | str:
    """(vault, whose events, the type dictionary), or the error text the model gets."""
    memory = await tool.plugin.settled()  # the settings LangBot holds now (live_settings)
    types = memory.settings.event_types
    if not types:
        return f"Error: {FEATURE_OFF}."
    turn = await pm.tool_call(tool.plugin, session, query_id)
    if (refusal := pm.opt_in_error(turn)) is not None:
        return refusal
    if not turn.sender_id:
        return NO_SENDER
    vault, _, scope = pm.open_for_tool(memory, session, turn, name, query_id)
    actor = Actor(
        bot=scope.bot,
        person=turn.sender_id,
        name=turn.sender_name or None,
        chat=scope.session,
        source="agent",
        query_id=query_id,
    )
    log.info(
        "memvault=tool_called tool=%s query_id=%s bot=%s sender_id=%r chat=%s",
        name,
        query_id,
        actor.bot,
        actor.person,
        actor.chat,
    )
    return vault, actor, types


async def run(tool: Any, fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` off the event loop; a refusal (any MemVaultError) is raised for the tool's
    error_reply.replies_errors to answer as `Error: ...`."""
    return await tool.plugin.memory.run(fn, *args)


def text_param(params: dict[str, Any], name: str) -> str | None:
    value = params.get(name)
    return value if isinstance(value, str) and value.strip() else None
