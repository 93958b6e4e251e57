"""The vault's git history: commit exactly the files MemVault wrote (never a person's work),
lock handling, no commit holding a secret (secret_guard.py), and the read-only history
views (dulwich).

`__all__` lists the modules other packages may import; the rest are private to this one
(tests/test_layers.py checks it).
"""

__all__ = [
    "githistory",
    "gitlock",
    "gitlog",
    "gitmerge",
    "gitplan",
    "gitremote",
    "gitstate",
    "gitsync",
    "handedits",
    "secret_guard",
    "syncloop",
    "syncstate",
]
