"""The gate's facts about the world (rule 6 of indexer.gate.rules, "general knowledge"):
who made it, when it was built or happened, where it is, its time zone, its measures, and
the biggest of a kind, in English and Chinese. A shape whose object is the chat's own ("who
wrote the report", "when was the house built", 这份报告是谁写的) does not skip
(recall_gate_chat).
"""

from __future__ import annotations

from indexer.gate import world_words as V
from indexer.gate.chat import LEAD, TAIL, WORD, opener, shapes, skips, skips_zh, table
from indexer.gate.regex import AnyOf, Lazy, alt

# --- who made it, when, where, which time zone, the biggest ------------------------------
_WHO_MADE = AnyOf(
    rf"{LEAD}who\s+(?:first\s+|originally\s+|actually\s+)?{alt(V.MAKERS_EN)}\s+(?P<obj>\S.*)$",
    rf"{LEAD}who(?:s|\s+is|\s+was|\s+were)\s+the\s+(?:director|composer|painter|inventor|founder|founders"
    r"|creator|architect|writer|singer|author|designer|discoverer)\s+of\s+(?P<obj>\S.*)$",
)
_WHEN_MADE = AnyOf(
    rf"{LEAD}when\s+(?:was|were)\s+(?P<obj>\S.*?)\s+(?:first\s+)?{alt(V.MADE_EN)}(?:\s+.{{0,30}})?"
    + TAIL,
    rf"{LEAD}when\s+did\s+(?P<obj>\S.*?)\s+(?:first\s+)?{alt(V.HAPPENED_EN)}(?:\s+.{{0,30}})?{TAIL}",
    rf"{LEAD}what\s+year\s+(?:was|were|did)\s+(?P<obj>\S.*)$",
)
_WHERE = AnyOf(
    rf"{LEAD}where(?:s|\s+is|\s+are|\s+was|\s+were)\s+(?P<obj>\S.*?)\s+{alt(V.WHERE_WORLD_EN)}"
    rf"(?:\s+.{{0,20}})?{TAIL}",
    rf"{LEAD}where(?:s|\s+is|\s+are)\s+(?P<obj>the\s+(?:{WORD}\s+){{0,2}}?{alt(V.WORLD_NOUNS_EN)}"
    rf"(?:\s+of\s+{WORD})?){TAIL}",
    rf"{LEAD}where\s+do\s+(?P<obj>{WORD}(?:\s+{WORD})?)\s+(?:live|come\s+from|grow|originate)"
    + TAIL,
    # a name of geography: "where is mount kilimanjaro", "where's lake titicaca"
    rf"{LEAD}where(?:s|\s+is|\s+are)\s+(?P<obj>(?:mount|mt|lake|cape|isle|gulf|port|fort)\s+{WORD}"
    rf"(?:\s+{WORD})?){TAIL}",
)
# "what is a black hole made of": the matter of a kind ("what is the cake made of" is the chat's)
_MADE_OF = Lazy(
    rf"{LEAD}what(?:s|\s+is|\s+are)\s+(?P<obj>(?:an?\s+|the\s+)?{WORD}(?:\s+{WORD}){{0,2}}?)\s+made"
    rf"\s+(?:of|from|out\s+of){TAIL}"
)
# "what is the speed of sound", "the population of Peru": a measure of a named thing.
_PARTS_OF = Lazy(
    rf"{LEAD}what(?:s|\s+is|\s+are)\s+the\s+(?:main\s+|common\s+|different\s+)?(?:symptoms|causes"
    r"|effects|side\s+effects|benefits|rules|types|kinds|parts|stages|phases|layers|ingredients"
    r"|components|properties|signs|dangers|risks|advantages|disadvantages|pros\s+and\s+cons|uses"
    r"|origins|principles|laws|colors|colours)\s+of\s+(?P<obj>\S.*)$"
)
_WHICH_MOST = Lazy(
    rf"{LEAD}(?:what|which)\s+{alt(V.WORLD_NOUNS_EN)}\s+(?:is|are|has|was)\s+the\s+"
    rf"{alt(V.SUPERLATIVES_EN)}"
)
_MEASURE_OF = Lazy(
    rf"{LEAD}(?:what|hows|how)(?:s|\s+is|\s+are|\s+was)?\s+the\s+(?:average\s+)?(?:speed|boiling"
    r"\s+point|melting\s+point|freezing\s+point|population|area|height|mass|weight|diameter|radius"
    r"|circumference|depth|length|temperature|age|size|gdp|lifespan|life\s+expectancy|chemical"
    r"\s+formula|formula|symbol|atomic\s+number|currency|national\s+animal|official\s+language)"
    r"\s+(?:of|on|in)\s+(?P<obj>\S.*)$"
)
# "how tall is the Eiffel Tower" asks the world, "how long is the drive" the chat.
_HOW_SIZE = Lazy(
    rf"{LEAD}how\s+(?:far|tall|big|old|long|deep|high|heavy|wide|large)\s+(?:is|are|was|were)\s+"
    r"(?P<obj>the\s+\S.*)$"
)
_TIMEZONE = AnyOf(
    r"(?:what|which)\s+(?:time\s*zone|timezone)\s+(?:is|are|does|do|in)\s+(?P<obj>\S.*)$",
    r"(?:time\s*zone|timezone|time\s+difference)\s+(?:in|of|for|between|at)\s+(?P<obj>\S.*)$",
)
_SUPERLATIVE = Lazy(
    rf"{alt(V.SUPERLATIVES_EN)}\s+(?:{WORD}\s+){{0,2}}?{alt(V.WORLD_NOUNS_EN)}(?![a-z])"
)
_WORLD_ZH = AnyOf(
    # "X是谁写的" ends the message; "谁唱的好听" (who sings it better) is the chat's
    alt(V.MAKERS_ZH) + r"(?:(?<=的)(?=[\s?!。,.？！啊呀呢吗了啦]*$)|(?<!的))",
    # a subject first: "故宫是什么时候建的"; "什么时候建好" alone is the chat's own building
    rf"(?<=[\u4e00-\u9fff]{{2}})(?:是)?(?:什么时候|哪一年|哪年|何时|几几年){alt(V.MADE_ZH)}(?:的|了|成)?",
    alt(V.WHERE_ZH),
    r"(?:是|在|用|属于)?(?:哪个|什么)时区|(?:和|与|跟).{1,8}?的?时差",
)
_SUPERLATIVE_ZH = Lazy(rf"{alt(V.SUPERLATIVE_ZH)}的{alt(V.WORLD_NOUNS_ZH)}")


_FACT_SHAPES = table(
    *(("who whos", p) for p in _WHO_MADE.patterns),
    ("when", _WHEN_MADE.patterns[0]),
    ("when", _WHEN_MADE.patterns[1]),
    ("what", _WHEN_MADE.patterns[2]),
    *(("where wheres", p) for p in _WHERE.patterns),
    ("what whats how hows", _MEASURE_OF),
    ("how", _HOW_SIZE),
    ("what whats", _PARTS_OF),
    ("what whats", _MADE_OF),
)


def world_fact(text: str) -> bool:
    if any(skips(p, text) for p in shapes(text, _FACT_SHAPES)):
        return True
    timezone = "zone" in text or "time difference" in text
    if timezone and any(skips(p, text) for p in _TIMEZONE.patterns):
        return True
    # "what's the deepest ocean" asks; "it's the oldest building in town" remarks
    if opener(text) and (_SUPERLATIVE.search(text) or _WHICH_MOST.search(text)):
        return True
    if text.isascii():
        return False
    return bool(_SUPERLATIVE_ZH.search(text)) or any(skips_zh(p, text) for p in _WORLD_ZH.patterns)
