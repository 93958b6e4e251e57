"""Reports on a vault without changing it: `memvault check`, counts, health lines.

`__all__` lists the modules other packages may import; the rest are private to this one
(tests/test_layers.py checks it).
"""

__all__ = [
    "check",
    "findings",
    "stats",
]
