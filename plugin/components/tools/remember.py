"""Tool `remember`: write one episode to the chat's memory (upstream name, messages, return),
unless the chat already remembers it (vault.writes.duplicates: then the reply names it)."""

from __future__ import annotations

import logging
from typing import Any

from langbot_plugin.api.definition.components.tool.tool import Tool
from langbot_plugin.api.entities.builtin.provider import session as provider_session
from memvault_plugin import pipeline_memory as pm
from memvault_plugin.error_reply import replies_errors

from indexer import chatter
from indexer.supersede import supersede_on_correction
from vault.errors import BadRequestError
from vault.format.field_input import parse_confidence, parse_expiry, parse_priority
from vault.format.model import CATEGORIES, Speaker
from vault.redaction.redact import redact
from vault.writes.duplicates import Duplicate
from vault.writes.new_episode import NewEpisode

log = logging.getLogger(__name__)

IMPORTANCE_ERROR = "Error: importance must be an integer from 1 to 5."


def parse_importance(raw: Any) -> int | None:
    """2 when absent; models sometimes send "3" or 3.0, which mean 3. None if unusable."""
    if raw is None or raw == "":
        return 2
    if isinstance(raw, bool):
        return None
    if isinstance(raw, float) and raw.is_integer():
        raw = int(raw)
    if isinstance(raw, str) and raw.strip().isdigit():
        raw = int(raw.strip())
    if isinstance(raw, int) and 1 <= raw <= 5:
        return raw
    return None


def parse_tags(raw: Any) -> list[str] | None:
    if raw is None:
        return []
    if not isinstance(raw, list) or not all(isinstance(t, str) for t in raw):
        return None
    return raw


def optional_text(raw: Any) -> str | None | bool:
    """None for absent, the stripped text, or False when it is not a string."""
    if raw is None:
        return None
    if not isinstance(raw, str):
        return False
    return raw.strip() or None


def duplicate_reply(found: Duplicate, query_id: int) -> str:
    """One line the model can act on: what is already there, and how to change it."""
    log.info(
        "memvault=remember_duplicate query_id=%s episode_id=%s match=%s",
        query_id,
        found.id,
        found.match,
    )
    said = " ".join(redact(found.episode.body).text.split())  # a hand-written file: redacted
    said = said if len(said) <= 200 else said[:199] + "…"
    return (
        f"Already remembered as {found.id}: {said} (nothing new was stored; to change it, "
        'remember the new text with the tag "correction").'
    )


class Remember(Tool):
    @replies_errors("remember")
    async def call(
        self, params: dict[str, Any], session: provider_session.Session, query_id: int
    ) -> str:
        log.info(
            "memvault=tool_called tool=remember query_id=%s params_keys=%s",
            query_id,
            ",".join(sorted(params)),
        )
        turn = await pm.tool_call(self.plugin, session, query_id)
        if (refusal := pm.opt_in_error(turn)) is not None:
            return refusal
        content = params.get("content", "")
        if not content or (isinstance(content, str) and not content.strip()):
            return "Error: content is required."
        if not isinstance(content, str):
            return "Error: content must be a string."
        if not (said := chatter.judge(content)).said:  # tool output, a notice, a template
            log.info("memvault=remember_refused query_id=%s reason=%s", query_id, said.rule)
            return f"Error: {said.refusal()}"
        tags = parse_tags(params.get("tags"))
        if tags is None:
            return "Error: tags must be a list of strings."
        importance = parse_importance(params.get("importance"))
        if importance is None:
            return IMPORTANCE_ERROR
        key = optional_text(params.get("key"))
        if key is False:
            return "Error: key must be a string."
        category = optional_text(params.get("category"))
        if category is False or (category is not None and category not in CATEGORIES):
            return f"Error: category must be one of {', '.join(CATEGORIES)}."

        memory = await self.plugin.settled()
        vault, engine, scope = pm.open_for_tool(memory, session, turn, "remember", query_id)
        try:  # Synapse's fields, read by the same rules as the CLI and the console
            priority = parse_priority(params.get("priority"))
            confidence = parse_confidence(params.get("confidence"))
            expires_at = parse_expiry(
                params.get("expires_at"), params.get("expires_in"), vault.clock()
            )
        except BadRequestError as exc:
            return f"Error: {exc}."
        speaker = Speaker(turn.sender_id, turn.sender_name or None) if turn.sender_id else None
        # Logs are storage too: counts and lengths only, never the tags, key or text the
        # model sent (the vault redacts what it writes; these are what it was sent).
        log.info(
            "memvault=remember_storing query_id=%s kb_id=%s user_key=%s sender_id=%s "
            "importance=%d priority=%s tags=%d key_len=%d category=%s expires_at=%s "
            "content_len=%d",
            query_id,
            turn.kb_id,
            scope.user_key,
            turn.sender_id,
            importance,
            priority or "-",
            len(tags),
            len(key or ""),
            category or "",
            expires_at.isoformat() if expires_at else "-",
            len(content),
        )
        request = NewEpisode(
            scope,
            content,
            speaker=speaker,
            tags=tags,
            importance=importance,
            key=key,
            category=category,
            source="agent",
            query_id=query_id,
            priority=priority,
            confidence=confidence,
            expires_at=expires_at,
        )
        done = await memory.run(vault.remember_once, request)
        if done.duplicate is not None:  # nothing written (vault.writes.duplicates)
            return duplicate_reply(done.duplicate, query_id)
        episode = done.episode
        superseded: list[str] = []
        try:
            superseded = await memory.run(supersede_on_correction, engine, vault, scope, episode)
        except Exception:  # noqa: BLE001 - the memory is stored; superseding is a refinement
            log.exception(
                "memvault=supersede_failed query_id=%s episode_id=%s", query_id, episode.id
            )
        log.info(
            "memvault=remember_stored query_id=%s episode_id=%s user_key=%s superseded=%s",
            query_id,
            episode.id,
            scope.user_key,
            ",".join(superseded) or "-",
        )
        # What was stored, not what was sent: a secret in `content` is redacted on disk and
        # must not come back to the model (or a transcript) through this answer.
        return f"Remembered: {episode.body}"
