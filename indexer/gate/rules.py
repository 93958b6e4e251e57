"""The message gate: does this message need episode recall at all? Pure, model-free, versioned.

`decide(message, names, known_terms)` applies these rules in order; the first that decides
wins (`GateDecision.rule` says which):

1. `empty`: nothing but whitespace, punctuation or emoji: nothing to look up.
2. `social.*`: only social material (greetings, thanks, farewells, acknowledgements,
   laughter, filler, the bot or a person of the chat addressed): skip. It comes first because
   "thanks again!" holds a recall cue and "hi Alice" a name, yet neither asks for memory;
   "hi, what did Alice say?" has content left over, so it is not social-only.
3. `recall_cue`: asks to recall ("remember", "last time", 记得, 上次): pass. Before the
   impersonal rules, so "my code crashes again, like last time" is not a code question.
4. `personal`: about the speaker or the people here (my, I, we, 我, 我们, your mom, 老婆,
   did you ...): pass. A first person that only frames a request ("help me", "tell me",
   "can I", 帮我, 给我, 我想知道) is taken out first, so "help me calculate 17*23" and
   "帮我翻译一下这句话" fall through to rule 6, while "my"/我的/我们 + a noun stays personal.
   Quoted text and what follows a colon after translate/rewrite is the object of the
   request, not the speaker's words ("翻译：我今天很累"), and is taken out too.
5. `known_name`: names a person of the chat (`names`): pass. Before rule 6, so "translate
   what Alice said" still reaches retrieval.
6. `impersonal.*`: translation, rewrite or summary, word or language task (spelling,
   synonyms, 造句), arithmetic, units and quantities ("how many minutes in a week", 一公里等于
   多少米), time or date, weather, code, definition (also "what is machine learning?", 量子
   纠缠是什么), explanation of a topic (explain/describe X, 解释一下), joke/story/poem, about
   the bot, random pick (flip a coin, 抛个硬币), list of things (list the planets, 说出三种水果),
   classification (is a whale a fish?, 鲸鱼是鱼吗), advice or how-to, general knowledge (who
   wrote / when was X built / where is X located / time zones / the biggest X): skip.
   Each class is request verbs x impersonal objects (recall_gate_topics, _world, _facts),
   tested in that order (a translation's object must not read as a weather question). A shape
   whose object is the chat's own (a definite article or pointer before an event, plan or
   shared thing: "where's the party?", "who wrote the report?": recall_gate_chat) or a bare
   name ("tell me about Sarah") does not skip. In a long message (more than LONG_CHARS or
   LONG_SENTENCES) only the first sentence is tested: a request must open the message to
   cover it, or the message passes.
7. `known_term`: a token the chat's memories know (`known_terms`): pass. After rule 6 as
   specified: "what is tiramisu?" is a definition even when a memory mentions tiramisu.
8. `smalltalk`: a short remark (at most SMALL_TALK_MAX_WORDS words / SMALL_TALK_MAX_CJK Han
   characters, no question, no number) that nothing above claimed: skip ("好累啊", "so tired").
9. `default`: no rule applies: pass (a missed recall costs more than one injected memory).

A dialogue context (two or more "Name: text" / `<Name>: "text"` lines) is judged line by line:
it passes if any line passes by a cue (rules 3-5, 7); otherwise its last line (the message
being answered) decides. The bot's own lines are left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from indexer.backends.tokenize import cjk_bigrams, word_tokens
from indexer.gate import words as W
from indexer.gate.patterns import (
    APPLAUSE,
    CATEGORY_PATTERNS,
    FIRST_SENTENCE,
    FRAMES,
    LAUGH_SHAPE,
    OBJECT_VERBS,
    PERSONAL,
    PLACEHOLDER,
    QUESTION,
    QUOTED,
    RECALL,
    REMARK,
    SENTENCE_END,
    SOCIAL,
    SOCIAL_CLASS,
    SOCIAL_WORDS,
)
from indexer.gate.regex import Lazy
from indexer.gate.text import MAX_CHARS, Names, names_of, normalise, shown, squeeze

GATE_VERSION = "gate-2"  # gate-2: the world classes of recall_gate_world
LONG_CHARS = 200
LONG_SENTENCES = 3
# Rule 8 (small talk): a remark this short that no rule above claimed ("好累啊", "so tired",
# "have fun!") is a status or a reaction. A question is never small talk, and a short
# content word the chat's memories hold passed at rule 7 already. 0 turns the rule off.
SMALL_TALK_MAX_WORDS = 4
SMALL_TALK_MAX_CJK = 8

SOCIAL_REASONS = (
    "thanks",
    "farewell",
    "greeting",
    "laughter",
    "acknowledgement",
    "follow-up",
    "filler",
)
IMPERSONAL_REASONS = tuple(reason for reason, _, _ in CATEGORY_PATTERNS)
NAMED = "names {}"  # the pass reason of rules 5 and 7, with the name or term shown
REASONS: tuple[str, ...] = (
    "nothing to look up",
    *SOCIAL_REASONS,
    *IMPERSONAL_REASONS,
    "asks to recall",
    "small talk",
    "about the speaker or the people here",
    NAMED,
    "no rule applies",
)
# Which rule to report when several lines of a dialogue pass.
_PASS_PRIORITY = ("recall_cue", "personal", "known_name", "known_term")
_SPACES = Lazy(r"[ \t\r\f\v]+")
_CONTENT = Lazy(r"[^\W_]")
_MENTION = Lazy(r"@[a-z0-9_.\-]+|@\S+(?=\s|$)")
_DIALOGUE_LINE = Lazy(r'^\s*(?:<[^<>\n]{1,40}>|[^\s:<>"]{1,30}(?: [^\s:<>"]{1,30})?)\s*:\s*')
_QUOTES = Lazy(r'^"(.*)"$')
_WORD = Lazy(r"[^\W_]+")
_LATIN_WORD = Lazy(r"[a-z0-9]+")
_DIGIT = Lazy(r"\d")
_CJK_CHAR = Lazy(r"[\u3400-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]")
_CONTRACTIONS = {"i'll": "i will", "i'd": "i would", "we're": "we are", "we'd": "we would"}
_CONTRACTION = Lazy(r"(?<![a-z])(?:i'll|i'd|we're|we'd)(?![a-z])")
_EMOJI_REASONS = (("laughter", "😂🤣😆😹😄😁😅"), ("thanks", "🙏"), ("acknowledgement", "👍👌✅🆗"))


@dataclass(frozen=True)
class GateDecision:
    """What the gate decided for one message, why, and by which rule."""

    recall: bool
    reason: str
    rule: str
    version: str = GATE_VERSION

    def words(self) -> str:
        """The one wording every surface shows: "gate: skipped: greeting"."""
        return f"gate: {'passed' if self.recall else 'skipped'}: {self.reason}"

    def explain(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "recall": self.recall,
            "reason": self.reason,
            "rule": self.rule,
        }


def _skip(reason: str, rule: str) -> GateDecision:
    return GateDecision(recall=False, reason=reason, rule=rule)


def _pass(reason: str, rule: str) -> GateDecision:
    return GateDecision(recall=True, reason=reason, rule=rule)


def _social_only(text: str, names: Names) -> str | None:
    """The social reason if `text` is made only of social material, else None."""
    text = (_MENTION.sub(" ", text) if "@" in text else text).replace("'", "")
    text = PLACEHOLDER.sub(" ", text) if "[" in text else text
    for word in _LATIN_WORD.findall(text):
        if word in SOCIAL_WORDS or word.isdigit():
            continue
        word = squeeze(word)  # only on a miss: "thaaanks"
        if word not in SOCIAL_WORDS and word not in names.words and not LAUGH_SHAPE.fullmatch(word):
            return None  # "the movie was great": "movie" is in no social phrase
    squeezed = squeeze(text)
    found: set[str] = set()

    def note(match: re.Match[str]) -> str:
        found.add(SOCIAL_CLASS.get(match.group(0), "filler"))
        return " "

    rest = SOCIAL.sub(note, _SPACES.sub(" ", squeezed))
    if _CONTENT.search(rest):
        rest, laughs = LAUGH_SHAPE.subn(" ", rest)
        rest, cheers = APPLAUSE.subn(" ", rest)
        found |= {"laughter"} if laughs else set()
        found |= {"acknowledgement"} if cheers else set()
    if _CONTENT.search(rest) and found - {"filler"}:
        rest = names.remove(rest)  # "thanks Alice!", "hi 小明": the person is only addressed
    if _CONTENT.search(rest):
        return None
    return next((r for r in SOCIAL_REASONS if r in found), "filler")


def _impersonal(text: str) -> tuple[str, str] | None:
    for reason, rule, applies in CATEGORY_PATTERNS:
        if applies(text):
            return reason, rule
    return None


def _without_objects(text: str) -> str:
    """`text` without what a translate/rewrite request works on (quotes, text after a colon)."""
    verb = OBJECT_VERBS.search(text)
    if not verb:
        return text
    text = QUOTED.sub(" ", text)
    colon = text.find(":", verb.start())
    return text[:colon] if colon >= 0 else text


def _is_long(text: str) -> bool:
    sentences = sum(1 for part in SENTENCE_END.split(text) if _CONTENT.search(part))
    return len(text) > LONG_CHARS or sentences >= LONG_SENTENCES


def _decide_line(line: str, names: Names, terms: frozenset[str], truncated: bool) -> GateDecision:
    cased = _SPACES.sub(" ", line.replace("\n", " ")).strip()
    text = cased.casefold()
    if not truncated:
        if not _CONTENT.search(text):
            reason = next((r for r, marks in _EMOJI_REASONS if any(m in text for m in marks)), None)
            if reason:
                return _skip(reason, f"social.{reason}")
            return _skip("nothing to look up", "empty")
        social = _social_only(text, names)
        if social:
            return _skip(social, f"social.{social.replace('-', '_')}")
    own = _without_objects(text)
    # what's -> whats (the word lists hold both forms); a first person whose contraction
    # would read as another word without its apostrophe (i'll -> ill) is spelt out first.
    bare = _CONTRACTION.sub(lambda m: _CONTRACTIONS[m.group(0)], own).replace("'", "")
    if RECALL.search(bare):
        return _pass("asks to recall", "recall_cue")
    if PERSONAL.search(FRAMES.sub(" ", bare)):
        return _pass("about the speaker or the people here", "personal")
    person = names.find(own, cased)  # with the apostrophe: "alice's" names Alice
    if person:
        return _pass(NAMED.format(person), "known_name")
    long = truncated or _is_long(text)
    head = FIRST_SENTENCE.match(text)
    impersonal = _impersonal((head.group(0) if long and head else text).replace("'", ""))
    if impersonal:
        return _skip(*impersonal)
    term = _known_term(text, terms) if terms else None
    if term:
        return _pass(NAMED.format(term), "known_term")
    if not long and _small_talk(text):
        return _skip("small talk", "smalltalk")
    return _pass("no rule applies", "default")


def _small_talk(text: str) -> bool:
    """A short remark: no question, no number, few words (see SMALL_TALK_MAX_WORDS), and a
    word that makes it a remark rather than the name of a thing (REMARK_EN / REMARK_ZH)."""
    if QUESTION.search(text) or _DIGIT.search(text) or not REMARK.search(text.replace("'", "")):
        return False
    cjk = len(_CJK_CHAR.findall(text))
    words = len(_LATIN_WORD.findall(text))
    return cjk + words > 0 and cjk <= SMALL_TALK_MAX_CJK and words <= SMALL_TALK_MAX_WORDS


def _known_term(text: str, terms: frozenset[str]) -> str | None:
    """The first word of `text` whose index term the chat knows, as typed ("restaurants",
    not the stem "restaur"); the tokenizer runs once, and per word only on a hit."""
    tokens = word_tokens(text)
    hit = next((t for t in (*tokens, *cjk_bigrams(text)) if t in terms), None)
    if hit is None:
        return None
    typed = next((w for w in _WORD.findall(text) if hit in word_tokens(w)), hit)
    return shown(typed)


def _lines(text: str) -> list[str]:
    """The lines of a dialogue context without their speaker labels, or [text].

    The bot's own lines ("assistant: Sure, I can help") are left out while a person's line
    remains: the bot's "I" is not the speaker, and its words are not what was asked."""
    lines = [line for line in text.split("\n") if _CONTENT.search(line)]
    labelled = [_DIALOGUE_LINE.match(line) for line in lines]
    if len(lines) < 2 or sum(1 for m in labelled if m) < 2:
        return [text]
    people: list[str] = []
    bot: list[str] = []
    for line, m in zip(lines, labelled, strict=True):
        content = line[m.end() :].strip() if m else line.strip()
        quoted = _QUOTES.match(content)
        label = m.group(0).strip(" \t<>:").casefold() if m else ""
        (bot if label in W.BOT_LABELS else people).append(quoted.group(1) if quoted else content)
    return people or bot


