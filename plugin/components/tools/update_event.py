"""Tool `update_event`: add a dated note to one of the current speaker's open key events."""

from __future__ import annotations

from typing import Any

from langbot_plugin.api.definition.components.tool.tool import Tool
from langbot_plugin.api.entities.builtin.provider import session as provider_session
from memvault_plugin import event_tools as et
from memvault_plugin.error_reply import replies_errors

from indexer.injection import events_block
from vault.events import update_event


class UpdateEvent(Tool):
    @replies_errors("update_event")
    async def call(
        self, params: dict[str, Any], session: provider_session.Session, query_id: int
    ) -> str:
        opened = await et.open_turn(self, session, query_id, "update_event")
        if isinstance(opened, str):
            return opened
        vault, actor, _ = opened
        actor = await et.run(self, et.owner, vault, actor, et.linked(self), params.get("id"))
        done = await et.run(
            self,
            update_event,
            vault,
            actor,
            params.get("id"),
            params.get("note"),
        )
        e = done.event
        return f"Noted on key event {e.id} ({e.type}, still open): {events_block.last_note(e)}"
