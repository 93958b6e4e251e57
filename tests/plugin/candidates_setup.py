"""Shared by the plugin's candidate and consolidation tests: a plugin with candidates on over
a real vault, indexes, embedding model and git, driven through the FAKE host (whose
INVOKE_LLM is the FAKE LLM, scripted per test)."""

from __future__ import annotations

import asyncio
import json
import time

from langbot_plugin.api.entities import events

from tests.plugin.fakehost import FakeHost, started_plugin

KB = "kb-memvault"
MODEL = "model-fake"
ON = {"candidates": True, "candidates_model": MODEL}
SAID = "I'm flying to Tokyo on March 12 for the robotics fair"
REPLY = "Have a great trip to the robotics fair!"
PLAN = "Alice flies to Tokyo on 12 March for the robotics fair."
QUESTION = "When do I fly to Tokyo for the robotics fair?"
PLAN_ANSWER = json.dumps(
    {
        "candidates": [
            {
                "kind": "episode",
                "text": PLAN,
                "importance": 3,
                "tags": ["travel"],
                "category": "plan",
                "evidence": "flying to Tokyo on March 12",
            }
        ]
    }
)


async def candidates_plugin(host: FakeHost, tmp_path, **config):
    """A started plugin whose pipeline opted in to memory; jobs start without settling."""
    host.register_memory_kb(KB)
    plugin = await started_plugin(host, tmp_path / "memory", **config)
    plugin.candidates.queue.settle_s = 0.0
    return plugin


async def at_rest(plugin) -> None:
    """Restart the plugin's engine, as a plugin restart does: closing it joins Tantivy's
    background merges, so an index file that changes afterwards was changed by the code
    under test (what a tree hash of the whole vault needs)."""
    plugin.memory.close()
    await asyncio.to_thread(plugin.memory.start, None, watch=False)


def listener(plugin):
    from components.event_listener.injector import MemoryInjector

    injector = MemoryInjector()
    injector.plugin = plugin
    return injector


async def respond(
    plugin, host: FakeHost, said: str = SAID, reply: str = REPLY, query_id: int = 7, **kw
) -> float:
    """One NormalMessageResponded as the runtime dispatches it; the handler's seconds."""
    host.query_vars["user_message_text"] = said
    ctx = host.responded_event(reply, query_id=query_id, **kw)
    (handler,) = listener(plugin).registered_handlers[events.NormalMessageResponded]
    started = time.perf_counter()
    await host.emit(handler, ctx)
    return time.perf_counter() - started


async def settled(plugin, timeout: float = 60.0) -> None:
    await plugin.candidates.queue.drain(timeout)


async def injected(plugin, host: FakeHost, text: str = QUESTION, query_id: int = 9) -> str:
    """Everything the injector added to the prompt for the next turn in group_123."""
    host.query_vars["user_message_text"] = text
    ctx = host.prompt_event("group_123", query_id)
    (handler,) = listener(plugin).registered_handlers[events.PromptPreProcessing]
    await handler(ctx)
    return "\n".join(str(m.content) for m in ctx.event.default_prompt[1:])


def chat(plugin, launcher_id: str = "123"):
    return plugin.memory.scope_of_launcher("group", launcher_id, "bot-1")


async def say(plugin, host: FakeHost, text: str, launcher_id: str = "123") -> str:
    """The one reply `!memory ...` gets in group_<launcher_id>."""
    from components.commands.memory import Memory

    cmd = Memory()
    cmd.plugin = plugin
    replies = [r.text async for r in cmd._execute(host.command(text, launcher_id=launcher_id))]
    assert len(replies) == 1, replies
    return replies[0]
