"""Where the injector's texts go in LangBot's prompt: decided here and nowhere else.

Measured on LangBot 4.11.2 with its default runner (LocalAgent): every message of
`default_prompt` reaches the model, in order, after the pipeline prompt; anything put into
`event.prompt` is dropped (it arrives empty at PromptPreProcessing and nothing reads it
back). So all go into `default_prompt` as system messages: the profile block, the memory
block, then the speaker's open key events (events_block). A host that honours `prompt` is a
change to ROUTE only. Pure: the plugin's prompt_route appends the planned messages to the
event, the Memory Console's recall test shows the same plan.
"""

from __future__ import annotations

from dataclasses import dataclass

PROFILE, MEMORIES, EVENTS = "profile", "memories", "events"
# Which event list each block goes to, in the order they are appended.
ROUTE: tuple[tuple[str, str], ...] = (
    (PROFILE, "default_prompt"),
    (MEMORIES, "default_prompt"),
    (EVENTS, "default_prompt"),
)


@dataclass(frozen=True)
class Placement:
    """Which block went where, in order: ((block, event list, text), ...)."""

    messages: tuple[tuple[str, str, str], ...]

    def record(self) -> dict[str, list[str]]:
        """The snapshot's `placed`: {"default_prompt": ["profile", "memories"]} (as placed)."""
        out: dict[str, list[str]] = {target: [] for _, target in ROUTE}
        for block, target, _ in self.messages:
            out[target].append(block)
        return out


def plan(profile_text: str, memory_text: str, events_text: str = "") -> Placement:
    """The placement of this turn's blocks ("" = that block is left out)."""
    texts = {PROFILE: profile_text, MEMORIES: memory_text, EVENTS: events_text}
    return Placement(
        tuple((block, target, texts[block]) for block, target in ROUTE if texts.get(block))
    )
