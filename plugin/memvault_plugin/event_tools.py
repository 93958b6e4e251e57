"""What the four key-event tools share: is the feature on, whose events these are, and the
run off the event loop (each error reaches the model through error_reply).

LangBot cannot hide a plugin's tool per setting: the runtime lists every Tool component
of the plugin's manifest (langbot_plugin runtime `PluginManager.list_tools`, read from the
components registered when the plugin connects, before its settings are known), so the
tools are always offered and refuse, saying why, while the event-type dictionary is empty.

The person is the turn's sender id as the host reports it (query var `sender_id`), never a
parameter the model could set; the bot is the host's bot uuid. So a tool call reaches the
speaker's own events of this bot and nothing else; with the setting linked_people, those of
every sender id the operator linked to the same person of this bot (vault.persons), which
stay in the folder of the sender that opened them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from typing import Any, TypeVar

from vault.events import FEATURE_OFF, Actor, EventType, StoredEvent, load_events, select
from vault.persons import events_of, identity_of, owner_of
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


def linked(tool: Any) -> bool:
    """The setting linked_people as in effect (open_turn settled the service)."""
    return bool(getattr(tool.plugin.memory.settings, "linked_people", False))


def listed(vault: Vault, actor: Actor, on: bool, status: str) -> list[StoredEvent]:
    """The speaker's (their linked person's) events of this bot with `status`, newest first."""
    senders = identity_of(vault.layout, actor.bot, actor.person, on).senders
    if len(senders) <= 1:  # the speaker alone: their folder's refusal is said, as before
        return select(load_events(vault.layout, actor.bot, actor.person)[0], status)
    return select(events_of(vault.layout, actor.bot, senders)[0], status)


def owner(vault: Vault, actor: Actor, on: bool, event_id: object) -> Actor:
    """The actor whose folder holds `event_id`: the speaker, or another sender id of their
    linked person; a change is written (and audited) where the event lives."""
    senders = identity_of(vault.layout, actor.bot, actor.person, on).senders
    if len(senders) <= 1:
        return actor
    return replace(actor, person=owner_of(vault.layout, actor.bot, senders, event_id))
