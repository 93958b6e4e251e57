"""Text analysis shared by indexing and querying, so both sides always produce the same terms.

Two tantivy fields carry the text:

- `text` (analyzer `memvault_text`): one token per Han/Kana/Hangul character, whole words
  otherwise; lowercased, English stop words dropped, English Snowball stemming. Unigrams
  let a person type any part of a CJK word and still match.
- `text_cjk2` (analyzer `memvault_cjk2`): CJK character bigrams ("北京" in 去北京开会), which
  rank a document holding the typed word above one holding its characters scattered.
  A tantivy analyzer cannot emit overlapping bigrams for CJK runs while keeping English
  words whole, so the bigrams are built here and indexed as a space-separated string.

Queries never go through `parse_query` (it turns a CJK run into a phrase query, so a whole
Chinese question matches nothing); callers build a boolean OR of `analyze_query(text)` terms.
A character of a longer CJK run in the query (读书会几点) only breaks ties (`Analysis.tiebreak`):
one shared character such as 点 is not evidence that a memory is about the question, so a
memory must share a bigram or a word to match. A character typed alone (猫) still matches.

Python-side tokens come from the same tantivy analyzer objects that `register()` installs
on the index, so index and query terms cannot drift (and no Python stemmer is needed).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import lru_cache

import tantivy

from indexer.backends.question_words import strip_question_words

log = logging.getLogger(__name__)

TEXT_ANALYZER = "memvault_text"
BIGRAM_ANALYZER = "memvault_cjk2"

# Scripts written without spaces between words (plus Hangul, whose syllables we treat alike
# so Korean particles glued to nouns do not hide the noun).
_CJK = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}"
# The `--` class difference keeps CJK characters out of "words"; \p{M} keeps combining marks
# (Devanagari vowel signs, decomposed accents) inside the word they belong to.
_TEXT_PATTERN = rf"[{_CJK}]|[[\p{{L}}\p{{M}}\p{{N}}_]--[{_CJK}]]+"
_RUN_PATTERN = rf"[{_CJK}]+"
# NLTK's classic 127-word English list: on LoCoMo it lifted BM25 hit@5 from 54.6
# (tantivy's 33-word Lucene list) to 59.2 and MADial en recall@5 from 49.2 to 53.0; CJK is
# unaffected. Lowercase forms; applied before stemming.
_STOP_TEXT = """i me my myself we our ours ourselves you your yours yourself yourselves he him his
    himself she her hers herself it its itself they them their theirs themselves what which
    who whom this that these those am is are was were be been being have has had having do
    does did doing a an the and but if or because as until while of at by for with about
    against between into through during before after above below to from up down in out on
    off over under again further then once here there when where why how all any both each
    few more most other some such no nor not only own same so than too very s t can will
    just don should now"""
ENGLISH_STOP_WORDS: tuple[str, ...] = tuple(_STOP_TEXT.split())
# Longer "words" are base64, URLs glued together, or hostile input; they only bloat the index.
MAX_TOKEN_CHARS = 64
# A pasted essay as a query: cap the boolean query so one search stays in milliseconds.
# 256 already cost MADial zh (whole dialogues as queries) a point of recall@5; 512 did not.
MAX_QUERY_TERMS = 512


@dataclass(frozen=True)
class Analysis:
    """Terms of one text, per field: `words` for `text`, `bigrams` for `text_cjk2`.

    `tiebreak` holds the words that are CJK characters of a query run of two or more
    characters: they add score to a memory that matches another term, never match alone.
    """

    words: list[str]
    bigrams: list[str]
    tiebreak: tuple[str, ...] = ()

    @property
    def matching(self) -> list[str]:
        """The `words` that make a match on their own (all but the tie-breakers)."""
        return [w for w in self.words if w not in self.tiebreak]


def _build_text_analyzer() -> tantivy.TextAnalyzer:
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.regex(_TEXT_PATTERN))
        .filter(tantivy.Filter.remove_long(MAX_TOKEN_CHARS))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.custom_stopword(list(ENGLISH_STOP_WORDS)))
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


def _build_bigram_analyzer() -> tantivy.TextAnalyzer:
    # Input is already a space-separated bigram list (see bigram_text); nothing to normalise.
    return tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).build()


def _build_run_analyzer() -> tantivy.TextAnalyzer:
    return tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.regex(_RUN_PATTERN)).build()


@lru_cache(maxsize=1)
def _analyzers() -> tuple[tantivy.TextAnalyzer, tantivy.TextAnalyzer]:
    return _build_text_analyzer(), _build_run_analyzer()


def word_tokens(text: str) -> list[str]:
    """What the `memvault_text` analyzer produces for `text`, in order, duplicates kept."""
    return _analyzers()[0].analyze(text)


def cjk_bigrams(text: str) -> list[str]:
    """Overlapping character bigrams inside each CJK run; a lone CJK character gives none."""
    out: list[str] = []
    for run in _analyzers()[1].analyze(text):
        out.extend(run[i : i + 2] for i in range(len(run) - 1))
    return out


def bigram_text(text: str) -> str:
    """The value to index in the bigram field for `text`."""
    return " ".join(cjk_bigrams(text))


def tokens(text: str) -> list[str]:
    """Every index term `text` yields: word/character tokens, then CJK bigrams."""
    return word_tokens(text) + cjk_bigrams(text)


def _dedupe(terms: list[str]) -> list[str]:
    return list(dict.fromkeys(terms))


def _run_characters(text: str) -> frozenset[str]:
    """CJK characters that occur in `text` only inside runs of two or more characters.

    One typed alone (猫, or 猫 next to English words) is the whole CJK part of what the person
    asked for, so it must keep matching on its own.
    """
    runs = _analyzers()[1].analyze(text)
    alone = {r for r in runs if len(r) == 1}
    return frozenset(c for r in runs if len(r) > 1 for c in r) - alone


def analyze_query(text: str) -> Analysis:
    """Distinct query terms per field, capped at MAX_QUERY_TERMS in total (first ones kept).
    Chinese question words are taken out first (indexer.backends.question_words), as English stop
    words are."""
    asked, text = text, strip_question_words(text)
    words = _dedupe(word_tokens(text))
    bigrams = _dedupe(cjk_bigrams(text))
    if len(words) + len(bigrams) > MAX_QUERY_TERMS:
        log.info(
            "event=query_terms_capped words=%d bigrams=%d cap=%d",
            len(words),
            len(bigrams),
            MAX_QUERY_TERMS,
        )
        # Bigrams carry most of the precision for CJK text, so split the budget evenly.
        half = MAX_QUERY_TERMS // 2
        keep_b = min(len(bigrams), max(half, MAX_QUERY_TERMS - len(words)))
        keep_w = MAX_QUERY_TERMS - keep_b
        words, bigrams = words[:keep_w], bigrams[:keep_b]
    # Of the run as typed: 了 left alone by 现在几点了 -> "现在 了" was no word of its own.
    in_runs = _run_characters(asked)
    tiebreak = tuple(w for w in words if w in in_runs)  # query order: deterministic scores
    if bigrams or len(tiebreak) < len(words):
        return Analysis(words=words, bigrams=bigrams, tiebreak=tiebreak)
    # The cap dropped every bigram and word that could match: let the characters match.
    return Analysis(words=words, bigrams=bigrams)


def register(index: tantivy.Index) -> None:
    """Install MemVault's analyzers on `index`.

    tantivy does not persist custom analyzers: call this after every `Index(...)` or
    `Index.open(...)`, before the first writer, searcher or query, or indexing fails.
    """
    index.register_tokenizer(TEXT_ANALYZER, _build_text_analyzer())
    index.register_tokenizer(BIGRAM_ANALYZER, _build_bigram_analyzer())
