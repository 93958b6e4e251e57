"""Runs after MemVault's injector (attached second): records `_ltm_context` and the prompt
messages exactly as the next plugin sees them."""

import probe_log
from langbot_plugin.api.definition.components.common.event_listener import EventListener
from langbot_plugin.api.entities import events
from langbot_plugin.api.entities.context import EventContext


class Probe(EventListener):
    def __init__(self) -> None:
        super().__init__()

        @self.handler(events.PromptPreProcessing)
        async def on_prompt(event_ctx: EventContext) -> None:
            query_vars = await event_ctx.get_query_vars()
            event = event_ctx.event
            probe_log.write(
                "prompt",
                query_id=event_ctx.query_id,
                session_name=event.session_name,
                user_message_text=query_vars.get("user_message_text"),
                ltm_context=query_vars.get("_ltm_context"),
                kb_uuids=query_vars.get("_knowledge_base_uuids"),
                default_prompt=[
                    {"role": m.role, "text": probe_log.text_of(m)} for m in event.default_prompt
                ],
                prompt=[{"role": m.role, "text": probe_log.text_of(m)} for m in event.prompt],
            )
