"""The words every surface shows for one search's verdict: the message gate's decision and
the floor that applied (CLI `search --explain`, `!memory search`, the Memory Console's
explain panel, the injection snapshot). One wording, built here from the JSON explain, so
the surfaces cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from indexer.retrieval.relevance import FOLLOW_SHARE

SHAPE_WORDS = {"message": "a single message", "dialogue": "a dialogue"}


def gate_words(gate: Mapping[str, Any] | None) -> str:
    """ "gate: skipped: greeting" / "gate: passed: names Alice" / "gate: off"."""
    if not gate:
        return "gate: off"
    return f"gate: {'passed' if gate['recall'] else 'skipped'}: {gate['reason']}"


def floor_words(absolute: Mapping[str, Any] | None) -> str:
    """ "floor 0.44 for a single message (runners-up 0.33)" ("" when the search judged no
    relevance): the floor and the bar of the results ranked after one that reached it."""
    if not absolute:
        return ""
    shape = SHAPE_WORDS.get(str(absolute.get("shape", "message")), "a single message")
    floor = float(absolute["floor"])
    return f"floor {floor:.2f} for {shape} (runners-up {FOLLOW_SHARE * floor:.2f})"


def verdict_parts(explains: Sequence[Mapping[str, Any]]) -> tuple[str, str] | None:
    """(gate words, floor words) from the first result that was judged (they all share the
    query's gate and floor); None when none was (no results, or no relevance)."""
    for explain in explains:
        absolute = explain.get("absolute")
        if absolute is not None:
            return gate_words(explain.get("gate")), floor_words(absolute)
    return None


def joined(*words: str) -> str:
    """The parts of a verdict as one line: "gate: ...; floor ..."."""
    return "; ".join(w for w in words if w)


def verdict_words(explains: Sequence[Mapping[str, Any]]) -> str:
    """One line for a search from its results' explain dicts: "gate: skipped: greeting;
    floor 0.44 for a single message (runners-up 0.33)". "" when the results carry neither."""
    parts = verdict_parts(explains)
    return joined(*parts) if parts else ""
