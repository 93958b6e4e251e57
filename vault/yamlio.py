"""YAML reading and writing shared by the episode and profile formats (DESIGN.md 4-5).

Reading never lets YAML guess types: people write `no`, `012345`, `1.10` and dates meaning
text, so every scalar arrives as a string and only the fields a schema knows are coerced.
Writing new content uses PyYAML; editing existing files goes through ruamel.yaml and a line
splice so that only the lines an edit must touch change.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import yaml
from ruamel.yaml.nodes import ScalarNode as RuamelScalarNode
from ruamel.yaml.resolver import VersionedResolver

from vault.input_limits import MAX_FILE_BYTES, MAX_YAML_DEPTH, MAX_YAML_NODES
from vault.model import FormatError, Speaker

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


# --------------------------------------------------------------------------- coercion

_INT_RE = re.compile(r"[-+]?[0-9]+")
_FLOAT_RE = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
_TRUE = frozenset({"true", "yes", "on"})
_FALSE = frozenset({"false", "no", "off"})
# YAML 1.1 timestamps allow blanks before the zone (`2026-11-30 04:20:00 +08:00`).
_ZONE_GAP_RE = re.compile(r"[ \t]+(?=(?:Z|[-+]\d\d(?::?\d\d)?)$)")


def describe(raw: object) -> str:
    """How a bad value is quoted back to the person in an error message."""
    if isinstance(raw, list):
        return "a list"
    if isinstance(raw, dict):
        return "a mapping"
    text = str(raw)
    return '"' + (text if len(text) <= 40 else text[:37] + "...") + '"'


def field_error(name: str, expected: str, raw: object, line: int) -> FormatError:
    return FormatError(
        f"{name} must be {expected} (got {describe(raw)}): edit the {name} line", line
    )


def to_int(raw: str) -> int:
    text = raw.strip()
    if not _INT_RE.fullmatch(text):  # int() would also take "1_0" and non-ASCII digits
        raise ValueError(raw)
    return int(text)


def to_float(raw: str) -> float:
    text = raw.strip()
    if not _FLOAT_RE.fullmatch(text):  # float() would also take nan, inf and "1_0"
        raise ValueError(raw)
    return float(text)


def to_bool(raw: str) -> bool:
    text = raw.strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(raw)


def parse_datetime(raw: str) -> datetime:
    """ISO 8601 or YAML timestamp text as an aware UTC datetime (naive means UTC)."""
    value = datetime.fromisoformat(_ZONE_GAP_RE.sub("", raw.strip().upper()))
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError as exc:  # e.g. 0001-01-01T00:00:00+01:00
        raise ValueError(raw) from exc


def float_text(value: float) -> str:
    """repr, but always with a dot, so YAML 1.1 readers see a float too (1.0e-05)."""
    text = repr(value)
    return text.replace("e", ".0e", 1) if "e" in text and "." not in text else text


def format_datetime(value: datetime) -> str:
    """`2026-11-30T04:20:00Z`, microseconds only when present; naive is taken as UTC."""
    value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    text = value.strftime("%Y-%m-%dT%H:%M:%S")
    if value.microsecond:
        text += f".{value.microsecond:06d}"
    return text + "Z"


# --------------------------------------------------------------------------- writing

# Words some reader takes for a bool or null in some capitalisation (YAML 1.1 has `y`, `n`).
_AMBIGUOUS_WORDS = _TRUE | _FALSE | {"y", "n", "null", "~", ""}
# Every resolver a reader of these files is likely to use: PyYAML (1.1) and ruamel (1.1 and
# 1.2, which also reads `1_000`, `0o17` and `1e5` as numbers).
_RESOLVERS: tuple[tuple[Any, type], ...] = (
    (yaml.resolver.Resolver(), yaml.ScalarNode),
    (VersionedResolver(version=(1, 1)), RuamelScalarNode),
    (VersionedResolver(version=(1, 2)), RuamelScalarNode),
)


def misreadable(text: str) -> bool:
    """True when some YAML 1.1 or 1.2 reader would not read this plain scalar as text."""
    if text.strip().lower() in _AMBIGUOUS_WORDS:
        return True
    return any(
        str(resolver.resolve(kind, text, (True, False))) != "tag:yaml.org,2002:str"
        for resolver, kind in _RESOLVERS
    )


_BLOCK_UNSAFE_RE = re.compile(
    "[^\n\x20-\x7e\xa0-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]|[ ](?:\n|$)"
)


def str_style(text: str) -> str | None:
    # \x85 and U+2028/9 are line breaks to YAML 1.1 only: escape them so no reader differs.
    if any(ch in text for ch in "\x85\u2028\u2029"):
        return '"'
    if "\n" in text:
        # A `|` block only when every character can stand in it as is (PyYAML's own rule);
        # ruamel would also put control characters and trailing blanks into a block.
        return '"' if _BLOCK_UNSAFE_RE.search(text) else "|"
    return "'" if misreadable(text) else None


class FlowMap(dict):
    """A mapping written on one line, like `speaker: {id: u42, name: Alice}`."""


class BlockList(list):
    """A list written one `- item` per line even when its items are short texts."""


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        # One value used twice (a candidate's created_at and evidence time) must be written
        # twice, not as &id001 / *id001, which a person would not know to keep in sync.
        return True

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        # Indent block lists under their key (`  - item`) as DESIGN.md 4 shows.
        super().increase_indent(flow, False)


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=str_style(data))


def _represent_list(dumper: yaml.SafeDumper, data: list[Any]) -> yaml.SequenceNode:
    flat = not isinstance(data, BlockList) and all(
        not isinstance(item, (list, tuple, dict)) for item in data
    )
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flat)


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(list, _represent_list)
_Dumper.add_representer(tuple, _represent_list)
_Dumper.add_representer(BlockList, _represent_list)
_Dumper.add_representer(
    dict, lambda d, data: d.represent_mapping("tag:yaml.org,2002:map", data, flow_style=False)
)
_Dumper.add_representer(
    FlowMap, lambda d, data: d.represent_mapping("tag:yaml.org,2002:map", data, flow_style=True)
)
_Dumper.add_representer(
    datetime,
    lambda d, data: d.represent_scalar("tag:yaml.org,2002:timestamp", format_datetime(data)),
)
_Dumper.add_representer(
    type(None), lambda d, _: d.represent_scalar("tag:yaml.org,2002:null", "null")
)


def dump(data: Mapping[str, Any]) -> str:
    """Block YAML for new content: key order kept, Unicode as is, one value per line."""
    text = yaml.dump(dict(data), Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=1 << 30)
    return drop_document_end(text)


def drop_document_end(text: str) -> str:
    # After a `|+` block emitters add a `...` line, which would also close front matter;
    # the text ends right there anyway, so the marker adds nothing.
    return text[: -len("...\n")] if text.endswith("\n...\n") else text


def plain_value(value: object) -> Any:
    """Model values as plain YAML data: datetimes stay datetimes, speakers become maps."""
    if isinstance(value, Speaker):
        return FlowMap({"id": value.id} | ({"name": value.name} if value.name else {}))
    if isinstance(value, (list, tuple)):
        items = [plain_value(item) for item in value]
        return BlockList(items) if isinstance(value, BlockList) else items
    return value
