"""The gate's questions about the world (rule 6 of indexer.recall_gate), one predicate a class.

Each class is a question or request shape x a class of objects (recall_gate_world_words):
word and language tasks, units and quantities, explanations, lists, classification, random
picks, and who made / when / where / the biggest. The predicates read folded text without
apostrophes ("where's" -> "wheres"), as recall_gate_patterns' do.

The one rule that keeps chat questions out: a shape skips only when its object is not the
chat's own. A definite article or a pointer before an event, a plan or a shared thing ("where
is the party", "who wrote the report", "list the tasks", "explain it", 这份报告是谁写的) is
about the chat, and goes on to retrieval; "who wrote Hamlet", "list the planets", "where is
the Sahara located" are about the world. Precedence stays with recall_gate: a recall cue, a
personal reference or a chat name has passed the message before any of these runs.
"""

from __future__ import annotations

import re

from indexer import recall_gate_world_words as V
from indexer.recall_gate_regex import AnyOf, alt

_TAIL = r"\s*[?!.]*$"
# An opener or a Chinese request frame before an English shape: "帮我 list 一下行星".
_LEAD = (
    r"^(?:(?:so|and|hey|ok|um|but|also|quick question|question)[\s,]+|(?:帮我|请|给我|麻烦)\s*)?"
)
_ASK = r"(?:(?:can|could|would|will)\s+(?:you|u)\s+|please\s+|pls\s+)?"
_WORD = r"[a-z][a-z\-]*"
# Every anchored English shape opens with one of these: one match says whether to try them.
_OPENERS = re.compile(
    rf"{_LEAD}(?:who|whos|when|where|wheres|what|whats|which|how|hows|is|are|isnt|arent|does|do"
    r"|list|name|enumerate|give|tell|show|teach|explain|describe|summarize|summarise|can|could"
    r"|would|will|please|pls|spell)(?![a-z])"
)

# The chat's own objects (see the module docstring).
_DET_CHAT = rf"{alt(V.CHAT_DETERMINERS)}\s+(?:{_WORD}\s+){{0,2}}?{alt(V.CHAT_NOUNS_EN)}"
_CHAT_OBJECT = re.compile(rf"^\s*(?:{_DET_CHAT}|{alt(V.CHAT_POINTERS)})")
_DET_CHAT_ANYWHERE = re.compile(_DET_CHAT)  # "the poster for the event"
_CHAT_ZH = re.compile(alt(V.CHAT_ZH))
_QUESTION_WORDS = re.compile(r"^\s*(?:how|what|why|when|where|whether|which|who)\s+")
_CJK_WINDOW = 10  # Han characters either side of a Chinese shape that name its object


def _chat_object(obj: str) -> bool:
    """Whether `obj` (the words after the shape's verb) is the chat's own thing."""
    obj = _QUESTION_WORDS.sub("", obj, count=1)
    return bool(_CHAT_OBJECT.match(obj) or _DET_CHAT_ANYWHERE.search(obj))


def _chat_zh(text: str, found: re.Match[str], before: bool = True, after: bool = True) -> bool:
    """Whether a pointer (这, 他) or a thing of daily life (报告, 会议) stands next to a Chinese
    shape: "这份报告是谁写的" asks about the chat, "哈姆雷特是谁写的" about the world."""
    left = text[max(0, found.start() - _CJK_WINDOW) : found.start()] if before else ""
    right = text[found.end() : found.end() + _CJK_WINDOW] if after else ""
    return bool(_CHAT_ZH.search(left) or _CHAT_ZH.search(right))


def _skips(pattern: re.Pattern[str], text: str) -> bool:
    """A match of `pattern` whose group "obj" is not the chat's own."""
    found = pattern.search(text)
    return bool(found and not _chat_object(found.group("obj")))


def _skips_zh(pattern: re.Pattern[str], text: str, before: bool = True, after: bool = True) -> bool:
    found = pattern.search(text)
    return bool(found and not _chat_zh(text, found, before, after))


# --- word and language tasks -------------------------------------------------------------
_LANGUAGE = AnyOf(
    alt(V.LANGUAGE_EN),
    rf"{_LEAD}{_ASK}spell(?![a-z])",
    rf"^{_LEAD}is\s+{_WORD}\s+a\s+(?:real\s+)?word{_TAIL}",
)
_LANGUAGE_ZH = AnyOf(alt(V.LANGUAGE_ZH), r"用.{1,12}?造(?:一个|个|一)?句")


def language(text: str) -> bool:
    return bool(_LANGUAGE.search(text) or not text.isascii() and _LANGUAGE_ZH.search(text))


