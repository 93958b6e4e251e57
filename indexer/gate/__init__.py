"""The message gate (indexer.gate.rules): does a message need episode recall at all?
Pure, model-free, versioned; the other modules are its word classes and patterns.

`__all__` lists the modules other packages may import; the rest are private to this one
(tests/test_layers.py checks it).
"""

__all__ = [
    "rules",
]
