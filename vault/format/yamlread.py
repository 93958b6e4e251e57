"""Reading YAML for the episode, profile, candidate and key-event formats (DESIGN.md 4-5):
one parser, bounded by vault.format.input_limits, so a hostile file is a FormatError with a line.

Reading never lets YAML guess types: people write `no`, `012345`, `1.10` and dates meaning
text, so every scalar arrives as a string and only the fields a schema knows are coerced
(vault.format.yamlio). Aliases are expanded where used and counted, so "billion laughs" stops at
MAX_YAML_NODES; nesting stops at MAX_YAML_DEPTH, before Python's stack does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from vault.format.input_limits import MAX_FILE_BYTES, MAX_YAML_DEPTH, MAX_YAML_NODES
from vault.format.model import FormatError

try:
    from yaml import CBaseLoader as _Loader
except ImportError:  # PyYAML built without libyaml: same semantics, slower
    from yaml import BaseLoader as _Loader  # type: ignore[assignment]

# Only an unquoted null word means "no value": a quoted "null" is text someone meant.
NULL_WORDS = frozenset({"", "~", "null", "Null", "NULL"})
_TOO_DEEP = (
    f"nests deeper than {MAX_YAML_DEPTH} levels of lists and mappings: write its fields as "
    "plain `field: value` lines, or remove the file"
)


@dataclass(frozen=True)
class Block:
    """A parsed YAML document plus where its top-level keys sit, for error lines."""

    data: Any
    key_lines: dict[str, int] = field(default_factory=dict)
    # 1-based line of each item of a top-level block sequence, keyed by the field name.
    item_lines: dict[str, list[int]] = field(default_factory=dict)
    first_line: int = 1


# --------------------------------------------------------------------------- reading


def decode(data: bytes | str) -> tuple[str, bool]:
    """Text of a file and whether it started with a UTF-8 BOM (kept when rewriting); a file
    past MAX_FILE_BYTES is refused before anything reads it further."""
    if len(data) > MAX_FILE_BYTES:
        size = len(data.encode("utf-8")) if isinstance(data, str) else len(data)
        raise FormatError(
            f"file is {size / 1e6:.1f} MB: a memory file holds at most "
            f"{MAX_FILE_BYTES / 1e6:.0f} MB (one memory at most 20,000 characters); split it "
            "into several files, or upload it to a knowledge base, which splits it",
            1,
        )
    if isinstance(data, str):
        return (data[1:], True) if data.startswith("\ufeff") else (data, False)
    bom = data.startswith(b"\xef\xbb\xbf")
    try:
        return data.decode("utf-8-sig"), bom
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise FormatError("file is not UTF-8 text: re-save it with UTF-8 encoding", line) from exc


def load_block(text: str, *, first_line: int = 1, what: str = "YAML") -> Block:
    """Parse one YAML document; `first_line` is the file line the text starts on."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
    except RecursionError:  # the pure-Python composer recurses per level (libyaml stops at 1000)
        raise FormatError(f"{what} {_TOO_DEEP}", first_line) from None
    except yaml.MarkedYAMLError as exc:
        if "maximum nesting depth" in str(exc.problem):  # libyaml's own limit
            raise FormatError(f"{what} {_TOO_DEEP}", _mark_line(exc, first_line)) from exc
        raise _syntax_error(exc, first_line, what) from exc
    except yaml.YAMLError as exc:
        pos = getattr(exc, "position", None)
        line = first_line + (text[:pos].count("\n") if isinstance(pos, int) else 0)
        raise FormatError(f"{what} is not valid YAML ({exc}): fix that line", line) from exc
    finally:
        loader.dispose()
    if node is None:  # empty or comments only
        return Block(None, first_line=first_line)
    data = _Builder(first_line, what).build(node, 1)
    key_lines: dict[str, int] = {}
    item_lines: dict[str, list[int]] = {}
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key_lines[key_node.value] = key_node.start_mark.line + first_line
            if isinstance(value_node, yaml.SequenceNode):
                item_lines[key_node.value] = [
                    item.start_mark.line + first_line for item in value_node.value
                ]
    return Block(data, key_lines, item_lines, first_line)


