"""What the injector and the tools share: which knowledge bases are MemVault's, whether the
current pipeline opted in to memory, and who is speaking
(the per-scope injection snapshot lives in vault.writes.snapshots).

Opt-in works as in LongTermMemory: a pipeline uses memory when one of MemVault's knowledge
bases is attached to it. LangBot's `list_pipeline_knowledge_bases` only gives uuid, name and
description, so MemVault keeps its own list: the KnowledgeEngine component records every KB
created with it in plugin storage under `kb_configs` (knowledge_store.KB_CONFIGS_KEY,
upstream's key and shape: a JSON object `{kb_id: creation_config}`), and this module reads it.
(LangBot 4.11 answers `list_pipeline_knowledge_bases` from the query var
`_knowledge_base_uuids`; MemVault leaves that variable as the pipeline set it.)
The injector's turn asks for both lists through `turn_facts`, which keeps them in the
plugin process (kb_cache.py: a KB created or deleted is seen by the next turn).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langbot_plugin.api.proxies.query_based_api import QueryBasedAPIProxy

from vault.errors import MemVaultError
from vault.format.jsonin import load_json

from .kb_cache import KbCache, list_key
from .knowledge_store import KB_CONFIGS_KEY

log = logging.getLogger(__name__)


async def memory_kb_configs(plugin: Any) -> dict[str, dict[str, Any]]:
    """MemVault's knowledge bases, `{kb_id: creation_config}`; {} when none was created."""
    try:
        raw = await plugin.get_plugin_storage(KB_CONFIGS_KEY)
    except Exception as exc:  # noqa: BLE001 - a missing key raises; the host's error type varies
        log.debug("memvault=kb_configs_unavailable error=%r", str(exc))
        return {}
    try:
        data = load_json(raw.decode("utf-8") if isinstance(raw, bytes) else raw, KB_CONFIGS_KEY)
    except (ValueError, UnicodeDecodeError) as exc:
        log.warning("memvault=kb_configs_corrupt key=%s error=%r", KB_CONFIGS_KEY, str(exc))
        return {}
    if isinstance(data, dict):
        return {str(k): v if isinstance(v, dict) else {} for k, v in data.items()}
    if isinstance(data, list):  # tolerated: a plain list of ids
        return {str(k): {} for k in data}
    return {}


@dataclass(frozen=True)
class TurnFacts:
    """What the injector asks the host at the start of a turn."""

    configs: dict[str, dict[str, Any]]  # MemVault's KBs (memory_kb_configs)
    pipeline_kbs: list[Any]  # list_pipeline_knowledge_bases
    query_vars: dict[str, Any]
    bot_uuid: str | None


async def turn_facts(plugin: Any, ctx: Any) -> TurnFacts:
    """The turn's query vars and bot from the host; the two KB lists from the plugin's
    KbCache when it holds them fresh (kb_cache.py: when each is asked again). Every call
    that is asked is asked in parallel, except the pipeline's list on a miss that only the
    query vars reveal. A failed host call raises, as asyncio.gather does."""
    cache: KbCache | None = getattr(plugin, "kb_cache", None)
    if cache is None:
        configs, kbs, query_vars, bot_uuid = await asyncio.gather(
            memory_kb_configs(plugin),
            ctx.list_pipeline_knowledge_bases(),
            ctx.get_query_vars(),
            ctx.get_bot_uuid(),
        )
        return TurnFacts(configs, kbs, query_vars, bot_uuid)
    generation = cache.generation
    kept_configs = cache.configs()
    calls: list[Any] = [ctx.get_query_vars(), ctx.get_bot_uuid()]
    if kept_configs is None:
        calls.append(memory_kb_configs(plugin))
    asked_list = cache.asks_list_up_front()
    if asked_list:
        calls.append(ctx.list_pipeline_knowledge_bases())
    answers = await asyncio.gather(*calls)
    query_vars, bot_uuid = answers[0], answers[1]
    if kept_configs is None:
        kept_configs = answers[2]
        cache.keep_configs(kept_configs, generation)
    key = list_key(query_vars)
    cache.host_sends_var = key is not None
    kbs = answers[-1] if asked_list else cache.pipeline_kbs(key)
    if kbs is None:
        kbs = await ctx.list_pipeline_knowledge_bases()
        asked_list = True
    if asked_list:  # a kept answer is not kept again: it must age out
        cache.keep_pipeline_kbs(key, kbs, generation)
    return TurnFacts(kept_configs, kbs, query_vars, bot_uuid)


