"""What automatic injection puts into a prompt, built once for every caller: the LangBot
plugin's injector (a real turn) and the Memory Console's recall test run the same
`turn.build`, so what the console shows is what a turn places.

- turn: one turn's reads (profiles, one recall, critical memories, key events) and blocks;
- prompting / events_block: the texts of the blocks (pure), prompt_values their escaping;
- route: which block goes where in LangBot's prompt (pure; the plugin appends them);
- settings: what a turn reads of the plugin's settings (TurnSettings);
- libraries: the reference-memory scopes of the knowledge bases a chat's pipeline attaches.

`__all__` lists the modules other packages may import (tests/test_layers.py checks it).
"""

__all__ = [
    "events_block",
    "libraries",
    "prompt_values",
    "prompting",
    "route",
    "settings",
    "turn",
]