def decide(
    message: str, names: Iterable[str] = (), known_terms: Iterable[str] = ()
) -> GateDecision:
    """Whether `message` goes on to episode recall, with the reason every surface shows.

    `names`: the people of the chat (any case); `known_terms`: specific tokens the chat's
    memories hold, as indexer.backends.tokenize.word_tokens / cjk_bigrams produce them.
    """
    raw = message if isinstance(message, str) else str(message)
    truncated = len(raw) > MAX_CHARS
    text = normalise(raw[: MAX_CHARS * 2], fold=False)  # NFKC may grow or shrink it: capped again
    truncated = truncated or len(text) >= MAX_CHARS
    chat = names_of(tuple(n for n in names if isinstance(n, str)))
    terms = (
        known_terms
        if isinstance(known_terms, frozenset)  # the lead may keep one per scope
        else frozenset(t for t in known_terms if isinstance(t, str) and t)
    )
    decisions = [_decide_line(line, chat, terms, truncated) for line in _lines(text)]
    # A cue on any line of a dialogue passes it; otherwise its last line (the message being
    # answered) decides: an earlier "the movie was great" does not make "haha yeah" need memory.
    cued = [d for d in decisions if d.recall and d.rule != "default"]
    if not cued:
        return decisions[-1]
    return min(reversed(cued), key=lambda d: _PASS_PRIORITY.index(d.rule))
