"""Secrets out of memory text before it is written or sent, and the rule that no MemVault
commit holds one.

`__all__` lists the modules other packages may import; the rest are private to this one
(tests/test_layers.py checks it).
"""

__all__ = [
    "redact",
    "redact_forms",
    "redact_write",
    "secret_guard",
]
