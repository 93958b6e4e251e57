"""Tool `forget`: delete one episode of the current chat's scope, and nothing outside it."""

from __future__ import annotations

import logging
from typing import Any

from langbot_plugin.api.definition.components.tool.tool import Tool
from langbot_plugin.api.entities.builtin.provider import session as provider_session
from memvault_plugin import pipeline_memory as pm
from memvault_plugin.error_reply import replies_errors

from vault.errors import NotFoundError

log = logging.getLogger(__name__)


class Forget(Tool):
    @replies_errors("forget")
    async def call(
        self, params: dict[str, Any], session: provider_session.Session, query_id: int
    ) -> str:
        turn = await pm.tool_call(self.plugin, session, query_id)
        if turn.kb_state == "none":
            return "Error: no memory knowledge base configured."
        episode_id = params.get("episode_id", "")
        if isinstance(episode_id, int) and not isinstance(episode_id, bool):
            episode_id = str(episode_id)
        if not episode_id or not isinstance(episode_id, str) or not episode_id.strip():
            return "Error: episode_id is required."
        episode_id = episode_id.strip()

        memory = await self.plugin.settled()
        vault, _, scope = pm.open_for_tool(memory, session, turn, "forget", query_id)
        log.info(
            "memvault=tool_called tool=forget query_id=%s kb_id=%s user_key=%s episode_id=%s",
            query_id,
            turn.kb_id,
            scope.user_key,
            episode_id,
        )
        try:
            gone = await memory.run(
                vault.forget, scope, episode_id, source="agent", query_id=query_id
            )
        except NotFoundError:
            # Upstream reports success either way; saying so would make the model claim a
            # deletion that did not happen (e.g. an id from another chat). Any other refusal
            # (an id two files share, a person's edit git could not keep first) is
            # replies_errors': nothing was deleted, and its message says what to do.
            log.info(
                "memvault=forget_refused query_id=%s user_key=%s episode_id=%s reason=not_in_scope",
                query_id,
                scope.user_key,
                episode_id,
            )
            return (
                f"Error: no episode {episode_id} in this chat's memory; nothing was deleted. "
                "Use recall_memory to find the id."
            )
        log.info(
            "memvault=forget_done query_id=%s user_key=%s episode_id=%s",
            query_id,
            scope.user_key,
            episode_id,
        )
        if gone.aside:
            return f"Deleted episode {episode_id}; {gone.note()}."
        if gone.kept:
            return (
                f"Deleted episode {episode_id}. Its file had changes by a person that git did "
                f"not hold yet; they were committed first ({gone.kept[:12]}) and can be restored."
            )
        return f"Deleted episode {episode_id}."
