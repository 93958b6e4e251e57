"""Secrets out of memory text: the pure text rules (passwords, API keys, card numbers,
resident ID numbers) that every write path, error message and LLM-bound text goes through.
What a write stores is vault.writes.redact_write; no commit holds a secret:
vault.git.secret_guard.

`__all__` lists the modules other packages may import; the rest are private to this one
(tests/test_layers.py checks it).
"""

__all__ = [
    "redact",
]
