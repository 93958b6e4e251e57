"""The index backends (Tantivy full text, FAISS vectors) behind one contract
(indexer.backends.backend), the embedding providers, tokenisation and chunking.

`__all__` lists the modules other packages may import; the rest are private to this one
(tests/test_layers.py checks it).
"""

__all__ = [
    "backend",
    "calibration",
    "documents",
    "embed_cache",
    "embed_openai",
    "embeddings",
    "providers",
    "records",
    "text_index",
    "tokenize",
    "vector_index",
]
