"""The JSON type each imported field must have, checked before its value is used.

An import never turns a value of the wrong type into text by `str()`: `{"content": 5}`
would become the memory "5", `"traits": "calm"` the traits c, a, l, m, `"name": ["Ann"]`
the name "['Ann']". Each check raises BadRequestError through the caller's `fail`, which
names the item (`episode 3: ...`, `profile 2: ...`), the field and what to write instead.

The rule: a text field takes a JSON string; an id (`id`, `sender_id`, a speaker's `id`)
also a whole number, because chat platforms number their users and upstream exports keep
them as numbers; a list field takes a list of strings (`tags` also one comma-separated
string, as LongTermMemory writes them). `null` is always "not given".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

Fail = Callable[[str], NoReturn]


def kind(value: Any) -> str:
    """A JSON value's type in words, for "(got ...)"."""
    if isinstance(value, bool):
        return f"{str(value).lower()}, a true/false value"
    if isinstance(value, int | float):
        return f"the number {value!r}"[:60]
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, str):
        return "a text"
    return type(value).__name__


def text(value: Any, name: str, fail: Fail) -> str | None:
    """A JSON string (None for null); anything else is refused, never converted."""
    if value is None or isinstance(value, str):
        return value
    fail(f"{name} must be a text in quotes (got {kind(value)})")


def ident(value: Any, name: str, fail: Fail) -> str | None:
    """An id: a JSON string or a whole number (a platform's user number)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return text(value, name, fail)


def texts(value: Any, name: str, fail: Fail, *, comma_text: bool = False) -> list[str]:
    """A list of strings ([] for null); with `comma_text` also "a, b" (a comma-separated
    string). A list holding anything but strings is refused whole."""
    if value is None:
        return []
    if comma_text and isinstance(value, str):
        return [t.strip() for t in value.replace("，", ",").split(",") if t.strip()]
    example = f'"{name}": ["a", "b"]' + (' or "a, b"' if comma_text else "")
    if not isinstance(value, list):
        fail(f"{name} must be a list of texts, like {example} (got {kind(value)})")
    for number, item in enumerate(value, start=1):
        if not isinstance(item, str):
            fail(f"{name} item {number} must be a text in quotes (got {kind(item)})")
    return list(value)
