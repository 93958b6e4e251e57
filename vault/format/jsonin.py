"""JSON from outside read once, at the edge, within vault.format.input_limits.

`load_json` is the one reader for JSON a person, a page, a chat message, an upload or a
model hands to MemVault; `check_data` applies the same limits to data a host parsed already
(LangBot's page SDK hands the console a parsed body). Either raises BadRequestError saying
what is wrong, where (line and column, or the path of the value) and what to do, so a
hostile value is a 400 / exit 2 at the door instead of a RecursionError, an OverflowError
or a UnicodeEncodeError deep inside an import. A text that is not JSON at all raises
json.JSONDecodeError untouched: each caller words that one in its own terms.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from vault.errors import BadRequestError
from vault.format.input_limits import MAX_JSON_DEPTH, MAX_NUMBER_DIGITS

# A JSON string token or a bracket: enough to find where the nesting gets too deep without
# recursing (strings first, so a bracket inside one is not counted).
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')
_SURROGATE = re.compile("[\ud800-\udfff]")
# The bits of the largest number of MAX_NUMBER_DIGITS digits (a parsed int is checked
# without printing it, which Python refuses past 4,300 digits).
_MAX_BITS = int(MAX_NUMBER_DIGITS * math.log2(10)) + 1
_DEPTH_HINT = f"at most {MAX_JSON_DEPTH} levels of [ ] and {{ }} inside each other"
_TOO_DEEP = f"nests deeper than {MAX_JSON_DEPTH} levels: write {_DEPTH_HINT}"


def load_json(text: str, what: str) -> Any:
    """The JSON value of `text`; `what` names it in messages (a file, "the request body")."""

    def number(raw: str) -> int:
        if len(raw.lstrip("-")) > MAX_NUMBER_DIGITS:
            raise BadRequestError(
                f"{what} holds a number of {len(raw.lstrip('-'))} digits ({raw[:12]}...): "
                f"no field takes more than {MAX_NUMBER_DIGITS}; write the value the field "
                "expects (importance 1 to 5, confidence 0 to 1)"
            )
        return int(raw)

    def decimal(raw: str) -> float:
        value = float(raw)
        if not math.isfinite(value):
            raise BadRequestError(
                f"{what} holds the number {raw[:24]}, too large to be a number: write the "
                "value the field expects (importance 1 to 5, confidence 0 to 1)"
            )
        return value

    def constant(raw: str) -> Any:
        raise BadRequestError(
            f"{what} holds {raw}, which is not a JSON number: write a number, or leave the "
            "field out"
        )

    try:
        value = json.loads(text, parse_int=number, parse_float=decimal, parse_constant=constant)
    except RecursionError:
        line, column = _too_deep_at(text)
        raise BadRequestError(
            f"{what} nests deeper than {MAX_JSON_DEPTH} levels (line {line}, column "
            f"{column}): write {_DEPTH_HINT}, as `memvault export` does"
        ) from None
    check_data(value, what)
    return value


def check_data(value: Any, what: str) -> None:
    """Refuse what no MemVault field can hold: nesting deeper than MAX_JSON_DEPTH, a key that
    is not text, a number out of range, a string with an unpaired surrogate (no UTF-8 file
    can store it). Iterative, so any depth is measured without running out of stack."""
    stack: list[tuple[Any, int, Any]] = [(value, 1, None)]
    while stack:
        node, depth, path = stack.pop()
        if isinstance(node, dict):
            if depth > MAX_JSON_DEPTH:
                _refuse(what, path, _TOO_DEEP)
            for key, item in node.items():
                if not isinstance(key, str):
                    _refuse(what, path, f"has the key {key!r}, which is not text: use a text key")
                stack.append((item, depth + 1, (path, key)))
        elif isinstance(node, list | tuple):
            if depth > MAX_JSON_DEPTH:
                _refuse(what, path, _TOO_DEEP)
            stack.extend((item, depth + 1, (path, n)) for n, item in enumerate(node))
        elif isinstance(node, str):
            if not node.isascii() and (bad := _SURROGATE.search(node)):
                _refuse(
                    what,
                    path,
                    f"holds \\u{ord(bad.group()):04x} at character {bad.start()}, half of a "
                    "surrogate pair (not a character): fix that \\u escape or remove it",
                )
        elif isinstance(node, bool) or node is None:
            continue
        elif isinstance(node, int):
            if node.bit_length() > _MAX_BITS:
                _refuse(what, path, f"is a number of more than {MAX_NUMBER_DIGITS} digits")
        elif isinstance(node, float):
            if not math.isfinite(node):
                _refuse(what, path, f"is {node}, not a number: write a finite number")
        else:
            _refuse(what, path, f"is a {type(node).__name__}, which JSON does not have")


def _refuse(what: str, path: Any, problem: str) -> None:
    raise BadRequestError(f"{what}: the value at {describe_path(path)} {problem}")


def describe_path(path: Any) -> str:
    """`$.episodes[3].extra.a`: where a value sits (its first and last levels if deep)."""
    parts: list[str] = []
    while path is not None:
        path, key = path
        parts.append(f"[{key}]" if isinstance(key, int) else f".{str(key)[:40]}")
    parts.reverse()
    if len(parts) > 9:
        parts = [*parts[:5], f"...({len(parts) - 7} levels)...", *parts[-2:]]
    return "$" + "".join(parts)


def _too_deep_at(text: str) -> tuple[int, int]:
    """Line and column of the first bracket past MAX_JSON_DEPTH (1, 1 if none is found)."""
    depth = 0
    for match in _TOKEN.finditer(text):
        first = match.group()[0]
        if first in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                pos = match.start()
                return text.count("\n", 0, pos) + 1, pos - text.rfind("\n", 0, pos)
        elif first in "]}":
            depth -= 1
    return 1, 1