# --- units and quantities of the world ---------------------------------------------------
_ZH_UNIT = alt(V.TIME_UNITS_ZH + V.MEASURE_UNITS_ZH)
_QUANTITY = AnyOf(
    r"how\s+many\s+(?:[a-z]+\s+){1,2}?(?:are\s+|is\s+)?(?:there\s+)?(?:in|on)\s+(?:an?|one|every|each)"
    r"\s+[a-z]",
    r"how\s+many\s+(?:[a-z]+\s+){1,2}?(?:are\s+|is\s+)?(?:there\s+)?(?:in|on)\s+the\s+(?:human\s+body"
    r"|body|world|earth|solar\s+system|universe|alphabet|bible|ocean|sky|moon|sun|us|usa|uk|eu"
    r"|periodic\s+table|english\s+language|chinese\s+alphabet|milky\s+way)(?![a-z])",
    rf"how\s+many\s+{alt(V.COUNTED_EN)}\s+(?:does|do)\s+(?!{alt(V.CHAT_POINTERS)})(?:an?\s+|the\s+)?"
    r"[a-z]+(?:\s+[a-z]+)?\s+have(?![a-z])",
    r"how\s+(?:long|far|big|heavy|old|tall|deep|wide|fast|hot|cold|much)\s+(?:is|are|does|do)\s+"
    r"(?:an?|one)\s+[a-z]+(?:\s+[a-z]+)?(?:\s+weigh)?" + _TAIL,
)
_QUANTITY_ZH = AnyOf(
    rf"(?:[一每]|\d+)\s*个?{_ZH_UNIT}\s*(?:有|是|等于|合|包含|包括|能换|换算成?|为)?\s*(?:多少|几)\s*个?"
    rf"{_ZH_UNIT}",
    rf"(?:有|长)(?:几|多少){alt(V.COUNTED_ZH)}",
)


def quantity(text: str) -> bool:
    return bool(_QUANTITY.search(text) or not text.isascii() and _QUANTITY_ZH.search(text))


# --- explain and describe a topic --------------------------------------------------------
_EXPLAIN_EN = re.compile(
    rf"{_LEAD}{_ASK}(?:explain|describe|summarize|summarise)\s+(?:to\s+me\s+|for\s+me\s+|briefly\s+"
    rf"|simply\s+)?(?:the\s+(?:concept|idea|meaning|basics|history)\s+of\s+)?(?P<obj>\S.*)$"
)
_TELL_ABOUT = re.compile(
    rf"{_LEAD}{_ASK}(?:tell|teach)\s+me\s+(?:a\s+bit\s+|a\s+little\s+|something\s+|more\s+)?about"
    r"\s+(?P<obj>\S.*)$"
)
_OVERVIEW = re.compile(
    r"(?:explanation|overview|summary|introduction|intro|rundown)\s+(?:of|to|on|about)\s+"
    r"(?P<obj>\S.*)$"
)
_TELL_WHAT = re.compile(
    rf"{_LEAD}{_ASK}(?:tell\s+me|explain)\s+what\s+(?P<obj>(?:an?\s+)?{_WORD}(?:\s+{_WORD}){{0,2}})\s+"
    rf"(?:is|are|means){_TAIL}"
)
_HOW_WORKS = re.compile(
    rf"{_LEAD}how\s+(?:does|do|did)\s+(?P<obj>(?:an?\s+|the\s+)?{_WORD}(?:\s+{_WORD}){{0,2}})\s+"
    rf"(?:work|works|happen|form|grow|fly|breathe|evolve|spread|reproduce){_TAIL}"
)
_HOW_MADE = re.compile(
    rf"{_LEAD}how\s+(?:are|is|were|was)\s+(?P<obj>(?:an?\s+)?{_WORD}(?:\s+{_WORD})?)\s+(?:made|formed"
    rf"|created|produced|built|measured|calculated|determined|pronounced){_TAIL}"
)
_EXPLAIN_ZH = re.compile(alt(V.EXPLAIN_ZH))


def explain(text: str) -> bool:
    if _skips(_OVERVIEW, text):
        return True
    if _OPENERS.match(text):
        if any(_skips(p, text) for p in (_EXPLAIN_EN, _TELL_ABOUT, _HOW_WORKS, _HOW_MADE)):
            return True
        term = _TELL_WHAT.search(text)
        if term and not any(w in V.NOT_TERM_WORDS for w in term.group("obj").split()[-2:]):
            return True
    # 你能解释一下…: the object follows the request
    return not text.isascii() and _skips_zh(_EXPLAIN_ZH, text, before=False)


