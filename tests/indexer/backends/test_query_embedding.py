"""Queries are embedded without the document cache: searching must not grow it.

Real vault files, real tantivy + faiss, the real USE model.
"""

import sqlite3
from pathlib import Path

from indexer.engine import Engine
from indexer.retrieval.search_query import SearchQuery
from vault.layout.keys import ScopeId
from vault.layout.layout import STATE_DIR

SCOPE = ScopeId("bot-1", "group_123")
EPISODES = "bots/bot-1/sessions/group_123/episodes/2026/11"
FACTS = [
    "Alice prefers green tea and does not eat cilantro.",
    "Bob is learning Rust and practises every evening.",
    "小明下周要去北京开会。",
]
QUESTIONS = [f"what did person {i} say about project {i * 7}?" for i in range(25)]


def cache_rows(root: Path) -> int:
    db = sqlite3.connect(root / STATE_DIR / "cache" / "embeddings.sqlite")
    try:
        return db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
    finally:
        db.close()


def make_vault(root: Path) -> None:
    for i, body in enumerate(FACTS):
        path = root / EPISODES / f"e{i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\nspeaker: {{id: u1, name: Alice}}\n---\n{body}\n", encoding="utf-8")


def test_searches_leave_the_embedding_cache_alone(vault) -> None:
    make_vault(vault.root)
    with Engine.open(vault.root) as writer:
        writer.reconcile()
        # The model's calibration sentences (a fixed, bounded set) are embedded once per
        # process on the first search: counted before, so this holds whatever ran earlier.
        writer.calibrated()
        documents = cache_rows(vault.root)
        assert documents >= len(FACTS)  # documents are still cached
        for question in QUESTIONS:
            assert writer.search(SearchQuery(question, SCOPE, mode="vector"))  # the vector path ran
        assert cache_rows(vault.root) == documents
        with Engine.open(vault.root, writer=False) as reader:
            for question in QUESTIONS:
                reader.search(SearchQuery("and " + question, SCOPE))
        assert cache_rows(vault.root) == documents


def test_query_vectors_match_document_vectors(vault) -> None:
    # The uncached path must rank as before: the same text scores ~1 against itself.
    make_vault(vault.root)
    with Engine.open(vault.root) as engine:
        engine.reconcile()
        best = engine.vector.search(FACTS[1], SCOPE.index_key, 1)[0]
        text = engine.lookup([best.chunk_id])[best.chunk_id].text
        assert FACTS[1] in text
        again = engine.vector.search(text, SCOPE.index_key, 1)[0]
        assert again.chunk_id == best.chunk_id and again.score > 0.999
