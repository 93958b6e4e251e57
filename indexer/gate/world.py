"""The gate's questions about the world (rule 6 of indexer.gate.rules), one predicate a class.

Each class is a question or request shape x a class of objects (recall_gate_world_words):
word and language tasks, units and quantities, explanations, lists, classification, random
picks, definitions without an article; who made / when / where / the biggest live in
recall_gate_facts. The predicates read folded text without apostrophes ("where's" ->
"wheres"), as recall_gate_patterns' do. A shape whose object is the chat's own does not skip
(recall_gate_chat). Precedence stays with recall_gate: a recall cue, a personal reference or
a chat name has passed the message before any of these runs.
"""

from __future__ import annotations

from indexer.gate import world_words as V
from indexer.gate.chat import (
    ANY_OPENER,
    ASK,
    CHAT_ZH,
    LEAD,
    TAIL,
    WORD,
    chat_object,
    opener,
    shapes,
    skips,
    skips_zh,
    table,
)
from indexer.gate.regex import AnyOf, Lazy, alt

# --- word and language tasks -------------------------------------------------------------
_LANGUAGE = AnyOf(
    alt(V.LANGUAGE_EN),
    rf"{LEAD}{ASK}spell(?![a-z])",
    rf"^{LEAD}is\s+{WORD}\s+a\s+(?:real\s+)?word{TAIL}",
)
_END_ZH = r"(?=[\s?!。,.？！吧呗啊呀呢吗了啦]*$)"  # the phrase ends the message
_LANGUAGE_ZH = AnyOf(
    alt(V.LANGUAGE_ZH),
    r"用.{1,12}?造(?:一个|个|一)?句",
    rf"(?:造|写)(?:一个|个|几个|两个|三个)?句子?{_END_ZH}",  # not "造句这种作业太无聊了"
    r"(?<![你他她书])怎么(?:读|念)",  # not "你怎么读这么快", "这本书怎么读"
)
# What a word task works on follows its phrase, after a preposition: "a synonym for this".
_LINKS = Lazy(r"^\s*(?:(?:for|of|with|to|in|that|means|meaning|is|out)\s+)*")


def language(text: str) -> bool:
    found = _LANGUAGE.search(text)
    # "spell it out", "how do you pronounce his name": the chat's own word, not a word task
    if found and not chat_object(_LINKS.sub("", text[found.end() :], count=1)):
        return True
    return not text.isascii() and bool(_LANGUAGE_ZH.search(text))


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
    # "how heavy is an elephant"; "how much is a ticket" asks a price the chat may know
    r"how\s+(?:long|far|big|heavy|old|tall|deep|wide|fast|hot|cold)\s+(?:is|are)\s+(?:an?|one)\s+"
    r"[a-z]+(?:\s+[a-z]+)?" + TAIL,
    r"how\s+much\s+(?:does|do)\s+(?:an?\s+|one\s+)?[a-z]+(?:\s+[a-z]+)?\s+weigh" + TAIL,
)
_QUANTITY_ZH = AnyOf(
    rf"(?:[一每]|\d+)\s*个?{_ZH_UNIT}\s*(?:有|是|等于|合|包含|包括|能换|换算成?|为)?\s*(?:多少|几)\s*个?"
    rf"{_ZH_UNIT}",
    rf"(?:有|长)(?:几|多少){alt(V.COUNTED_ZH)}",
)


def quantity(text: str) -> bool:
    if "how" in text and _QUANTITY.search(text):  # every English shape asks "how ..."
        return True
    return not text.isascii() and bool(_QUANTITY_ZH.search(text))


