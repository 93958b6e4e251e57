"""When two texts an embedding model finds close still state different facts.

A sentence model puts "Caroline went to the support group" and "Melanie went to the support
group" at a cosine of 0.8, "I have two cats" and "I have three cats" at 0.91, above many true
paraphrases (bench/dedupe.py measures it on ../shared/bench). What tells them apart is a
name, a number or a "not", so a near duplicate (indexer.dedupe) must also pass `differs`:

- numbers: both texts state the same numbers, as values: digits, English number words
  (three, third, twice) and Chinese numerals (三, 两, 十五; a lone 一 is left out, it is part
  of too many words: 一起, 一样), so "3 years", "three years" and "三年" agree (across the
  two languages 1 is left out on both sides: "first" is 第一 there);
- names: in two texts of Latin script, every capitalised word of one (a stop word aside)
  is a word of the other, in any case; across scripts, the Latin words inside the Chinese
  text (names are often kept in Latin there: "Bart在圣诞节晚会上跳舞") are words of the
  other text, and in two Chinese texts their Latin words are the same;
- negation: both say "not" (not, never, n't, 不, 没...) or neither does (非常 "very",
  特别 "especially" and their like are no negation);
- added or replaced words: within one language, a new text that is the memory with words
  added ("Alice likes green tea" after "Alice likes tea": a detail the memory lacks) or
  with one or two of its words replaced by others ("Nate enjoys action movies" / "Nate
  hates action movies", dogs / cats) states more or another fact, however close the model
  finds it. Words left out (the memory says more already) and rewordings of many words are
  left to the model. This rule alone is one-sided: `differs(new, old)`.

Every rule errs on the side of "different": a repeat stored is cheaper than a fact refused.
"""

from __future__ import annotations

import re
import unicodedata

from indexer.backends.tokenize import ENGLISH_STOP_WORDS, word_tokens

_DIGITS = re.compile(r"\d+")
_LATIN_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
# At most this many words (Chinese: characters) on each side replaced make "the same
# sentence with a word replaced".
REPLACED_WORDS, REPLACED_CHARACTERS = 2, 3
_CJK_NUMERALS = re.compile(r"[〇零一二两三四五六七八九十百千万亿]+")
_EN_UNITS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_EN_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_EN_ORDINALS = [
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
]
NUMBER_WORDS: dict[str, int] = {
    **{w: n for n, w in enumerate(_EN_UNITS)},
    **{w: 20 + 10 * n for n, w in enumerate(_EN_TENS)},
    **{w: n + 1 for n, w in enumerate(_EN_ORDINALS)},
    **{"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9},
    **{"once": 1, "twice": 2, "thrice": 3, "dozen": 12},
}
_NUMBER_STEMS = frozenset(t for w in NUMBER_WORDS for t in word_tokens(w))
_ZH_DIGITS = {
    c: n
    for n, chars in enumerate(["〇零", "一", "二两", "三", "四", "五", "六", "七", "八", "九"])
    for c in chars
}
_ZH_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10**4, "亿": 10**8}
_NEGATORS_EN = frozenset(
    ["not", "no", "never", "nothing", "nobody", "none", "neither", "nor", "cannot", "without"]
)
_NEGATORS_ZH = re.compile(r"不|没|沒|未|別|别|无|無|非")
# Words that hold a negator's character but negate nothing (非常 "very", 特别 "especially").
_ZH_NOT_NEGATIONS = re.compile(
    r"非常|无论|無論|不错|不錯|不过|不過|不仅|不僅|不断|不斷|不久|不少|不如|差不多|未来|未來|"
    r"别人|別人|别的|別的|特别|特別|分别|分別|区别|區別|告别|告別|级别|級別|类别|類別|性别|性別"
)
# Capitalised words that are no name: sentence starters and the pronoun I.
_NOT_NAMES = frozenset(ENGLISH_STOP_WORDS) | {"i", "im", "i'm", "ive", "i've", "id", "i'd"}


