"""The vault layer's `memvault` commands, and the command framework every layer imports
(vault.cli.parser: CommandSpec, Layer, shared options; vault.cli.output: what commands print).

`__all__` lists the modules other packages may import; the rest are private to this one
(tests/test_layers.py checks it).
"""

__all__ = [
    "commands",
    "common",
    "output",
    "parser",
]