# --- explain and describe a topic --------------------------------------------------------
_EXPLAIN_EN = Lazy(
    rf"{LEAD}{ASK}(?:explain|describe|summarize|summarise)(?:\s*一下\s*|\s+)(?:to\s+me\s+|for\s+me\s+|briefly\s+"
    rf"|simply\s+)?(?:the\s+(?:concept|idea|meaning|basics|history)\s+of\s+)?(?P<obj>\S.*)$"
)
# "tell me about Sarah" may be a person the chat knows (names holds only its speakers): one
# bare word is a topic only by its ending (gravity, economics, photosynthesis, volcanoes).
_TOPIC_WORD = (
    r"[a-z\-]*(?:ism|ology|ics|tion|sion|sis|ity|ment|ness|ance|ence|phy|try|omy|ture"
    r"|[tkrnpdm]s|oes|ies|ches|shes)"  # or a plural: volcanoes, planets, stars
)
_TELL_ABOUT = Lazy(
    rf"{LEAD}{ASK}(?:tell|teach)\s+me\s+(?:a\s+bit\s+|a\s+little\s+|something\s+|more\s+)?about"
    rf"\s+(?P<obj>(?:{WORD}|\S+)\s+\S.*|{_TOPIC_WORD}{TAIL})"
)
_OVERVIEW = Lazy(
    r"(?:explanation|overview|summary|introduction|intro|rundown)\s+(?:of|to|on|about)\s+"
    r"(?P<obj>\S.*)$"
)
_OVERVIEW_WORDS = ("explanation", "overview", "summary", "intro", "rundown")
_TELL_WHAT = Lazy(
    rf"{LEAD}{ASK}(?:tell\s+me|explain)\s+what\s+(?P<obj>(?:an?\s+)?{WORD}(?:\s+{WORD}){{0,2}})\s+"
    rf"(?:is|are|means){TAIL}"
)
_HOW_WORKS = Lazy(
    rf"{LEAD}how\s+(?:does|do|did)\s+(?P<obj>(?:an?\s+|the\s+)?{WORD}(?:\s+{WORD}){{0,2}})\s+"
    rf"(?:work|works|happen|form|grow|fly|breathe|evolve|spread|reproduce|make|produce|build"
    rf"|survive|communicate|navigate|hunt|sleep|see|digest|migrate|hibernate|erupt|move|swim"
    rf"|freeze|melt|boil|glow|change)(?:\s+{WORD}){{0,2}}" + TAIL
)
_HOW_MADE = Lazy(
    rf"{LEAD}how\s+(?:are|is|were|was)\s+(?P<obj>(?:an?\s+)?{WORD}(?:\s+{WORD})?)\s+(?:made|formed"
    rf"|created|produced|built|measured|calculated|determined|pronounced){TAIL}"
)
_EXPLAIN_ZH = Lazy(alt(V.EXPLAIN_ZH))
_HOW_ZH = Lazy(r"是(?:怎么|如何|怎样)[\u4e00-\u9fff]{1,4}的")  # 飞机是怎么飞起来的


_EXPLAIN_SHAPES = table(
    ("explain describe summarize summarise", _EXPLAIN_EN),
    ("tell teach", _TELL_ABOUT),
    ("how", _HOW_WORKS),
    ("how", _HOW_MADE),
)


def explain(text: str) -> bool:
    if any(w in text for w in _OVERVIEW_WORDS) and skips(_OVERVIEW, text):
        return True
    if any(skips(p, text) for p in shapes(text, _EXPLAIN_SHAPES)):
        return True
    if opener(text) in ("tell", "explain", *ANY_OPENER):
        term = _TELL_WHAT.search(text)
        if term and not any(w in V.NOT_TERM_WORDS for w in term.group("obj").split()[-2:]):
            return True
    # 你能解释一下…: the object follows the request
    if text.isascii():
        return False
    return skips_zh(_EXPLAIN_ZH, text, before=False) or skips_zh(_HOW_ZH, text, after=False)


# --- list and name requests --------------------------------------------------------------
_LIST_EN = AnyOf(
    # "list of stuff to bring?" and "name tag" are nouns; "name" asks only with a quantity
    rf"{LEAD}{ASK}(?:list|enumerate)(?:\s*一下\s*|\s+)(?:me\s+)?(?P<obj>(?!of\s)\S.*)$",
    rf"{LEAD}{ASK}name\s+(?P<obj>(?:{alt(V.LIST_QUANTITIES_EN)}|the|an?|\d+)\s+\S.*)$",
    rf"{LEAD}{ASK}(?:give|tell|show)\s+me\s+(?:a\s+list\s+of|(?:some|a\s+few|\d+|two|three|four|"
    r"five|ten)\s+(?:examples|kinds|types)\s+of)\s+(?P<obj>\S.*)$",
    rf"{LEAD}(?:what|which)\s+are\s+(?:some|the)\s+(?:examples|kinds|types)\s+of\s+(?P<obj>\S.*)$",
)
_NUM_ZH = r"(?:[一二两三四五六七八九十几]+|\d+|一些)"
_LIST_ZH = AnyOf(
    r"(?:列出(?!来)|列举|罗列|列一下|列个)",  # 列出来给我看看: show it to me
    rf"(?:说出|写出|举出)\s*{_NUM_ZH}\s*(?:个|种|位|样|项|部|本|座|只|类|款|名)",
    r"举(?:几|[一二两三四五])个[^。？！?!]{1,12}?例子",
)


