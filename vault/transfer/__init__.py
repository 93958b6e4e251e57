"""Export a chat's L1 + L2 as JSON, and import ours or LongTermMemory's export shape.

`__all__` lists the modules other packages may import; the rest are private to this one
(tests/test_layers.py checks it).
"""

__all__ = [
    "exchange",
]
