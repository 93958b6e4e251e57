"""Plain BM25 baselines (bm25s, PyPI) inside each query's scope, same data, same run.

Two tokenisations, both with CJK characters as unigrams + overlapping bigrams:
- `plain`: lowercased letter/digit words;
- `stem`: the same minus English stop words (NLTK's list, as indexer.backends.tokenize uses), then
  Snowball English stemming (PyStemmer).
"""

from __future__ import annotations

import re
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import bm25s
import Stemmer

from bench.retrieval.datasets import Dataset, queries, read_jsonl
from indexer.backends.tokenize import ENGLISH_STOP_WORDS

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+(?:_[^\W_{_CJK}]+)*|_")
_RUN = re.compile(rf"[{_CJK}]+")
_STOP = frozenset(ENGLISH_STOP_WORDS)
_STEMMER = Stemmer.Stemmer("english")


def _split(text: str) -> tuple[list[str], list[str]]:
    words, cjk = [], []
    for tok in _TOKEN.findall(text.lower()):
        if _RUN.fullmatch(tok):
            cjk.extend(tok)
            cjk.extend(tok[i : i + 2] for i in range(len(tok) - 1))
        elif tok != "_":
            words.append(tok)
    return words, cjk


def plain_tokens(text: str) -> list[str]:
    words, cjk = _split(text)
    return words + cjk


def stem_tokens(text: str) -> list[str]:
    words, cjk = _split(text)
    return _STEMMER.stemWords([w for w in words if w not in _STOP]) + cjk


TOKENIZERS: dict[str, Callable[[str], list[str]]] = {
    "bm25-plain": plain_tokens,
    "bm25-stem": stem_tokens,
}


def build_indexes(
    ds: Dataset, tokenizer: Callable[[str], list[str]]
) -> dict[str, tuple[bm25s.BM25, list[str]]]:
    """One BM25 index per scope (a query may only see its own scope), with its episode ids."""
    by_scope: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in read_jsonl(ds.episodes):
        by_scope[str(row["scope"])].append(row)
    indexes: dict[str, tuple[bm25s.BM25, list[str]]] = {}
    for scope, rows in by_scope.items():
        model = bm25s.BM25()
        model.index([tokenizer(str(r["text"])) or ["\x00"] for r in rows], show_progress=False)
        indexes[scope] = (model, [str(r["episode_id"]) for r in rows])
    return indexes


def run_bm25(
    ds: Dataset, tokenizer: Callable[[str], list[str]], top_k: int = 50
) -> tuple[dict[str, list[str]], dict[str, Any]]:
    """ranked ids per query, and timings; one BM25 index per scope."""
    started = time.perf_counter()
    indexes = build_indexes(ds, tokenizer)
    indexed = time.perf_counter()
    ranked: dict[str, list[str]] = {}
    for q in queries(ds):
        model, ids = indexes[str(q["scope"])]
        terms = [t for t in tokenizer(str(q["question"])) if t in model.vocab_dict]
        if not terms:
            ranked[q["query_id"]] = []
            continue
        scores = model.get_scores(terms)
        order = sorted(range(len(ids)), key=lambda i: -scores[i])[:top_k]
        ranked[q["query_id"]] = [ids[i] for i in order if scores[i] > 0]
    done = time.perf_counter()
    timing = {"index_s": indexed - started, "query_s": done - indexed, "queries": len(ranked)}
    return ranked, timing
