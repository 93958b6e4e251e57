"""Chinese question words, taken out of a QUERY before its CJK bigrams are formed.

English questions lose "when", "what", "how" as stop words (indexer.backends.tokenize); a Chinese
question keeps 几点 / 什么时候 / 怎么 and, worse, the bigram that spans the word boundary
(读书会几点 -> 会几). Neither occurs in the memory that answers it, and a term absent from
the index weighs the most in indexer.retrieval.relevance, so "读书会几点" covered 3.3 of 8.9 query
weight of the profile "Book club 读书会" (relevance 0.32, below the floor) while "book club
meeting time" reached 0.63. A question word is replaced by a space, so it also splits the
run the way a stop word splits an English sentence.

Only queries: documents keep every bigram (no re-index; a memory ABOUT 几点 still matches a
query that names it another way, and the list never removes a topic word). Words that are
also parts of ordinary words are left out (了 in 了解, 吧 in 酒吧); the sentence-final
particles 吗 / 嗎 / 呢 are removed only at the end of a run.
"""

from __future__ import annotations

import re

# Longest first, so 什么时候 goes as one word before 什么 alone is tried; Simplified and
# Traditional forms.
QUESTION_WORDS: tuple[str, ...] = tuple(
    sorted(
        {
            "什么时候", "什麼時候", "为什么", "為什麼", "为啥", "為啥", "怎么样", "怎麼樣",
            "什么", "什麼", "怎么", "怎麼", "怎样", "怎樣", "哪里", "哪裡", "哪儿", "哪兒",
            "哪个", "哪個", "哪些", "几点", "幾點", "几时", "幾時", "多少", "多久",
            "是不是", "有没有", "有沒有", "能不能", "可不可以", "请问", "請問",
        },
        key=lambda w: (-len(w), w),
    )
)  # fmt: skip
FINAL_PARTICLES = "吗嗎呢"
_WORDS = re.compile("|".join(map(re.escape, QUESTION_WORDS)))
_FINAL = re.compile(rf"[{FINAL_PARTICLES}]+(?![\u3400-\u9fff\uf900-\ufaff])")  # not before Han


def strip_question_words(query: str) -> str:
    """`query` with each Chinese question word (and a run-final 吗/嗎/呢) replaced by a
    space; a query without them comes back unchanged."""
    return _FINAL.sub(" ", _WORDS.sub(" ", query))
