"""Text handling of the message gate (indexer.recall_gate): normalisation and chat names.

Kept apart from the rules so both the gate and its name matcher normalise one way.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from indexer import recall_gate_words as W
from indexer.recall_gate_patterns import LATIN_NAME, SQUEEZE

# A gate decision reads the first MAX_CHARS only: a 1 MB paste must cost what a page costs,
# and any cue that matters (a name, "remember", "my") shows in its first page. A longer
# message is never skipped: a skip must cover everything, and the rest was not read.
MAX_CHARS = 4000
NAME_DISPLAY_CHARS = 40
# Names are hostile too: a 1 MB "display name" would make a 1 MB-deep trie (RecursionError)
# and 100,000 names a huge regex. A longer string is not a name anyone types in a message.
MAX_NAME_CHARS = 64
MAX_NAMES = 5000
# Control and format characters (NUL, RTL marks, zero-width joiners, BOM): never content.
_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]")
_SPACES = re.compile(r"[ \t\r\f\v]+")
_CONTENT = re.compile(r"[^\W_]")
_US = re.compile(r"(?<![A-Za-z])U\.?S\.?(?![A-Za-z])")  # the country, not "us"
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]")


def normalise(text: str) -> str:
    """Lowercase NFKC (full-width punctuation and letters become ASCII), no control chars."""
    text = _US.sub(" usa ", _CONTROL.sub(" ", text))
    text = unicodedata.normalize("NFKC", text).casefold()[:MAX_CHARS]
    return text.replace("\u2019", "'").replace("\u2018", "'")


def squeeze(text: str) -> str:
    """Repeated letters once ("thaaanks" -> "thanks", 哈哈哈 -> 哈); digits are kept."""
    return SQUEEZE.sub(r"\1", text)


@dataclass(frozen=True)
class Names:
    latin: re.Pattern[str] | None  # whole words, on the normalised text
    latin_squeezed: re.Pattern[str] | None  # the same names squeezed, for rule 2
    cjk: tuple[tuple[str, str], ...]  # (normalised, display) matched as substrings
    display: dict[str, str]
    words: frozenset[str]  # every Latin word of a name, squeezed, for rule 2's quick test

    def find(self, text: str) -> str | None:
        for key, shown in self.cjk:
            if key in text:
                return shown
        match = self.latin.search(text) if self.latin else None
        return self.display.get(match.group(0), match.group(0)) if match else None

    def remove(self, squeezed: str) -> str:
        for key, _ in self.cjk:
            squeezed = squeezed.replace(squeeze(key), " ")
        return self.latin_squeezed.sub(" ", squeezed) if self.latin_squeezed else squeezed


def shown(name: str) -> str:
    clean = _SPACES.sub(" ", _CONTROL.sub(" ", name.replace("\n", " "))).strip()
    return clean[:NAME_DISPLAY_CHARS]


@lru_cache(maxsize=64)
def names_of(names: tuple[str, ...]) -> Names:
    """Names compiled once per chat's name list (the lead passes the same list per scope)."""
    display: dict[str, str] = {}
    cjk: list[tuple[str, str]] = []
    for raw in names[:MAX_NAMES]:
        if len(raw) > MAX_NAME_CHARS * 4:  # before normalising: NFKC of a huge string costs
            continue
        key = _SPACES.sub(" ", normalise(raw).replace("\n", " ")).strip().lstrip("@")
        if key in W.GENERIC_NAMES or not _CONTENT.search(key) or len(key) > MAX_NAME_CHARS:
            continue
        if _CJK.search(key):
            if len(key) >= 2:  # one Han character (明) occurs inside too many words
                cjk.append((key, shown(raw)))
        elif len(key) >= 2:
            display.setdefault(key, shown(raw))
    keys = sorted(display, key=len, reverse=True)
    latin = LATIN_NAME(keys) if keys else None
    squeezed = (
        LATIN_NAME(sorted({squeeze(k) for k in keys}, key=len, reverse=True)) if keys else None
    )
    words = frozenset(w for k in keys for w in re.findall(r"[a-z0-9]+", squeeze(k)))
    return Names(latin, squeezed, tuple(sorted(cjk, key=lambda c: -len(c[0]))), display, words)
