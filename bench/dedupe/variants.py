"""The bench's constructed variants of a memory (bench.dedupe.pairs): its halves swapped,
its first half alone, the exact-rule variants (case, full width, spaces), one number changed."""

from __future__ import annotations

import re

_LOWER_STARTS = frozenset(
    [
        "the",
        "a",
        "an",
        "he",
        "she",
        "they",
        "we",
        "it",
        "his",
        "her",
        "their",
        "my",
        "our",
        "this",
        "that",
    ]
)
_EN_JOIN = re.compile(r"^(?P<a>[^,;]{12,}?)(?:, and |; | and )(?P<b>[^,;]{12,})$")


def swap_clauses(text: str, chinese: bool) -> str | None:
    """The text's two halves the other way round, or None when it has not two."""
    body = text.strip()
    if chinese:
        parts = [p for p in re.split(r"[，,]", body.rstrip("。.！!")) if p]
        if len(parts) != 2 or min(len(p) for p in parts) < 4:
            return None
        return f"{parts[1]}，{parts[0]}。"
    match = _EN_JOIN.match(body.rstrip("."))
    if match is None:
        return None
    first, second = match.group("a"), match.group("b")
    head = first.split()[0]
    if head.casefold() in _LOWER_STARTS:  # "The ..." mid-sentence; a name keeps its capital
        first = first[0].lower() + first[1:]
    return f"{second[0].upper()}{second[1:]}, and {first}."


def first_clause(text: str) -> str | None:
    """The first half of a two-part English sentence ("A, and B." -> "A."), or None."""
    match = _EN_JOIN.match(text.strip().rstrip("."))
    return f"{match.group('a')}." if match else None


def variants(text: str) -> list[str]:
    """The exact rule's variants: upper case, full-width ASCII, every space doubled."""
    full = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)
    return [text.upper(), full, re.sub(r" ", "  ", f"  {text} ")]


_NUMBER = re.compile(r"\b(\d+)\b")
_EN_NUMBERS = ["two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
_ZH_NUMBERS = "两三四五六七八九"


def change_number(text: str, chinese: bool) -> str | None:
    """The text with its first number changed (digits, or a number word / numeral)."""
    if m := _NUMBER.search(text):
        value = int(m.group(1))
        return f"{text[: m.start()]}{value + 1 if value % 10 != 9 else value - 1}{text[m.end() :]}"
    if chinese:
        for i, c in enumerate(text):
            if c in _ZH_NUMBERS:
                other = _ZH_NUMBERS[(_ZH_NUMBERS.index(c) + 1) % len(_ZH_NUMBERS)]
                return text[:i] + other + text[i + 1 :]
        return None
    for word in _EN_NUMBERS:
        if m := re.search(rf"\b{word}\b", text, flags=re.I):
            other = _EN_NUMBERS[(_EN_NUMBERS.index(word) + 1) % len(_EN_NUMBERS)]
            return text[: m.start()] + other + text[m.end() :]
    return None
