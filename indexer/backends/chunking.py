"""Split long episode bodies into search-sized chunks, keeping Markdown structure.

A chunk is what both indexes hold and what an embedding model sees, so it should be one
coherent piece: a heading starts a new chunk (and is repeated at the top of every later
chunk of its section, so a chunk found alone still says what it is about), paragraphs are
packed together while they fit, and only a paragraph too big on its own is cut, at
sentence ends first (Chinese 。！？ too), then between words, then, for a run with no
space and no sentence end (CJK text without punctuation, a long URL), at the size limit.

Everything works on spans of the original text, so no character is lost or reordered.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DEFAULT_MAX_CHARS = 700

_HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")
_FENCE = re.compile(r" {0,3}(```|~~~)")
_BLANK_LINES = re.compile(r"\n[ \t]*\n\s*")
# CJK sentence ends split anywhere; ASCII ones only before a space, so 3.14 and
# example.com stay whole. Closing quotes/brackets stay with their sentence.
_SENTENCE_END = re.compile(r"(?:[。！？；]+|[.!?…]+(?=\s|$))[”’\"'」』）)\]]*\s*")
_WORD = re.compile(r"\S+\s*")
# A heading longer than this is not repeated: it would eat the room for the text itself.
_MAX_CARRIED_FRACTION = 4


@dataclass(frozen=True)
class Piece:
    """One chunk: `context` is a heading repeated from earlier in the text ("" if none)."""

    context: str
    body: str

    def text(self) -> str:
        return f"{self.context}\n{self.body}" if self.context else self.body


def chunk_text(text: str, max_chars: int = DEFAULT_MAX_CHARS) -> list[str]:
    """Chunks of `text`, in order; [] for blank text, one chunk when it fits."""
    return [piece.text() for piece in split_pieces(text, max_chars)]


def split_pieces(text: str, max_chars: int = DEFAULT_MAX_CHARS) -> list[Piece]:
    if max_chars < 20:
        raise ValueError("max_chars must be at least 20")
    stripped = text.strip()
    if not stripped:
        return []
    if len(stripped) <= max_chars:
        return [Piece("", stripped)]
    pieces: list[Piece] = []
    for heading, start, end in _sections(text):
        carried = heading if heading and len(heading) <= max_chars // _MAX_CARRIED_FRACTION else ""
        budget = max_chars - (len(carried) + 1 if carried else 0)
        units = [u for s, e in _paragraphs(text, start, end) for u in _fit(text, s, e, budget)]
        for number, (s, e) in enumerate(_pack(units, first_limit=max_chars, limit=budget)):
            pieces.append(Piece(carried if number else "", text[s:e].strip()))
    return pieces


def _sections(text: str) -> list[tuple[str, int, int]]:
    """(heading line or "", start, end) spans; a heading line opens its own section."""
    sections: list[tuple[str, int, int]] = []
    heading, start, offset, in_fence = "", 0, 0, False
    for line in text.splitlines(keepends=True):
        if _FENCE.match(line):
            in_fence = not in_fence  # a `#` line inside a code block is code, not a heading
        elif not in_fence and _HEADING.match(line):
            sections.append((heading, start, offset))
            heading, start = line.strip(), offset
        offset += len(line)
    sections.append((heading, start, len(text)))
    return [(h, s, e) for h, s, e in sections if text[s:e].strip()]


def _paragraphs(text: str, start: int, end: int) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    cursor = start
    for gap in _BLANK_LINES.finditer(text, start, end):
        spans.append((cursor, gap.start()))
        cursor = gap.end()
    spans.append((cursor, end))
    return [(s, e) for s, e in spans if text[s:e].strip()]


def _fit(text: str, start: int, end: int, budget: int) -> list[tuple[int, int]]:
    """Spans no longer than `budget` (stripped), cut at the coarsest boundary that works."""
    if _stripped_len(text, start, end) <= budget:
        return [(start, end)]
    spans: list[tuple[int, int]] = []
    for s, e in _split_at(_SENTENCE_END, text, start, end):
        if _stripped_len(text, s, e) <= budget:
            spans.append((s, e))
            continue
        for ws, we in _split_at(_WORD, text, s, e):
            if _stripped_len(text, ws, we) <= budget:
                spans.append((ws, we))
            else:  # no boundary at all inside: cut at the limit
                spans.extend((i, min(i + budget, we)) for i in range(ws, we, budget))
    return [(s, e) for s, e in _pack(spans, first_limit=budget, limit=budget)]


def _split_at(pattern: re.Pattern[str], text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Consecutive spans covering [start, end), each ending after a match of `pattern`."""
    spans: list[tuple[int, int]] = []
    cursor = start
    for match in pattern.finditer(text, start, end):
        if match.end() > cursor:
            spans.append((cursor, match.end()))
            cursor = match.end()
    if cursor < end:
        spans.append((cursor, end))
    return spans


def _pack(units: list[tuple[int, int]], *, first_limit: int, limit: int) -> list[tuple[int, int]]:
    """Greedily join neighbouring spans while the joined text (as written) fits."""
    text_spans: list[tuple[int, int]] = []
    for start, end in units:
        cap = first_limit if len(text_spans) == 1 else limit
        if text_spans and end - text_spans[-1][0] <= cap:
            text_spans[-1] = (text_spans[-1][0], end)
        else:
            text_spans.append((start, end))
    return text_spans


def _stripped_len(text: str, start: int, end: int) -> int:
    return len(text[start:end].strip())
