"""Export a chat's L1 + L2 as JSON, import ours or LongTermMemory's, and migrate a whole
LongTermMemory installation (ltm_migrate; langbot_data reads LangBot's data folder).

`__all__` lists the modules other packages may import; the rest are private to this one
(tests/test_layers.py checks it).
"""

__all__ = [
    "exchange",
    "langbot_data",
    "ltm_migrate",
]
