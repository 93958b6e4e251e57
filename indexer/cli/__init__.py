"""The indexer layer's `memvault` commands (search, remember, watch, candidates,
consolidate, demo, ...) and what they print (indexer.cli.show).

`__all__` lists the modules other packages may import; the rest are private to this one
(tests/test_layers.py checks it).
"""

__all__ = [
    "commands",
    "common",
]