def attached_kbs(configs: Mapping[str, Any], pipeline_kbs: Sequence[Any]) -> list[str]:
    """MemVault KB ids attached to this pipeline, in the pipeline's order."""
    ids = [kb.get("uuid") for kb in pipeline_kbs if isinstance(kb, dict)]
    return [kb_id for kb_id in ids if kb_id in configs]


def kb_state(configs: Mapping[str, Any], pipeline_kbs: Sequence[Any]) -> tuple[str, str | None]:
    """("none" | "inactive" | "active", the MemVault KB id that decided it): none = no
    MemVault KB exists, inactive = none of them is attached to this pipeline."""
    attached = attached_kbs(configs, pipeline_kbs)
    if attached:
        return "active", attached[0]
    if configs:
        return "inactive", next(iter(configs))
    return "none", None


def sender_of(query_vars: Mapping[str, Any]) -> tuple[str, str]:
    """(sender_id, sender_name) from the query vars, "" when unknown.

    Stripped as the vault reads ids back: a blank sender id from the host means "unknown"
    (no speaker), never a speaker `" "` whose memories and profile could not be found.
    """
    return (
        str(query_vars.get("sender_id", "") or "").strip(),
        str(query_vars.get("sender_name", "") or "").strip(),
    )


# --------------------------------------------------------------------------- tools

NO_KB = "Error: no memory knowledge base configured. Create one first."
KB_NOT_IN_PIPELINE = "Error: memory knowledge base is not configured for the current pipeline."


@dataclass(frozen=True)
class ToolCall:
    """What a tool needs to know about the turn it runs in."""

    bot_uuid: str | None
    sender_id: str
    sender_name: str
    kb_state: str  # none | inactive | active (see kb_state)
    kb_id: str | None
    attached: tuple[str, ...] = ()  # MemVault KBs of this pipeline: their libraries recall


async def tool_call(plugin: Any, session: Any, query_id: int) -> ToolCall:
    """The bot, the speaker and the pipeline's opt-in, from four host calls in parallel."""
    api = QueryBasedAPIProxy(
        query_id=query_id, plugin_runtime_handler=plugin.plugin_runtime_handler
    )
    bot_uuid, query_vars, configs, pipeline_kbs = await asyncio.gather(
        api.get_bot_uuid(),
        api.get_query_vars(),
        memory_kb_configs(plugin),
        api.list_pipeline_knowledge_bases(),
    )
    sender_id, sender_name = sender_of(query_vars)
    state, kb_id = kb_state(configs, pipeline_kbs)
    bot = bot_uuid or getattr(session, "bot_uuid", None) or None
    attached = tuple(dict.fromkeys(attached_kbs(configs, pipeline_kbs)))
    return ToolCall(bot, sender_id, sender_name, state, kb_id, attached)


def opt_in_error(turn: ToolCall) -> str | None:
    """The upstream error a tool returns when this pipeline has not opted in, else None."""
    if turn.kb_state == "none":
        return NO_KB
    if turn.kb_state == "inactive":
        return KB_NOT_IN_PIPELINE
    return None


def open_for_tool(
    memory: Any, session: Any, turn: ToolCall, tool: str, query_id: int
) -> tuple[Any, Any, Any]:
    """(vault, engine, scope) for a tool call. Memory unavailable, or a scope it cannot use,
    raises its MemVaultError: the tool's error_reply.replies_errors answers `Error: ...`."""
    try:
        vault, engine = memory.require()
        scope = memory.scope_of_launcher(session.launcher_type, session.launcher_id, turn.bot_uuid)
    except MemVaultError as exc:
        log.warning("memvault=%s_failed query_id=%s error=%r", tool, query_id, str(exc))
        raise
    return vault, engine, scope
