"""Where things live in a vault and how they are opened: the folder layout, scope keys and
folder names from hostile ids, symbolic-link and regular-file rules, finding the vault, reading
its records (vault.layout.store), `memvault init`.

`__all__` lists the modules other packages may import; the rest are private to this one
(tests/test_layers.py checks it).
"""

__all__ = [
    "chats",
    "create",
    "discovery",
    "keys",
    "layout",
    "links",
    "names",
    "readonly",
    "regular",
    "store",
]
