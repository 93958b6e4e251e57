"""What kind of evidence a query holds and a memory shares with it: small, pure, versioned.

Two questions decide how much a list and a match count (indexer.retrieval.fusion's zconf-4 and
indexer.retrieval.relevance's rel-3):

- The query's SHAPE. A single message ("When did Alice move?") and a multi-turn dialogue
  context (lines `<Bart>: "..."` or `Bart: ...`, what a runner or MADial hands over) behave
  differently: measured on ../shared/bench with the embedded USE model, a dialogue's best
  cosine sits about 0.1-0.2 lower than a question's (it is about many things at once) while
  the vector list finds its memory more often than the text list does; a question's text
  list is the precise one. Each shape gets its own list priors and vector scale.
- The KIND of terms a memory matched. A term that is a name (the memory's speaker, a
  speaker of the dialogue), a bare number, or any word when query and memory are written in
  different scripts (an English question and a Chinese memory can only share names, digits
  and brands) is INCIDENTAL: it says who or how many, not what about. The content share
  (matched content weight over what counts as a full match) is a list's evidence.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from indexer.backends import tokenize

EVIDENCE_VERSION = "evid-1"
# A line that starts with a speaker tag: `<Bart>: "..."`, `Bart: ...`, `巴特：...`. The tag is
# short and has no sentence punctuation, so "Note: buy milk" is one line, not a dialogue,
# unless a second tagged line follows.
_STOPS = "<>:：,.!?，。！？"
_TAG = re.compile(rf"^[ \t]*<?([^\s{_STOPS}][^\n{_STOPS}]{{0,38}})>?[ \t]*[:：]", re.M)
DIALOGUE_LINES = 2
DIALOGUE_NAMES = 64  # tags read for names: a pasted log of thousands of lines costs no more
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
_LATIN = re.compile(r"[A-Za-z\u00c0-\u024f]")
# Script of a text: decided by its first characters (a pasted essay costs no more).
SCRIPT_CHARS = 2000


@dataclass(frozen=True)
class QueryShape:
    shape: str  # "message" | "dialogue"
    names: frozenset[str]  # word tokens of the dialogue's speaker tags (lowercased, stemmed)
    script: str  # "cjk" | "latin" | "" (neither: digits, emoji)


@lru_cache(maxsize=4096)
def query_shape(query: str) -> QueryShape:
    tags = _TAG.findall(query[: 20 * SCRIPT_CHARS])
    names: set[str] = set()
    for tag in tags[:DIALOGUE_NAMES]:
        names.update(tokenize.word_tokens(tag))
    if len(tags) < DIALOGUE_LINES:  # "Note: buy milk" names nobody
        return QueryShape("message", frozenset(), script(query))
    return QueryShape("dialogue", frozenset(names), script(query))


def script(text: str) -> str:
    """ "cjk" when CJK characters outnumber Latin letters, "latin" the other way round."""
    head = text[:SCRIPT_CHARS]
    cjk, latin = len(_CJK.findall(head)), len(_LATIN.findall(head))
    if cjk == latin == 0:
        return ""
    return "cjk" if cjk > latin else "latin"


def cross_script(query: QueryShape, memory_text: str) -> bool:
    """Query and memory written in different main scripts: shared words are names."""
    other = script(memory_text)
    return bool(query.script and other and query.script != other)


def incidental(term: str, names: Iterable[str] = (), crossed: bool = False) -> bool:
    """A matched word that says who or how many, not what about (see the module doc)."""
    return crossed or term.isdigit() or term in names