_LIST_SHAPES = table(
    *zip(("list enumerate", "name", "give tell show", "what which"), _LIST_EN.patterns, strict=True)
)


def listing(text: str) -> bool:
    if any(skips(p, text) for p in shapes(text, _LIST_SHAPES)):
        return True
    if text.isascii():
        return False
    # 列出…: the object follows; 说出三种水果, 举几个…例子: it is inside the match
    head, *counted = _LIST_ZH.patterns
    return skips_zh(head, text, before=False) or any(skips_zh(p, text) for p in counted)


# --- classification yes/no questions -----------------------------------------------------
_KIND = rf"(?:an?\s+)?(?:{WORD}\s+)?{alt(V.KINDS_EN)}"
_CLASSIFY_EN = AnyOf(
    rf"{LEAD}(?:is|are|isnt|arent)\s+(?P<obj>(?:an?\s+|the\s+)?{WORD}(?:\s+{WORD}){{0,2}}?)\s+"
    rf"(?:considered\s+|classified\s+as\s+|technically\s+|actually\s+|really\s+|still\s+|also\s+)?"
    rf"{_KIND}(?:\s+or\s+{_KIND})?{TAIL}",
    # "what kind of dog is Max" asks about a pet: the world form names a kind ("a platypus")
    rf"{LEAD}(?:what|which)\s+(?:kind|type|sort|class|family)\s+of\s+{alt(V.KINDS_EN)}\s+(?:is|are)"
    rf"\s+(?P<obj>an?\s+\S.*)$",
    rf"{LEAD}(?:does|do)\s+(?P<obj>(?:an?\s+|the\s+)?{WORD}(?:\s+{WORD})?)\s+count\s+as\s+{_KIND}",
)
_KIND_ZH = alt(V.KINDS_ZH)
_CLASSIFY_ZH = AnyOf(
    rf"(?:是|属于|算|算是)(?:不是)?(?:一种|一类)?{_KIND_ZH}类?(?:吗|么|嘛|吧|呢|[?!。\s]|还是|$)",
    rf"(?:是|属于)(?:什么|哪一?种|哪一?类){_KIND_ZH}",
)


_CLASSIFY_SHAPES = table(
    *zip(("is are isnt arent", "what which", "does do"), _CLASSIFY_EN.patterns, strict=True)
)


def classification(text: str) -> bool:
    if any(skips(p, text) for p in shapes(text, _CLASSIFY_SHAPES)):
        return True
    # 这是什么鱼: what is in the photo just shared, not a question about kinds
    return not text.isascii() and any(skips_zh(p, text, after=False) for p in _CLASSIFY_ZH.patterns)


# --- random picks and small generators ---------------------------------------------------
_RANDOM_ZH = Lazy(alt(V.RANDOM_ZH))
_RANDOM = AnyOf(
    alt(V.RANDOM_EN),
    r"(?:give|tell|show|pick|choose|generate|make|say)\s+(?:me\s+|us\s+)?(?:an?\s+|one\s+|some\s+|"
    r"\d+\s+|three\s+|five\s+|ten\s+)?random(?![a-z])",
)


def random_pick(text: str) -> bool:
    if _RANDOM.patterns[0].search(text) or "random" in text and _RANDOM.patterns[1].search(text):
        return True
    return not text.isascii() and bool(_RANDOM_ZH.search(text))


# --- definitions of terms with no article ("what is machine learning?") ------------------
_WHAT_ZH = AnyOf(r"(?:是什么|是啥)(?:东西|玩意儿?)?[?!。\s]*$", r"^(?:啥是|啥叫|什么叫做)")


def term_without_article(words: str) -> bool:
    """Whether "what is/are `words`" asks for a term: "machine learning", "black holes", not
    "he doing", "going on", "the plan" (V.NOT_TERM_WORDS)."""
    parts = words.split()
    return 1 < len(parts) <= 3 and not any(w in V.NOT_TERM_WORDS for w in parts)


def cjk_term(term: str) -> bool:
    """Whether a Chinese term in "what is 区块链?" is a term, not the chat's own (这个, 会议)."""
    return not CHAT_ZH.search(term)


def cjk_what_is(text: str) -> bool:
    """ "区块链是什么" asks for a term; "明天的安排是什么", "这是啥" ask about the chat."""
    return not text.isascii() and any(skips_zh(p, text, after=False) for p in _WHAT_ZH.patterns)
