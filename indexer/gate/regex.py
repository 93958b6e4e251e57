"""Regex building blocks of the message gate: phrase tries, several-pattern searches, and
patterns compiled on first use.

Latin phrases match as whole words (no letter or digit on either side); CJK phrases as
substrings, since Chinese has no spaces. No pattern nests quantifiers: matching stays linear
in the (capped) message length.

Every gate pattern is a Lazy (or an AnyOf, lazy too): compiling all of them took ~0.15 s
of CPU at import, a third of what a `memvault search` from a cold shell spent before it
read an index (issue 23 item 4). A message compiles only the patterns its rules reach; a
long-running process (the plugin, a writer) compiles each once, as before.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

CJK_CHARS = "\u3400-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"
SQUEEZE = re.compile(r"([^\W\d_])\1+")
_NOT_VARIANTS = frozenset(("ill", "id", "were", "well", "hell", "shell", "wed", "its", "hes"))


def squeeze_letters(text: str) -> str:
    return SQUEEZE.sub(r"\1", text)


def _trie(phrases: Iterable[str], boundary: str) -> str:
    """A regex matching any of `phrases`, factored by common prefix (a trie), longest first.

    A flat alternation of a few hundred phrases tries each at every position (~100 us a
    message). Here each position tries one branch per character, and the pattern opens with
    a literal per branch, so the engine skips ahead to a possible first character. A phrase
    that starts or ends with a letter or digit must not touch another [boundary] character:
    the start is checked just after the first character (a look-behind first would hide the
    literal), the end by a look-ahead where the phrase ends. CJK edges need no boundary.
    """
    root: dict[str, dict] = {}
    for phrase in phrases:
        node = root
        for ch in phrase:
            node = node.setdefault(ch, {})
        node[""] = {}
    edge = re.compile(f"[{boundary}]")

    def emit(node: dict[str, dict], last: str, top: bool) -> str:
        kids = []
        for ch, sub in sorted(node.items()):
            if not ch:
                continue
            lit = r"\s+" if ch == " " else re.escape(ch)
            start = f"(?<![{boundary}]{lit})" if top and edge.match(ch) else ""
            kids.append(lit + start + emit(sub, ch, False))
        if "" in node:
            kids.append(f"(?![{boundary}])" if edge.match(last) else "")
        if len(kids) == 1:
            return kids[0]
        return "(?:" + "|".join(kids) + ")"

    return emit(root, "", True)


def alt(phrases: Iterable[str], boundary: str = "a-z0-9", variants: bool = True) -> str:
    """One alternation of `phrases`: Latin edges bounded by no [boundary] character."""
    # The rules read text without apostrophes (what's -> whats), so every phrase is listed
    # that way too; but for the few where dropping it makes another word (i'll -> ill).
    unique = set(phrases)
    if variants:
        unique |= {p.replace("'", "") for p in unique if p.replace("'", "") not in _NOT_VARIANTS}
    return _trie(unique, boundary)


class Lazy:
    """re.compile(source) on first use; the methods the gate calls, as a Pattern has them.
    Two threads that race the first use both compile the same pattern: harmless."""

    __slots__ = ("source", "_compiled")

    def __init__(self, source: str) -> None:
        self.source = source
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.source)
        return self._compiled

    def search(self, text: str, *at: int) -> re.Match[str] | None:
        return self.compiled.search(text, *at)

    def match(self, text: str, *at: int) -> re.Match[str] | None:
        return self.compiled.match(text, *at)

    def fullmatch(self, text: str, *at: int) -> re.Match[str] | None:
        return self.compiled.fullmatch(text, *at)

    def sub(self, repl: Any, text: str, count: int = 0) -> str:
        return self.compiled.sub(repl, text, count)

    def subn(self, repl: Any, text: str, count: int = 0) -> tuple[str, int]:
        return self.compiled.subn(repl, text, count)

    def split(self, text: str, maxsplit: int = 0) -> list[Any]:
        return self.compiled.split(text, maxsplit)

    def findall(self, text: str, *at: int) -> list[Any]:
        return self.compiled.findall(text, *at)

    def finditer(self, text: str, *at: int) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(text, *at)

    def __getattr__(self, name: str) -> Any:  # .pattern, .groups, ...: the compiled one's
        return getattr(self.compiled, name)


class AnyOf:
    """Several patterns searched one by one: an alternation whose branches open with a
    look-behind or a class loses the engine's first-character skip for all its branches.
    Each is compiled on first use (Lazy)."""

    def __init__(self, *patterns: str) -> None:
        self.patterns = tuple(Lazy(p) for p in patterns)

    def search(self, text: str) -> re.Match[str] | None:
        for pattern in self.patterns:
            found = pattern.search(text)
            if found:
                return found
        return None