# --- list and name requests --------------------------------------------------------------
_LIST_EN = AnyOf(
    rf"{_LEAD}{_ASK}(?:list|name|enumerate)\s+(?:me\s+)?(?P<obj>\S.*)$",
    rf"{_LEAD}{_ASK}(?:give|tell|show)\s+me\s+(?:a\s+list\s+of|(?:some|a\s+few|\d+|two|three|four|"
    r"five|ten)\s+(?:examples|kinds|types)\s+of)\s+(?P<obj>\S.*)$",
    rf"{_LEAD}(?:what|which)\s+are\s+(?:some|the)\s+(?:examples|kinds|types)\s+of\s+(?P<obj>\S.*)$",
)
_NUM_ZH = r"(?:[一二两三四五六七八九十几]+|\d+|一些)"
_LIST_ZH = AnyOf(
    r"(?:列出|列举|罗列|列一下|列个)",
    rf"(?:说出|写出|举出|说|举|列)\s*{_NUM_ZH}\s*(?:个|种|位|样|项|部|本|座|只|类|款|名)",
)


def listing(text: str) -> bool:
    if _OPENERS.match(text) and any(_skips(p, text) for p in _LIST_EN.patterns):
        return True
    return not text.isascii() and any(_skips_zh(p, text, before=False) for p in _LIST_ZH.patterns)


# --- classification yes/no questions -----------------------------------------------------
_KIND = rf"(?:an?\s+)?(?:{_WORD}\s+)?{alt(V.KINDS_EN)}"
_CLASSIFY_EN = AnyOf(
    rf"{_LEAD}(?:is|are|isnt|arent)\s+(?P<obj>(?:an?\s+|the\s+)?{_WORD}(?:\s+{_WORD}){{0,2}}?)\s+"
    rf"(?:considered\s+|classified\s+as\s+|technically\s+|actually\s+|really\s+|still\s+|also\s+)?"
    rf"{_KIND}(?:\s+or\s+{_KIND})?{_TAIL}",
    rf"{_LEAD}(?:what|which)\s+(?:kind|type|sort|class|family)\s+of\s+{alt(V.KINDS_EN)}\s+(?:is|are)"
    rf"\s+(?P<obj>\S.*)$",
    rf"{_LEAD}(?:does|do)\s+(?P<obj>(?:an?\s+|the\s+)?{_WORD}(?:\s+{_WORD})?)\s+count\s+as\s+{_KIND}",
)
_KIND_ZH = alt(V.KINDS_ZH)
_CLASSIFY_ZH = AnyOf(
    rf"(?:是|属于|算|算是)(?:不是)?(?:一种|一类)?{_KIND_ZH}类?(?:吗|么|嘛|吧|呢|[?!。\s]|还是|$)",
    rf"(?:是|属于)(?:什么|哪一?种|哪一?类){_KIND_ZH}",
)


def classification(text: str) -> bool:
    if _OPENERS.match(text) and any(_skips(p, text) for p in _CLASSIFY_EN.patterns):
        return True
    return not text.isascii() and bool(_CLASSIFY_ZH.search(text))


# --- random picks and small generators ---------------------------------------------------
_RANDOM_ZH = re.compile(alt(V.RANDOM_ZH))
_RANDOM = AnyOf(
    alt(V.RANDOM_EN),
    r"(?:give|tell|show|pick|choose|generate|make|say)\s+(?:me\s+|us\s+)?(?:an?\s+|one\s+|some\s+|"
    r"\d+\s+|three\s+|five\s+|ten\s+)?random(?![a-z])",
)


def random_pick(text: str) -> bool:
    return bool(_RANDOM.search(text) or not text.isascii() and _RANDOM_ZH.search(text))


