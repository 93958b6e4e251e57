"""The indexer layer's `memvault` commands (search, remember, watch, candidates,
consolidate, demo, ...), what they print (indexer.cli.show) and what a command does about
the files the index is behind on (indexer.cli.catch_up).

`__all__` lists the modules other packages may import; the rest are private to this one
(tests/test_layers.py checks it).
"""

__all__ = [
    "catch_up",
    "commands",
    "remember_cmd",
    "remember_dup",
    "search_cmd",
    "writer_link",
    "writer_server",
]
