"""Search and ranking: the request value (SearchQuery), hybrid search in one scope, fusion,
weights, absolute relevance, verdicts, filters. The isolation probe and `memvault eval
retrieval` use the engine and sit beside it (indexer.probe, indexer.evaluate).

`__all__` lists the modules other packages may import; the rest are private to this one
(tests/test_layers.py checks it).
"""

__all__ = [
    "filters",
    "fusion",
    "outcome",
    "ranking",
    "relevance",
    "relevance_judge",
    "search",
    "search_fusion",
    "search_query",
    "verdict",
]
