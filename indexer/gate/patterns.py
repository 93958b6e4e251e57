"""The gate's regexes, compiled once at import from the word classes of recall_gate_words.

Latin phrases match as whole words (no letter or digit on either side); CJK phrases as
substrings, since Chinese has no spaces. Alternations are sorted longest first, so "thank
you" wins over "you" and 我们 over 我. No pattern nests quantifiers: matching stays linear
in the (capped) message length.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from indexer.gate import facts, world
from indexer.gate import topics as T
from indexer.gate import words as W
from indexer.gate.chat import LEAD
from indexer.gate.regex import AnyOf, Lazy
from indexer.gate.regex import alt as _alt
from indexer.gate.regex import squeeze_letters as _squeeze

_CJK = Lazy(r"[\u4e00-\u9fff]")


# Rule 2, on squeezed text without apostrophes. One alternation over every class, longest
# first, so 嗯哼 (filler) is not cut into 嗯 (acknowledgement) + 哼; SOCIAL_CLASS then names
# the class of what matched. A phrase in two classes keeps the first one listed here.
_SOCIAL_CLASSES = (
    ("thanks", W.THANKS),
    ("farewell", W.FAREWELLS),
    ("greeting", W.GREETINGS),
    ("laughter", W.LAUGHTER),
    ("acknowledgement", W.ACKNOWLEDGEMENTS + W.REACTIONS),
    ("follow-up", W.FOLLOW_UPS),
    ("filler", W.FILLERS),
)
SOCIAL_CLASS: dict[str, str] = {}
for _name, _phrases in _SOCIAL_CLASSES:
    for _phrase in _phrases:
        SOCIAL_CLASS.setdefault(_squeeze(_phrase.replace("'", "")), _name)
# Laughter typed as a shape (ahahah, hehehe, lolol, xddd, 2333) rather than a word.
LAUGH_SHAPE = Lazy(
    r"(?<![a-z0-9])(?:a?(?:h[aeiouy]){2,}h?|a(?:h[aeiouy])+h?|h[ae]h|l(?:ol)+|lmf?ao|x+d|h|w)"
    r"(?![a-z0-9])|(?<![0-9])23{2,}(?![0-9])"
)
# Every Latin word of a social phrase: a message with any other word (and no laughter shape
# or name) is not social-only, which one set lookup per word says before any regex runs.
SOCIAL_WORDS = frozenset(w for phrase in SOCIAL_CLASS for w in re.findall(r"[a-z0-9]+", phrase))
# Searched apart from the shapes, so the phrase trie keeps its first-character skip.
SOCIAL = Lazy(_alt(SOCIAL_CLASS))
APPLAUSE = Lazy(r"(?<![0-9])6{2,}(?![0-9])")  # 666: well done

# Chat-app placeholders for what is not text: [图片], [捂脸] (WeChat), [CQ:face,id=1] (QQ).
PLACEHOLDER = Lazy(r"\[cq:[^\]\n]{0,200}\]|\[[\u4e00-\u9fff]{1,6}\]|\[[a-z ]{1,15}\]")
# Anything that asks: small talk (rule 8) is only ever a remark, never a question.
QUESTION = AnyOf(
    r"[?？]",
    _alt(
        (
            *("what", "who", "whom", "whose", "where", "when", "why", "how", "which"),
            *("吗", "呢", "么", "啥", "什么", "谁", "哪", "几", "多少", "怎么", "怎样", "为什么"),
            *("是不是", "有没有", "能不能", "会不会", "要不要", "可不可以"),
        )
    ),
)

REMARK = Lazy(_alt(W.REMARK_EN + W.REMARK_ZH))

# Rule 3.
RECALL = Lazy(_alt(W.RECALL_EN + W.RECALL_ZH))

# Rule 4. "i" is not the "i" of "i.e."; an apostrophe next to a word keeps "i" out of "i'm".
PERSONAL = AnyOf(
    _alt(
        (
            *W.STRONG_FIRST_EN,
            *W.WEAK_FIRST_EN,
            *W.STRONG_FIRST_ZH,
            *W.WEAK_FIRST_ZH,
            *W.KIN_ZH,
            *W.SECOND_PAST_ZH,
            *W.KIN_BARE_EN,
            *W.SECOND_PAST_EN,
        ),
        "a-z0-9'",
    ),
    r"i(?<![a-z0-9'.]i)(?![a-z0-9']|\.e)",  # "i", not the "i" of "i.e." or "i'm"
    _alt(("your", "his", "her", "their")) + rf"\s+(?:[a-z]+\s+)?{_alt(W.KIN_EN)}",
    r"did(?<![a-z]did)\s+you(?![a-z0-9]|\s+know)",  # "did you know" opens trivia
)
FRAMES = Lazy(_alt(W.REQUEST_FRAMES_EN + W.REQUEST_FRAMES_ZH + W.EMPTY_FIRST, "a-z0-9'"))

# What a translate/rewrite/define request works on: quoted text, or what follows its colon.
OBJECT_VERBS = Lazy(
    _alt(T.TRANSLATE_EN + T.TRANSLATE_ZH + T.REWRITE_EN + T.REWRITE_ZH + ("mean", "意思"))
)
QUOTED = Lazy(
    r'"[^"\n]{0,400}"|“[^”\n]{0,400}”|「[^」\n]{0,400}」|『[^』\n]{0,400}』|《[^》\n]{0,400}》'
    r"|(?<![a-z])'[^'\n]{1,400}'(?![a-z])"
)
# A decimal point does not end a sentence ("what is 3.5 times 2").
# "i.e." and "?!" inside a sentence do not end it: an end is followed by a space or the end.
SENTENCE_END = Lazy(r"[.!?。]+(?=\s|$)|。|\n")
FIRST_SENTENCE = Lazy(r"(?:[^.!?。\n]|[.!?](?!\s|$))*[.!?。]*")

# Rule 6: one predicate per impersonal class, tested in this order.
_NUM = r"(?:\d[\d.,]*|(?<![a-z])(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred|thousand)|[零一二三四五六七八九十百千万两]+)"  # noqa: E501
_OPS = _alt(T.ARITH_WORDS_EN)
_UNITS = _alt(T.UNITS)
_ARITH_STRONG = AnyOf(
    r"\d\s*(?:[+*×÷^=]|\*\*)\s*[-(]?\s*\d|\d\s*[+*×÷^=]\s*\?|\d\s*%\s*of\s*\d",
    rf"{_NUM}\s*{_OPS}\s*[-(]?{_NUM}(?![a-z])",
    _alt(("convert", "how many", "how much"))
    + rf"\s+(?:\S+\s+){{0,4}}?(?:in|to|into)\s+(?:an?\s+|one\s+)?{_UNITS}",
    rf"\d\s*{_UNITS}\s+(?:in|to|into)\s+{_UNITS}",
    rf"\d\s*{_UNITS}\s*(?:等于|是|换|合|能换)?\s*多少\s*{_UNITS}",
    r"\d\s*(?:squared|cubed)|(?:square\s+root\s+of|sqrt|factorial\s+of)\s*\(?\d",
    rf"{_NUM}\s*{_alt(T.ARITH_WORDS_ZH)}\s*{_NUM}",  # 三加五, not 十一加班 or 一加手机
    r"\d\s*(?:的平方|的立方|次方|开方)",
)
# Arithmetic needs a number: most messages have none, and this one search says so.
_ANY_NUMBER = AnyOf(
    r"[\d零一二三四五六七八九十百千万两]",
    _alt(
        (
            *("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"),
            *("ten", "eleven", "twelve", "twenty", "thirty", "forty", "fifty", "hundred"),
            "thousand",
        )
    ),
)
_ARITH_WEAK = Lazy(r"\d\s*[-/x]\s*\d")  # 5-3, 12/4, 17x23: also a date or a size
_ARITH_ASK = Lazy(_alt(T.ARITH_ASK))
_ARITH_TOPIC = Lazy(_alt(T.ARITH_TOPICS))
_CALCULATE = Lazy(_alt(("calculate", "compute", "solve", "算一下", "计算", "算算")))
_DIGIT = Lazy(r"\d")
# A Chinese time question ends the message: 今天几号 asks the date, 今天几号开会 a plan.
_TIME = AnyOf(_alt(T.TIME_EN), _alt(T.TIME_ZH) + r"(?=[\s?!。,.啊呀呢吗了啦]*$)")
# An English weather word is a question about the weather only when asked ("will it rain?",
# "the forecast for tomorrow"); "the rain ruined the picnic" is a story.
_WEATHER = Lazy(_alt(T.WEATHER_ZH))
_WEATHER_EN = Lazy(_alt(T.WEATHER_EN))
_WEATHER_ASK = AnyOf(
    r"\?",
    _alt(
        (
            *("what", "whats", "how", "hows", "will", "is it", "gonna", "going to", "today"),
            *("tomorrow", "tonight", "this week", "this weekend", "forecast", "should"),
        )
    ),
)
_TRANSLATE = AnyOf(
    _alt(T.TRANSLATE_EN + T.TRANSLATE_ZH),
    f"{_alt(T.LANGUAGES_ZH)}\\s*(?:里|中|里面)?\\s*(?:{_alt(T.SAY_ZH)}|是什么|叫什么)",
)
_CODE_ALONE = AnyOf(
    _alt(T.CODE_LANGS_EN + T.CODE_ZH),
    r"```|def(?<![a-z]def)\s+\w+\(|#include|console\.log|=>|traceback\s+\(most",
    r"select(?<![a-z]select)\s+\S+\s+from(?![a-z])",
)
_CODE_GENERIC = Lazy(_alt(T.CODE_GENERIC_EN))
_VERBS = _alt(
    T.REQUEST_VERBS_EN + ("how to", "how do", "how can", "how should", "another", "one more")
)
_REQUEST = Lazy(_VERBS)
_DEFINE = AnyOf(
    _alt(T.DEFINE_EN + T.DEFINE_ZH),
    # "what does he mean?" asks about the conversation, not a word
    r"what(?<![a-z]what)\s+(?:does|do)\s+(?!(?:he|she|they|you|his|her|their)(?![a-z]))"
    r"(?:\S+\s+){0,6}?mean(?![a-z])",
)
# "what is photosynthesis?", "what are black holes?", "what's a black hole?": up to three
# words, with a/an or without (then no word may make it chat: recall_gate_world).
_WHAT_IS = Lazy(
    rf"{LEAD}what(?:\s+exactly)?(?:'s|s|\s+is|\s+are)\s+(?:exactly\s+)?"
    r"(?:([a-z][a-z\-]*(?:\s+[a-z][a-z\-]*){0,2}|[\u4e00-\u9fff]{2,8})"
    r"|an?\s+([a-z][a-z\-]*(?:\s+[a-z][a-z\-]*){0,2}))"
    r"\s*[?!.]*$"
)
_ABOUT_BOT = Lazy(_alt(T.ABOUT_BOT))
_ADVICE = Lazy(_alt(T.ADVICE))
# "explain what a blockchain is", "explain an API": a term with an article, short message.
_EXPLAIN = Lazy(
    r"^(?:(?:can|could)\s+you\s+)?explain\s+(?:to\s+me\s+)?(?:what\s+)?an?\s+\w+(?:\s+\w+)?"
    r"(?:\s+is)?\s*[?!.]*$"
)
_CREATIVE_VERBS = _alt((*T.REQUEST_VERBS_EN, "another", "one more", "got", "any", "know", "hear"))
_CREATIVE = AnyOf(
    rf"{_CREATIVE_VERBS}[^.?!]{{0,40}}?{_alt(T.CREATIVE_OBJECTS_EN)}",
    _alt(T.CREATIVE_ZH),
    # 写一首关于月亮的诗, 讲个好笑的故事: a measure word, a few words, the kind of text
    r"(?:写|作|来|讲|说|编)(?:一|两|几)?(?:首|篇|个|段|则)[^。？！?!]{0,12}?(?:诗|词|故事|笑话|歌|小说|作文|段子)",
)
_REWRITE = AnyOf(
    _alt(T.REWRITE_EN + T.REWRITE_ZH),
    r"make(?<![a-z]make)\s+(?:this|it)\s+(?:\w+\s+){0,2}?(?:more|less|shorter|longer|clearer|polite"
    r"|formal|casual|friendlier|better)(?![a-z])",
)
_GENERAL = AnyOf(
    _alt(T.GENERAL_EN + T.GENERAL_ZH),
    _alt(("largest", "biggest", "tallest", "longest", "highest", "smallest", "deepest"))
    + r"\s+\w+(?:\s+\w+)?\s+(?:in\s+the|on\s+earth|ever)(?![a-z])",
)


def _general(text: str) -> bool:
    return bool(_GENERAL.search(text)) or facts.world_fact(text)


def _arithmetic(text: str) -> bool:
    if not _ANY_NUMBER.search(text):
        return False
    if _ARITH_STRONG.search(text):
        return True
    if not _DIGIT.search(text):
        return False
    return bool(
        (_ARITH_WEAK.search(text) and _ARITH_ASK.search(text))
        or _ARITH_TOPIC.search(text)
        or _CALCULATE.search(text)
    )


def _weather(text: str) -> bool:
    if _WEATHER.search(text):
        return True
    return bool(_WEATHER_EN.search(text) and _WEATHER_ASK.search(text))


def _code(text: str) -> bool:
    return bool(_CODE_ALONE.search(text) or (_CODE_GENERIC.search(text) and _REQUEST.search(text)))


def _definition(text: str) -> bool:
    if _DEFINE.search(text) or _EXPLAIN.match(text) or world.cjk_what_is(text):
        return True
    term = _WHAT_IS.match(text)
    if not term:
        return False
    bare = term.group(1)
    if term.group(2) or _CJK.match(bare):  # "what's a monad", "what is 区块链"
        return bool(term.group(2)) or world.cjk_term(bare)
    return bare not in T.NOT_TERMS and (" " not in bare or world.term_without_article(bare))


# Translation and rewrite come first: their object ("translate: 今天天气很好") must not make
# the message look like a weather or arithmetic question.
CATEGORY_PATTERNS: tuple[tuple[str, str, Callable[[str], bool]], ...] = (
    ("translation", "impersonal.translation", lambda t: bool(_TRANSLATE.search(t))),
    ("rewrite or summary", "impersonal.rewrite", lambda t: bool(_REWRITE.search(t))),
    ("word or language question", "impersonal.language", world.language),
    ("arithmetic", "impersonal.arithmetic", _arithmetic),
    ("units and quantities", "impersonal.quantity", world.quantity),
    ("time or date", "impersonal.time", lambda t: bool(_TIME.search(t))),
    ("weather", "impersonal.weather", _weather),
    ("code", "impersonal.code", _code),
    ("definition", "impersonal.definition", _definition),
    ("explanation of a topic", "impersonal.explain", world.explain),
    ("joke, story or poem", "impersonal.creative", lambda t: bool(_CREATIVE.search(t))),
    ("about the bot", "impersonal.about_bot", lambda t: bool(_ABOUT_BOT.search(t))),
    ("random pick", "impersonal.random", world.random_pick),
    ("list of things", "impersonal.list", world.listing),
    ("classification question", "impersonal.classification", world.classification),
    ("advice or how-to", "impersonal.advice", lambda t: bool(_ADVICE.search(t))),
    ("general knowledge", "impersonal.general_knowledge", _general),
)
