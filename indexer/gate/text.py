"""Text handling of the message gate (indexer.gate.rules): normalisation and chat names.

Kept apart from the rules so both the gate and its name matcher normalise one way.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from indexer.backends.tokenize import ENGLISH_STOP_WORDS
from indexer.gate import words as W
from indexer.gate.regex import SQUEEZE, Lazy

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
_CONTROL = Lazy(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]")
_SPACES = Lazy(r"[ \t\r\f\v]+")
_CONTENT = Lazy(r"[^\W_]")
_US = Lazy(r"(?<![A-Za-z])U\.?S\.?(?![A-Za-z])")  # the country, not "us"
_CJK = Lazy(r"[\u3400-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]")
_ALONE = Lazy(r"'s|\s*[,?!:.]|\s*$")
# A word of a name: letters and digits, an inner apostrophe (O'Brien), no possessive 's.
_L = r"[^\W_\u3400-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]"  # a letter or digit, not CJK
_NAME_WORD = Lazy(rf"{_L}+(?:'(?!s(?!{_L})){_L}+)*")
_CJK_RUN = Lazy(r"[\u3400-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]+")


def normalise(text: str, fold: bool = True) -> str:
    """NFKC (full-width punctuation and letters become ASCII), no control chars, lowercase
    unless `fold` is False (a name that is also a word, "Will", is told apart by its case)."""
    text = _US.sub(" usa ", _CONTROL.sub(" ", text))
    text = unicodedata.normalize("NFKC", text)
    text = (text.casefold() if fold else text)[:MAX_CHARS]
    return text.replace("\u2019", "'").replace("\u2018", "'")


def squeeze(text: str) -> str:
    """Repeated letters once ("thaaanks" -> "thanks", 哈哈哈 -> 哈); digits are kept."""
    return SQUEEZE.sub(r"\1", text)


@dataclass(frozen=True)
class Names:
    """The people of a chat, looked up by word n-grams and CJK substrings: set lookups per
    position, so 5,000 names cost what 5 do (one regex of 5,000 names took 1.5 s to build)."""

    latin: dict[tuple[str, ...], str]  # name words -> the name as given
    cjk: dict[str, str]  # a CJK name -> the name as given, looked up inside CJK runs
    mixed: tuple[tuple[str, str], ...]  # names mixing scripts (小明Ming), matched as substrings
    words: frozenset[str]  # every Latin word of a name, squeezed, for rule 2
    # Names that are also ordinary words (Will, May, Hope): only capitalised, and at the
    # start of a sentence only alone or as "Will's" / "Will," ("Will it rain?" names nobody).
    common: dict[str, str]
    longest: int  # most words in a Latin name
    cjk_lengths: tuple[int, ...]  # the lengths of the CJK names, longest first

    def find(self, text: str, cased: str = "") -> str | None:
        if not (self.latin or self.cjk or self.mixed or self.common):
            return None
        for key, shown in self.mixed:
            if key in text:
                return shown
        for run in _CJK_RUN.findall(text) if self.cjk else ():
            for size in self.cjk_lengths:
                for i in range(len(run) - size + 1):
                    if run[i : i + size] in self.cjk:
                        return self.cjk[run[i : i + size]]
        words = _NAME_WORD.findall(text) if self.latin else []
        for i in range(len(words)):
            for n in range(min(self.longest, len(words) - i), 0, -1):
                shown = self.latin.get(tuple(words[i : i + n]))
                if shown:
                    return shown
        for found in _NAME_WORD.finditer(cased) if self.common else ():
            word = found.group(0)
            if not word[0].isupper() or word.casefold() not in self.common:
                continue
            before = cased[: found.start()].rstrip()
            if before and before[-1] not in ".!?。" or _ALONE.match(cased, found.end()):
                return self.common[word.casefold()]
        return None

    def remove(self, squeezed: str) -> str:
        """`squeezed` without the chat's names ("thanks alice" -> "thanks  ")."""
        for key in (*self.cjk, *(k for k, _ in self.mixed)):
            squeezed = squeezed.replace(squeeze(key), " ")
        if not self.words:
            return squeezed
        return _NAME_WORD.sub(lambda m: " " if m.group(0) in self.words else m.group(0), squeezed)


def shown(name: str) -> str:
    clean = _SPACES.sub(" ", _CONTROL.sub(" ", name.replace("\n", " "))).strip()
    return clean[:NAME_DISPLAY_CHARS]


@lru_cache(maxsize=64)
def names_of(names: tuple[str, ...]) -> Names:
    """Names prepared once per chat's name list (the lead passes the same list per scope)."""
    latin: dict[tuple[str, ...], str] = {}
    cjk: dict[str, str] = {}
    mixed: dict[str, str] = {}
    common: dict[str, str] = {}
    for raw in names[:MAX_NAMES]:
        if len(raw) > MAX_NAME_CHARS * 4:  # before normalising: NFKC of a huge string costs
            continue
        key = _SPACES.sub(" ", normalise(raw).replace("\n", " ")).strip().lstrip("@")
        if key in W.GENERIC_NAMES or not _CONTENT.search(key) or len(key) > MAX_NAME_CHARS:
            continue
        if _CJK.search(key):
            if len(key) >= 2:  # one Han character (明) occurs inside too many words
                into = cjk if _CJK_RUN.fullmatch(key) else mixed
                into.setdefault(key, shown(raw))
            continue
        words = tuple(_NAME_WORD.findall(key))
        if len(key) < 2 or not words:
            continue
        if len(words) == 1 and (key in W.COMMON_WORD_NAMES or key in ENGLISH_STOP_WORDS):
            common.setdefault(words[0], shown(raw))
        else:
            latin.setdefault(words, shown(raw))
    every = [w for ws in latin for w in ws] + list(common)
    return Names(
        latin=latin,
        cjk=cjk,
        mixed=tuple(mixed.items()),
        words=frozenset(squeeze(w) for w in every),
        common=common,
        longest=max((len(ws) for ws in latin), default=0),
        cjk_lengths=tuple(sorted({len(k) for k in cjk}, reverse=True)),
    )
