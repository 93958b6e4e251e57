"""Tool `open_event`: start a key event (a typed matter) of the current speaker."""

from __future__ import annotations

from typing import Any

from langbot_plugin.api.definition.components.tool.tool import Tool
from langbot_plugin.api.entities.builtin.provider import session as provider_session
from memvault_plugin import event_tools as et
from memvault_plugin.error_reply import replies_errors

from vault.events import StoredEvent, open_event


class OpenEvent(Tool):
    @replies_errors("open_event")
    async def call(
        self, params: dict[str, Any], session: provider_session.Session, query_id: int
    ) -> str:
        opened = await et.open_turn(self, session, query_id, "open_event")
        if isinstance(opened, str):
            return opened
        vault, actor, types = opened
        done = await et.run(
            self,
            open_event,
            vault,
            actor,
            params.get("type"),
            params.get("summary"),
            types,
        )
        return _opened(done)


def _opened(stored: StoredEvent) -> str:
    e = stored.event
    return (
        f"Opened key event {e.id} ({e.type}): {e.summary}. Use this id with update_event "
        "and close_event."
    )
