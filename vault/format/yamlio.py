"""YAML coercion and writing shared by the episode and profile formats (DESIGN.md 4-5);
reading is vault.format.yamlread's.

Reading never lets YAML guess types: people write `no`, `012345`, `1.10` and dates meaning
text, so every scalar arrives as a string and only the fields a schema knows are coerced.
Writing new content uses PyYAML; editing existing files goes through ruamel.yaml and a line
splice so that only the lines an edit must touch change.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import yaml
from ruamel.yaml.nodes import ScalarNode as RuamelScalarNode
from ruamel.yaml.resolver import VersionedResolver

from vault.format.model import FormatError, Speaker

# The reading half lives in vault.format.yamlread; its names stay importable from here.
from vault.format.yamlread import NULL_WORDS, Block, decode, load_block  # noqa: F401

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
