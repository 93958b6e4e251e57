"""The index backends (Tantivy full text, FAISS or Milvus vectors) behind one contract
(indexer.backends.backend), their one-writer lock and read-only opening, the embedding
providers, tokenisation and chunking.

`__all__` lists the modules other packages may import; the rest are private to this one
(tests/test_layers.py checks it).
"""

__all__ = [
    "backend",
    "calibration",
    "chunking",
    "embed_cache",
    "embed_openai",
    "embeddings",
    "heap",
    "locks",
    "milvus_connect",
    "milvus_index",
    "milvus_open",
    "providers",
    "readonly",
    "records",
    "text_index",
    "tokenize",
    "vector_index",
    "vector_open",
]