# --- who made it, when, where, which time zone, the biggest ------------------------------
_WHO_MADE = AnyOf(
    rf"{_LEAD}who\s+(?:first\s+|originally\s+|actually\s+)?{alt(V.MAKERS_EN)}\s+(?P<obj>\S.*)$",
    rf"{_LEAD}who\s+(?:is|was|were|s)\s+the\s+(?:director|composer|painter|inventor|founder|founders"
    r"|creator|architect|writer|singer|author|designer|discoverer)\s+of\s+(?P<obj>\S.*)$",
)
_WHEN_MADE = AnyOf(
    rf"{_LEAD}when\s+(?:was|were)\s+(?P<obj>\S.*?)\s+(?:first\s+)?{alt(V.MADE_EN)}(?:\s+.{{0,30}})?"
    + _TAIL,
    rf"{_LEAD}when\s+did\s+(?P<obj>\S.*?)\s+(?:first\s+)?{alt(V.HAPPENED_EN)}(?:\s+.{{0,30}})?{_TAIL}",
    rf"{_LEAD}what\s+year\s+(?:was|were|did)\s+(?P<obj>\S.*)$",
)
_WHERE = AnyOf(
    rf"{_LEAD}where(?:s|\s+is|\s+are|\s+was|\s+were)\s+(?P<obj>\S.*?)\s+{alt(V.WHERE_WORLD_EN)}"
    rf"(?:\s+.{{0,20}})?{_TAIL}",
    rf"{_LEAD}where(?:s|\s+is|\s+are)\s+(?P<obj>the\s+(?:{_WORD}\s+){{0,2}}?{alt(V.WORLD_NOUNS_EN)}"
    rf"(?:\s+of\s+{_WORD})?){_TAIL}",
    rf"{_LEAD}where\s+do\s+(?P<obj>{_WORD}(?:\s+{_WORD})?)\s+(?:live|come\s+from|grow|originate)"
    + _TAIL,
)
# "what is the speed of sound", "the population of Peru": a measure of a named thing.
_MEASURE_OF = re.compile(
    rf"{_LEAD}(?:what|hows|how)(?:s|\s+is|\s+are|\s+was)?\s+the\s+(?:average\s+)?(?:speed|boiling"
    r"\s+point|melting\s+point|freezing\s+point|population|area|height|mass|weight|diameter|radius"
    r"|circumference|depth|length|temperature|age|size|gdp|lifespan|life\s+expectancy|chemical"
    r"\s+formula|formula|symbol|atomic\s+number|currency|national\s+animal|official\s+language)"
    r"\s+(?:of|on|in)\s+(?P<obj>\S.*)$"
)
# "how tall is the Eiffel Tower" asks the world, "how long is the drive" the chat.
_HOW_SIZE = re.compile(
    rf"{_LEAD}how\s+(?:far|tall|big|old|long|deep|high|heavy|wide|large)\s+(?:is|are|was|were)\s+"
    r"(?P<obj>the\s+\S.*)$"
)
_TIMEZONE = AnyOf(
    r"(?:what|which)\s+(?:time\s*zone|timezone)\s+(?:is|are|does|do|in)\s+(?P<obj>\S.*)$",
    r"(?:time\s*zone|timezone|time\s+difference)\s+(?:in|of|for|between|at)\s+(?P<obj>\S.*)$",
)
_SUPERLATIVE = re.compile(
    rf"{alt(V.SUPERLATIVES_EN)}\s+(?:{_WORD}\s+){{0,2}}?{alt(V.WORLD_NOUNS_EN)}(?![a-z])"
)
_WORLD_ZH = AnyOf(
    alt(V.MAKERS_ZH),
    rf"(?:是)?(?:什么时候|哪一年|哪年|何时|几几年){alt(V.MADE_ZH)}(?:的|了|成)?",
    alt(V.WHERE_ZH),
    r"(?:是|在|用|属于)?(?:哪个|什么)时区|(?:和|与|跟).{1,8}?的?时差",
)
_SUPERLATIVE_ZH = re.compile(rf"{alt(V.SUPERLATIVE_ZH)}的{alt(V.WORLD_NOUNS_ZH)}")


_ANCHORED_FACTS = (
    *_WHO_MADE.patterns,
    *_WHEN_MADE.patterns,
    *_WHERE.patterns,
    _MEASURE_OF,
    _HOW_SIZE,
)


def world_fact(text: str) -> bool:
    if _OPENERS.match(text) and any(_skips(p, text) for p in _ANCHORED_FACTS):
        return True
    if any(_skips(p, text) for p in _TIMEZONE.patterns) or _SUPERLATIVE.search(text):
        return True
    if text.isascii():
        return False
    return bool(_SUPERLATIVE_ZH.search(text)) or any(_skips_zh(p, text) for p in _WORLD_ZH.patterns)


# --- definitions of terms with no article ("what is machine learning?") ------------------
_WHAT_ZH = AnyOf(r"(?:是什么|是啥)(?:东西|玩意儿?)?[?!。\s]*$", r"^(?:啥是|啥叫|什么叫做)")


def term_without_article(words: str) -> bool:
    """Whether "what is/are `words`" asks for a term: "machine learning", "black holes", not
    "he doing", "going on", "the plan" (V.NOT_TERM_WORDS)."""
    parts = words.split()
    return 1 < len(parts) <= 3 and not any(w in V.NOT_TERM_WORDS for w in parts)


def cjk_term(term: str) -> bool:
    """Whether a Chinese term in "what is 区块链?" is a term, not the chat's own (这个, 会议)."""
    return not _CHAT_ZH.search(term)


def cjk_what_is(text: str) -> bool:
    """ "区块链是什么" asks for a term; "明天的安排是什么", "这是啥" ask about the chat."""
    return any(_skips_zh(p, text, after=False) for p in _WHAT_ZH.patterns)