class _Builder:
    """Plain data of a composed YAML node tree, within MAX_YAML_DEPTH and MAX_YAML_NODES (an
    alias is expanded where it is used, so a few lines can stand for billions of values)."""

    def __init__(self, first_line: int, what: str) -> None:
        self.first_line = first_line
        self.what = what
        self.count = 0
        self.seen: set[int] = set()  # nodes built once already: a second time is an alias
        self.aliased = False
        self.active: set[int] = set()

    def line(self, node: yaml.Node) -> int:
        return node.start_mark.line + self.first_line

    def build(self, node: yaml.Node, depth: int) -> Any:
        self.count += 1
        self.aliased = self.aliased or id(node) in self.seen
        self.seen.add(id(node))
        if self.count > MAX_YAML_NODES:
            expanded = " once its aliases (*name) are expanded" if self.aliased else ""
            raise FormatError(
                f"{self.what} holds more than {MAX_YAML_NODES:,} values{expanded}: "
                "simplify it (a memory or profile needs a few dozen)",
                self.line(node),
            )
        if isinstance(node, yaml.ScalarNode):
            # CParser marks plain scalars with style '' and the pure parser with None.
            if not node.style and node.value in NULL_WORDS:
                return None
            return node.value
        if depth > MAX_YAML_DEPTH:
            raise FormatError(f"{self.what} {_TOO_DEEP}", self.line(node))
        if id(node) in self.active:
            raise FormatError("YAML alias refers to itself: remove the *alias", self.line(node))
        self.active.add(id(node))
        try:
            if isinstance(node, yaml.SequenceNode):
                return [self.build(item, depth + 1) for item in node.value]
            return self._mapping(node, depth)
        finally:
            self.active.discard(id(node))

    def _mapping(self, node: yaml.Node, depth: int) -> dict[str, Any]:
        result: dict[str, Any] = {}
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            line = self.line(key_node)
            if not isinstance(key_node, yaml.ScalarNode):
                raise FormatError("field names must be plain text: fix this key", line)
            key = key_node.value
            if key in seen:
                raise FormatError(
                    f"{key} appears twice (first on line {seen[key]}): keep only one {key} line",
                    line,
                )
            seen[key] = line
            result[key] = self.build(value_node, depth + 1)
        return result


def _mark_line(exc: yaml.MarkedYAMLError, first_line: int) -> int:
    mark = exc.problem_mark or exc.context_mark
    return first_line + (mark.line if mark is not None else 0)


def _syntax_error(exc: yaml.MarkedYAMLError, first_line: int, what: str) -> FormatError:
    problem = exc.problem or str(exc)
    context = exc.context or ""
    unclosed = "end of stream" in problem or "did not find expected ','" in problem
    # An unclosed quote or bracket is noticed lines later; point at where it was opened.
    mark = exc.context_mark if unclosed and exc.context_mark is not None else exc.problem_mark
    line = first_line + (mark.line if mark is not None else 0)
    if "tab" in problem:
        hint = "indent with spaces, not tabs"
    elif unclosed and "quoted" in context:
        hint = "close the quote that starts on that line"
    elif unclosed and "flow" in context:
        hint = "close the [ or { that starts on that line, or quote the text"
    elif "mapping values" in problem or "expected ':'" in problem or "simple key" in problem:
        hint = (
            'write "field: value" with top-level fields starting in the first column, and '
            'put quotes around text that contains ": " or " #"'
        )
    elif "another document" in problem:
        hint = "remove the extra --- line: one YAML document per file"
    else:
        hint = "check quotes, colons and indentation on that line"
    return FormatError(f"{what} is not valid YAML ({problem}): {hint}", line)
