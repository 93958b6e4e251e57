"""Tool `update_profile`: edit the session's or the current speaker's profile file.

Validation order and messages are upstream's; the checked call becomes one
vault.writes.profile_edit.ProfileEdit, and the edit rules are the vault's
(vault/format/profile_edit.py: a full list or over-long notes is an error instead of silent loss).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from langbot_plugin.api.definition.components.tool.tool import Tool
from langbot_plugin.api.entities.builtin.provider import session as provider_session
from memvault_plugin import pipeline_memory as pm
from memvault_plugin.error_reply import replies_errors

from indexer.injection import prompting
from vault.format.redact_forms import redacted_name
from vault.writes.profile_edit import ProfileEdit

log = logging.getLogger(__name__)

FIELDS = ("name", "traits", "preferences", "notes")
ACTIONS = ("set", "add", "remove")
INVALID = "__invalid__"


def normalize_scope(raw: Any) -> str:
    if raw is None or raw == "":
        return ""
    if not isinstance(raw, str):
        return INVALID
    scope = raw.strip().lower()
    return scope if scope in ("session", "speaker") else INVALID


def normalize_fact_key(raw: Any) -> str:
    if raw is None or raw == "":
        return ""
    if not isinstance(raw, str):
        return INVALID
    return " ".join(raw.split())


class UpdateProfile(Tool):
    @replies_errors("update_profile")
    async def call(
        self, params: dict[str, Any], session: provider_session.Session, query_id: int
    ) -> str:
        field = params.get("field", "")
        action = params.get("action", "")
        value = params.get("value", "")
        scope_name = normalize_scope(params.get("scope", ""))
        fact_key = normalize_fact_key(params.get("fact_key", ""))
        previous_value = params.get("previous_value", "")
        # Logs are storage too: a field or action outside the lists, and the slot key, are
        # what the model sent (a secret as likely as not): logged as a word or a length.
        log.info(
            "memvault=tool_called tool=update_profile query_id=%s field=%s action=%s scope=%s "
            "fact_key_len=%d has_previous_value=%s",
            query_id,
            field if field in FIELDS else "invalid",
            action if action in ACTIONS else "invalid",
            scope_name,
            len(fact_key) if fact_key != INVALID else -1,
            bool(previous_value),
        )
        if not all([field, action, value]):
            return "Error: field, action, and value are all required."
        # The reply goes back to the model (and the host's transcript): redacted echo.
        if field not in FIELDS:
            return f"Error: invalid field '{redacted_name(str(field))}'."
        if action not in ACTIONS:
            return f"Error: invalid action '{redacted_name(str(action))}'."
        if scope_name == INVALID:
            return "Error: invalid scope. Use 'session' or 'speaker'."
        if fact_key == INVALID:
            return "Error: fact_key must be a string."
        if fact_key and field not in ("traits", "preferences"):
            return "Error: fact_key is only supported for 'traits' and 'preferences'."
        if previous_value is None:
            previous_value = ""
        if not isinstance(previous_value, str):
            return "Error: previous_value must be a string."
        if not isinstance(value, str):
            return "Error: value must be a string."

        turn = await pm.tool_call(self.plugin, session, query_id)
        if (refusal := pm.opt_in_error(turn)) is not None:
            return refusal
        target = scope_name or (
            "speaker" if field in ("name", "traits", "preferences") else "session"
        )
        if target == "speaker" and not turn.sender_id:
            return "Error: current speaker is unavailable."

        memory = await self.plugin.settled()
        vault, _, scope = pm.open_for_tool(memory, session, turn, "update_profile", query_id)
        log.info(
            "memvault=update_profile_resolved query_id=%s target_scope=%s session_key=%s "
            "sender_id=%s value_len=%d",
            query_id,
            target,
            scope.session_key,
            turn.sender_id,
            len(value),
        )
        edit = ProfileEdit(
            scope,
            field,
            action,
            value,
            speaker=turn.sender_id if target == "speaker" else None,
            fact_key=fact_key or None,
            previous_value=previous_value,
            # Fills the speaker profile's name only while it is empty (profile_ops).
            speaker_name=turn.sender_name,
        )
        profile = await memory.run(vault.update_profile, edit, source="agent", query_id=query_id)
        log.info(
            "memvault=update_profile_stored query_id=%s target_scope=%s field=%s action=%s "
            "session_key=%s",
            query_id,
            target,
            field,
            action,
            scope.session_key,
        )
        now = datetime.now(UTC)
        return f"{target.capitalize()} profile updated.\n" + prompting.profile_text(profile, now)
