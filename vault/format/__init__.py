"""The file formats: episodes (Markdown + YAML front matter), profiles (YAML), their fields,
YAML and JSON read within limits, and the frozen records (vault.format.model) they parse into.

`__all__` lists the modules other packages may import; the rest are private to this one
(tests/test_layers.py checks it).
"""

__all__ = [
    "durations",
    "episode_fields",
    "episode_filter",
    "episodes",
    "field_input",
    "findings",
    "ids",
    "input_limits",
    "jsonin",
    "model",
    "profile_edit",
    "profiles",
    "redact_forms",
    "tags",
    "yamledit",
    "yamlio",
]
