"""Retrieval quality benchmark: `python -m bench.retrieval` (see __main__)."""
