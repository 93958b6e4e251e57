"""Reads `recall_memory`'s plain-text answer back (memvault_plugin/recall_text.py documents it), for
the tests that look at what it found: fails on any line off the documented shape."""

from __future__ import annotations

import re
from dataclasses import dataclass

NOTHING = "No relevant memories found"  # then "." or ": <why>." (recall_text.nothing)
HEADER = re.compile(r"(\d+) memor(?:y|ies) \((\d+) verified, (\d+) unverified\)")
LINE = re.compile(
    r"(?P<n>\d+)\. \(id:(?P<id>[^)\s]+)\)(?P<mark> \[unverified\])? \[(?P<meta>[^\[\]]*)\] "
    r"(?P<text>.*)"
)
MORE = re.compile(r"\(\+\d+ more: raise top_k or add a filter to see them\)")


@dataclass(frozen=True)
class Line:
    id: str
    meta: str  # "priority · category · date[ · speaker][ · #tag...]", escaped
    unverified: bool
    text: str  # the memory's text, escaped (prompt_values.neutralise)


def parse(text: str) -> tuple[tuple[int, int, int], list[Line]]:
    """(shown, verified, unverified) from the header, and the lines in order."""
    head, *rest = text.split("\n")
    found = HEADER.fullmatch(head)
    assert found, head
    if rest and MORE.fullmatch(rest[-1]):
        rest = rest[:-1]
    matches = [LINE.fullmatch(line) for line in rest]
    assert all(matches), rest
    lines = []
    for number, m in enumerate(matches, 1):
        assert m is not None and int(m["n"]) == number
        lines.append(Line(m["id"], m["meta"], m["mark"] is not None, m["text"]))
    counts = (int(found[1]), int(found[2]), int(found[3]))
    assert counts[0] == len(lines) and counts[1] + counts[2] == len(lines)
    assert counts[2] == sum(line.unverified for line in lines)
    return counts, lines


def ids(text: str) -> list[str]:
    """The ids recall answered with, best first; [] for "No relevant memories found: ..."."""
    if text.startswith(NOTHING):
        assert "\n" not in text, text  # the empty answer is one line
        return []
    return [line.id for line in parse(text)[1]]
