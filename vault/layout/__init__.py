"""Where things live in a vault and how they are read: the folder layout, scope keys and
folder names from hostile ids, symbolic links, finding the vault, reading a scope's records
(vault.layout.store) and their JSON shapes (vault.layout.views), read-only vaults.

`__all__` lists the modules other packages may import; the rest are private to this one
(tests/test_layers.py checks it).
"""

__all__ = [
    "chats",
    "discovery",
    "index_setting",
    "keys",
    "layout",
    "links",
    "names",
    "readonly",
    "store",
    "views",
]
