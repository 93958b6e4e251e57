"""Tool `list_events`: the current speaker's key events of this bot (any chat)."""

from __future__ import annotations

from typing import Any

from langbot_plugin.api.definition.components.tool.tool import Tool
from langbot_plugin.api.entities.builtin.provider import session as provider_session
from memvault_plugin import event_tools as et
from memvault_plugin.error_reply import replies_errors

from indexer.injection import events_block
from vault.events import STATUS_FILTERS

MAX_LISTED = 30


class ListEvents(Tool):
    @replies_errors("list_events")
    async def call(
        self, params: dict[str, Any], session: provider_session.Session, query_id: int
    ) -> str:
        status = params.get("status") or "open"
        if status not in STATUS_FILTERS:
            return f"Error: status must be one of {', '.join(STATUS_FILTERS)}."
        opened = await et.open_turn(self, session, query_id, "list_events")
        if isinstance(opened, str):
            return opened
        vault, actor, types = opened
        stored = await et.run(self, et.listed, vault, actor, et.linked(self), status)
        found = [s.event for s in stored]
        shown = events_block.listing(found[:MAX_LISTED], status, types)
        if len(found) > MAX_LISTED:
            shown += f"\n({len(found) - MAX_LISTED} older one(s) not shown.)"
        return shown
