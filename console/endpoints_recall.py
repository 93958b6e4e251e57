"""/recall/test: what the injector would place for one message, typed as a chosen speaker of
a chosen chat, without a turn.

It runs indexer.injection.turn.build, the very function a real turn of the LangBot plugin
runs (the plugin then appends the blocks to the prompt and records a snapshot): the same
profiles, the same one search (the chat's scope and the libraries of the knowledge bases its
last real turn had attached), the same gate, floor, critical memories, budget and key events.
Nothing is written: no snapshot, no audit line, no file, no commit (build only reads).

Settings: inside LangBot the plugin's own; standalone, those the chat's last real turn
recorded in its snapshot, else the plugin's defaults (`settings_from` says which).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from console.context import ConsoleContext
from console.requests import Body, checked_id
from indexer.injection.route import plan
from indexer.injection.settings import TurnSettings
from indexer.injection.turn import Turn, TurnInput, build, empty, message_input
from indexer.retrieval.outcome import unavailable
from vault.errors import NotFoundError
from vault.layout.keys import ScopeId
from vault.layout.names import MAX_ID_CHARS
from vault.writes.snapshots import read_snapshot

MAX_MESSAGE = 4000  # a chat message; a longer paste is refused, not cut
MAX_NAME = 200
MAX_KBS = 20  # knowledge bases a snapshot may name for the libraries


def recall_test(ctx: ConsoleContext, body: Body) -> dict[str, Any]:
    scope = body.scope(ctx)
    text = body.need("text", limit=MAX_MESSAGE)
    speaker = checked_id(body.text("speaker", required=False, limit=MAX_ID_CHARS), "sender id")
    name = body.text("speaker_name", required=False, limit=MAX_NAME) or ""
    _known_chat(ctx, scope)
    last = read_snapshot(ctx.vault.root, scope) or {}
    settings, settings_from = _settings(ctx, last)
    turn = message_input(0, scope.session, scope, _kb_ids(last), speaker or "", name, text)
    if ctx.engine is None:  # a real turn then injects nothing at all: say so, as it would
        reason = "; ".join(ctx.warnings) or "the index could not be opened"
        result = empty(unavailable(reason), settings.injection_chars)
    else:
        result = build(ctx.vault, ctx.engine, turn, settings)
    return {
        **turn_json(turn, result),
        "settings": settings.as_json(),
        "settings_from": settings_from,
        "recorded": False,  # no snapshot, no audit entry: this was not a turn
    }


def turn_json(turn: TurnInput, result: Turn) -> dict[str, Any]:
    """The blocks in the order and place the injector puts them (route.plan), and why."""
    shown = result.injection.episodes
    placement = plan(result.injection.profile, shown.text, result.events.text)
    nothing = result.nothing_injected
    return {
        "scope_key": turn.scope.session_key,
        "user_key": turn.scope.user_key,
        "speaker": {"id": turn.sender_id, "name": turn.sender_name},
        "command": turn.is_command,
        "blocks": [
            {"block": block, "target": target, "text": text, "chars": len(text)}
            for block, target, text in placement.messages
        ],
        "placed": placement.record(),
        "gate": result.verdict.gate,
        "floor": result.verdict.floor,
        "why": result.why.as_json() if result.why else None,
        "nothing_injected": nothing.as_json() if nothing else None,
        "recalled_ids": list(result.recalled_ids),
        "episode_ids": list(result.placed_ids),
        "critical_ids": list(result.critical_ids),
        "event_ids": list(result.events.ids),
        "left_out": shown.left_out,
        "injection_chars": result.injection.chars,
        "budget_chars": result.budget,
        "kb_ids": list(turn.kb_ids),
    }


def _known_chat(ctx: ConsoleContext, scope: ScopeId) -> None:
    """A chat of the vault: its folder, or (isolation bot) its bot's shared memory. A typo'd
    chat or a bot that has no such chat is refused rather than answered "no memories"."""
    layout = ctx.vault.layout
    if layout.session_dir(scope).is_dir():
        return
    if scope.isolation == "bot" and layout.episodes_dir(scope).is_dir():
        return
    bot = scope.bot or "(no bot)"
    raise NotFoundError(
        f"bot {bot} has no chat {scope.session} in this vault: pick a chat from the list "
        "(a chat appears once it holds a memory or a profile)"
    )


def _settings(ctx: ConsoleContext, last: Mapping[str, Any]) -> tuple[TurnSettings, str]:
    if ctx.host == "langbot":
        return ctx.turn_settings(), "langbot"
    recorded = TurnSettings.from_json(last.get("turn_settings"))
    if recorded is not None:
        return recorded, "last_turn"
    return ctx.turn_settings(), "defaults"


def _kb_ids(last: Mapping[str, Any]) -> tuple[str, ...]:
    """The MemVault knowledge bases the chat's last real turn had attached (their libraries
    are searched with the chat): the snapshot's `kb_ids`, or its one `kb_id` (older ones)."""
    raw = last.get("kb_ids")
    if not isinstance(raw, list):
        raw = [last["kb_id"]] if isinstance(last.get("kb_id"), str) else []
    ids = [k for k in raw if isinstance(k, str) and 0 < len(k) <= MAX_ID_CHARS]
    return tuple(dict.fromkeys(ids))[:MAX_KBS]


ROUTES = {"/recall/test": recall_test}
