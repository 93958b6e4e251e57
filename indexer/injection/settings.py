"""The settings one injection turn reads (TurnSettings): the plugin's (PluginSettings.turn()),
and the form a snapshot keeps of them, so the standalone Memory Console's recall test runs a
chat's turn with the settings its last real turn had."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from indexer.retrieval.relevance import DEFAULT_FLOOR
from vault.events import EventType, EventTypeError, parse_event_types

# What a stored value may be: the plugin's own bounds (memory_service), read back from a file.
BOUNDS = {"top_k": (1, 1000), "injection_chars": (200, 10_000_000), "events_injected": (0, 20)}


@dataclass(frozen=True)
class TurnSettings:
    """The plugin settings a turn's injection reads (PluginSettings.turn() inside LangBot;
    these defaults are the plugin's, for the standalone console)."""

    top_k: int = 3
    half_life_days: float = 30.0
    injection_chars: int = 4000
    relevance_floor: float = DEFAULT_FLOOR
    gate: bool = True  # the message gate (recall_gate) on automatic recall
    event_types: tuple[EventType, ...] = ()  # empty: no key-events block
    events_injected: int = 5
    # One person across chats (vault.persons, setting linked_people): a linked sender's
    # person profile, key events and speaker-first recall.
    linked_people: bool = False

    def as_json(self) -> dict[str, Any]:
        return {
            "top_k": self.top_k,
            "half_life_days": self.half_life_days,
            "injection_chars": self.injection_chars,
            "relevance_floor": self.relevance_floor,
            "recall_gate": "on" if self.gate else "off",
            # As the setting is written: "name: description" (vault.events.parse_event_types).
            "event_types": [
                f"{t.name}: {t.description}" if t.description else t.name for t in self.event_types
            ],
            "events_injected": self.events_injected,
            "linked_people": self.linked_people,
        }

    @classmethod
    def from_json(cls, data: object) -> TurnSettings | None:
        """Stored settings (a snapshot is a file a person may edit); None unless every value
        is one the plugin accepts."""
        if not isinstance(data, Mapping):
            return None
        counts = {name: data.get(name) for name in BOUNDS}
        if not all(_within(value, *BOUNDS[name]) for name, value in counts.items()):
            return None
        floor, half_life = data.get("relevance_floor"), data.get("half_life_days")
        if not _number(floor) or not 0.0 <= float(floor) <= 1.0:  # type: ignore[arg-type]
            return None
        if not _number(half_life) or float(half_life) < 0:  # type: ignore[arg-type]
            return None
        if data.get("recall_gate") not in ("on", "off"):
            return None
        linked = data.get("linked_people", False)  # absent: a snapshot from before it
        if not isinstance(linked, bool):
            return None
        try:
            types = parse_event_types(data.get("event_types") or [])
        except EventTypeError:
            return None
        return cls(
            top_k=int(counts["top_k"]),  # type: ignore[arg-type]
            half_life_days=float(half_life),  # type: ignore[arg-type]
            injection_chars=int(counts["injection_chars"]),  # type: ignore[arg-type]
            relevance_floor=float(floor),  # type: ignore[arg-type]
            gate=data["recall_gate"] == "on",
            event_types=types,
            events_injected=int(counts["events_injected"]),  # type: ignore[arg-type]
            linked_people=linked,
        )


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _within(value: object, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
