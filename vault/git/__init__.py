"""The vault's git history: commit exactly the files MemVault wrote, lock handling, and the
read-only history views (dulwich).

`__all__` lists the modules other packages may import; the rest are private to this one
(tests/test_layers.py checks it).
"""

__all__ = [
    "githistory",
    "gitlock",
    "gitlog",
    "gitplan",
    "gitstate",
    "handedits",
]
