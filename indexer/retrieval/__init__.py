"""Search and ranking: hybrid search in one scope, fusion, weights, absolute relevance,
verdicts, filters, the isolation probe and `memvault eval retrieval`.

`__all__` lists the modules other packages may import; the rest are private to this one
(tests/test_layers.py checks it).
"""

__all__ = [
    "evaluate",
    "filters",
    "fusion",
    "probe",
    "ranking",
    "relevance",
    "relevance_judge",
    "search",
    "search_fusion",
    "search_query",
    "verdict",
]
