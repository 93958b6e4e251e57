"""Reports on a vault without changing it: `memvault check` and counts (`memvault stats`).
One health line's record is vault.format.findings.

`__all__` lists the modules other packages may import; the rest are private to this one
(tests/test_layers.py checks it).
"""

__all__ = [
    "check",
    "stats",
]