def _plain(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def is_chinese(text: str) -> bool:
    """Mostly CJK characters (against Latin letters)."""
    cjk = len(_CJK.findall(text))
    latin = sum(len(w) for w in _LATIN_WORD.findall(_CJK.sub(" ", text)))
    return cjk > 0 and cjk >= latin / 2


def _words(text: str) -> list[str]:
    return _LATIN_WORD.findall(_CJK.sub(" ", text))


def _lower_words(text: str) -> set[str]:
    return {w.casefold() for w in _words(text)}


def _names(text: str) -> set[str]:
    return {w.casefold() for w in _words(text) if w[0].isupper() and w.casefold() not in _NOT_NAMES}


def chinese_number(run: str) -> int:
    """三 -> 3, 十五 -> 15, 两百 -> 200, 二〇二三 -> 2023 (digits alone read as digits)."""
    if all(c in _ZH_DIGITS for c in run):
        return int("".join(str(_ZH_DIGITS[c]) for c in run))
    total = section = digit = 0
    for c in run:
        if c in _ZH_DIGITS:
            digit = _ZH_DIGITS[c]
        elif _ZH_UNITS[c] >= 10**4:
            total += (section + digit) * _ZH_UNITS[c]
            section = digit = 0
        else:
            section += (digit or 1) * _ZH_UNITS[c]
            digit = 0
    return total + section + digit


def _numbers(text: str, chinese: bool) -> set[int]:
    """Every number the text states, as a value: 3, three, third and 三 are all 3."""
    found = {int(d) for d in _DIGITS.findall(text)}
    if chinese:
        found |= {chinese_number(r) for r in _CJK_NUMERALS.findall(text) if r != "一"}
    else:
        found |= {NUMBER_WORDS[w] for w in _lower_words(text) if w in NUMBER_WORDS}
    return found


def _negated(text: str, chinese: bool) -> bool:
    if chinese and _NEGATORS_ZH.search(_ZH_NOT_NEGATIONS.sub("", text)):
        return True
    words = _lower_words(text)
    return bool(words & _NEGATORS_EN) or any(w.endswith(("n't", "n’t")) for w in words)


def _content(text: str) -> set[str]:
    """The words that carry the text's meaning, as the text index stems them (going and go
    are one word; stop words out; each Chinese character a word), numbers left out (the
    number rule compares those)."""
    return {t for t in word_tokens(text) if not t.isdigit() and t not in _NUMBER_STEMS}


def _changed_words(new: str, old: str, chinese: bool) -> str | None:
    """ "added words" when `new` is `old` with words added (a detail the memory lacks);
    "replaced words" when it is `old` with a word or two replaced by others ("enjoys" /
    "hates", dogs / cats): either way what differs is the fact. Words left out (the memory
    says more already) and a rewording of many words are no such change."""
    wn, wo = _content(new), _content(old)
    only_new, only_old = wn - wo, wo - wn
    if only_new and not only_old:
        return "added words"
    limit = REPLACED_CHARACTERS if chinese else REPLACED_WORDS
    if (
        0 < len(only_new) <= limit
        and 0 < len(only_old) <= limit
        and len(wn & wo) >= max(len(wn), len(wo)) / 2
    ):
        return "replaced words"
    return None


def differs(a: str, b: str) -> str | None:
    """Why `a`, a text about to be stored, does not repeat `b`, a memory (numbers, names,
    negation, added or replaced words), or None."""
    a, b = _plain(a), _plain(b)
    zh_a, zh_b = is_chinese(a), is_chinese(b)
    numbers_a, numbers_b = _numbers(a, zh_a), _numbers(b, zh_b)
    if zh_a != zh_b:  # a lone 一 is not read, so "one" / "first" cannot be matched to it
        numbers_a, numbers_b = numbers_a - {1}, numbers_b - {1}
    if numbers_a != numbers_b:
        return "numbers"
    if not zh_a and not zh_b:
        wa, wb = _lower_words(a), _lower_words(b)
        if not _names(a) <= wb or not _names(b) <= wa:
            return "names"
    elif zh_a and zh_b:
        if _lower_words(a) != _lower_words(b):
            return "names"
    else:
        zh, other = (a, b) if zh_a else (b, a)
        if not _lower_words(zh) <= _lower_words(other):
            return "names"
    if _negated(a, zh_a) != _negated(b, zh_b):
        return "negation"
    if zh_a == zh_b:
        return _changed_words(a, b, zh_a)
    return None
