"""What is the chat's own, for the gate's world shapes (recall_gate_world, recall_gate_facts).

The one rule that keeps chat questions out of rule 6: a shape about the world skips only
when its object is not the chat's own. A question with a definite article about an event, a
plan or a shared thing is not general knowledge: "the X" is the chat's own unless X is a world
thing that takes "the" ("the planets", "the Eiffel Tower") or is named by "of" ("the rules of
chess"); a pointer or a person of the chat ("explain it", "name one thing you liked"), and in
Chinese a pointer or a daily-life noun next to the shape (这份报告是谁写的), mark it too. Such a
message goes on to retrieval; "who wrote Hamlet", "list the planets", "where is the Sahara
located" are about the world.

Also the opener dispatch: every anchored English shape opens with a known word (after an
opener such as "hey bot,"), matched once per message, so a message tries only its shapes.
"""

from __future__ import annotations

import re
from functools import lru_cache

from indexer.gate import world_words as V
from indexer.gate.regex import AnyOf, Lazy, alt

TAIL = r"\s*[?!.]*$"
# An opener, the bot addressed, or a Chinese request frame before an English shape:
# "@bot what is...", "hey bot, list...", "帮我 list 一下行星". Shared with recall_gate_patterns.
LEAD = (
    r"^(?:@\S+\s+)?(?:(?:so|and|hey|hi|ok|okay|um|but|also|yo|bot|btw|quick question|question)"
    r"[\s,]+)*(?:(?:帮我|请|给我|麻烦)\s*)?"
)
ASK = r"(?:(?:can|could|would|will)\s+(?:you|u)\s+|please\s+|pls\s+|plz\s+)?"
WORD = r"[a-z][a-z\-]*"
# Every anchored English shape opens with one of these: one match says whether to try them.
_OPENERS = Lazy(
    rf"{LEAD}(?P<op>who|whos|when|where|wheres|what|whats|which|how|hows|is|are|isnt|arent|does"
    r"|do|list|name|enumerate|give|tell|show|teach|explain|describe|summarize|summarise|can|could"
    r"|would|will|please|pls|plz|spell)(?![a-z])"
)
ANY_OPENER = frozenset(("can", "could", "would", "will", "please", "pls", "plz"))
Shapes = dict[str, tuple[Lazy, ...]]


@lru_cache(maxsize=16)
def opener(text: str) -> str:
    """The word an anchored English shape opens with ("" for none): each predicate tries only
    the shapes of that word (one cached match per message instead of one per shape)."""
    found = _OPENERS.match(text)
    return found.group("op") if found else ""


def table(*entries: tuple[str, Lazy]) -> Shapes:
    table: dict[str, tuple[Lazy, ...]] = {"*": tuple(p for _, p in entries)}
    for words, pattern in entries:
        for word in words.split():
            table[word] = (*table.get(word, ()), pattern)
    return table


def shapes(text: str, table: Shapes) -> tuple[Lazy, ...]:
    op = opener(text)
    return table["*"] if op in ANY_OPENER else table.get(op, ()) if op else ()


# The chat's own objects (see the module docstring).
# "the poster for the event" finds "the event"; "the planets in order" is no chat thing,
# and "the rules of chess" names a world thing ("the rules of the game" does not).
_NOT_LINK = r"(?!(?:in|on|of|at|for|with|to|from|by)\s)"
_DET_CHAT = (
    rf"{alt(V.CHAT_DETERMINERS)}\s+(?:{_NOT_LINK}{WORD}\s+){{0,2}}?{alt(V.CHAT_NOUNS_EN)}"
    rf"(?!\s+of\s+(?!{alt(V.CHAT_DETERMINERS + V.CHAT_POINTERS)})[a-z])"
)
_CHAT_OBJECT = Lazy(rf"^\s*(?:{_DET_CHAT}|{alt(V.CHAT_POINTERS)})")
_DET_CHAT_ANYWHERE = Lazy(_DET_CHAT)  # "the poster for the event"
# "the X" is the chat's own unless X is a world thing that takes "the" (the planets, the
# Eiffel Tower, the French Revolution, the telephone) or is of a named thing ("the rules of
# chess"): "who won the bet", "explain the homework", "the client" are about the chat.
_THE = Lazy(r"^\s*the\s")
_WORLD_MARK = AnyOf(
    alt(V.THE_WORLD_EN),
    rf"(?<![a-z])of\s+(?!{alt(V.CHAT_DETERMINERS + V.CHAT_POINTERS)})[a-z0-9]",
)
# A person of the chat anywhere in the object: "name one thing you liked", "list everyone's".
_PEOPLE = Lazy(alt(V.CHAT_PEOPLE))
_PREPOSITION = Lazy(r"^\s*(?:on|in|at|for|to|with|from|about|into|onto|by)\s")
CHAT_ZH = Lazy(alt(V.CHAT_ZH))
_QUESTION_WORDS = Lazy(r"^\s*(?:how|what|why|when|where|whether|which|who)\s+")
_PARTICLES = Lazy(r"[\W_呗吧呀啊嘛呢哦了啦哈吗]+")
_CJK_WINDOW = 10  # Han characters either side of a Chinese shape that name its object


def chat_object(obj: str) -> bool:
    """Whether `obj` (the words after the shape's verb) is the chat's own thing."""
    obj = _QUESTION_WORDS.sub("", obj, count=1)
    if _CHAT_OBJECT.match(obj) or _PREPOSITION.match(obj) or _PEOPLE.search(obj):
        return True  # "wrote on the whiteboard": no object named, so the chat's own
    if _THE.match(obj):
        return not _WORLD_MARK.search(obj)
    return bool(_DET_CHAT_ANYWHERE.search(obj))


def chat_zh(text: str, found: re.Match[str], before: bool = True, after: bool = True) -> bool:
    """Whether a pointer (这, 他) or a thing of daily life (报告, 会议) stands next to a Chinese
    shape: "这份报告是谁写的" asks about the chat, "哈姆雷特是谁写的" about the world."""
    left = text[max(0, found.start() - _CJK_WINDOW) : found.start()] if before else ""
    right = text[found.end() : found.end() + _CJK_WINDOW] if after else ""
    return bool(CHAT_ZH.search(left) or CHAT_ZH.search(right))


def skips(pattern: Lazy, text: str) -> bool:
    """A match of `pattern` whose group "obj" is not the chat's own."""
    found = pattern.search(text)
    return bool(found and not chat_object(found.group("obj")))


def skips_zh(pattern: Lazy, text: str, before: bool = True, after: bool = True) -> bool:
    found = pattern.search(text)
    if not found or chat_zh(text, found, before, after):
        return False
    # a request with nothing to work on ("介绍一下", "讲讲呗") is a reply to the chat
    return before or len(_PARTICLES.sub("", text[found.end() :])) >= 2
