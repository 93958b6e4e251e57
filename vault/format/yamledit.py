"""Editing YAML people wrote: change only the lines an edit must, keep everything else.

ruamel's round-trip mode keeps comments and order, but re-saving still normalises a few
untouched lines; `rt_edit` diffs against ruamel's own unedited output so only the lines
that really changed are spliced into the person's text.
"""

from __future__ import annotations

import difflib
import io
import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.constructor import RoundTripConstructor
from ruamel.yaml.error import YAMLError as RuamelError
from ruamel.yaml.representer import RoundTripRepresenter
from ruamel.yaml.resolver import VersionedResolver
from ruamel.yaml.scalarstring import (
    DoubleQuotedScalarString,
    LiteralScalarString,
    PlainScalarString,
    ScalarString,
    SingleQuotedScalarString,
)
from ruamel.yaml.util import load_yaml_guess_indent

from vault.format.model import FormatError
from vault.format.yamlio import (
    NULL_WORDS,
    BlockList,
    FlowMap,
    drop_document_end,
    float_text,
    format_datetime,
    load_block,
    plain_value,
    str_style,
)

# --------------------------------------------------------------------------- editing

_CANNOT_EDIT = (
    "this YAML uses a form MemVault cannot rewrite without changing other values: "
    "make this edit by hand"
)


class _TextResolver(VersionedResolver):
    """Resolves nothing implicitly: ruamel then reads every plain scalar as text, as we do."""

    @property
    def versioned_resolver(self) -> dict[Any, Any]:
        return {}


class _TextConstructor(RoundTripConstructor):
    def construct_yaml_str(self, node: Any) -> Any:
        value = super().construct_yaml_str(node)
        # Remember "was plain" so the value is written back exactly as it was typed.
        if not node.style and type(value) is str:
            return PlainScalarString(value)
        return value


_TextConstructor.add_constructor("tag:yaml.org,2002:str", _TextConstructor.construct_yaml_str)


def _scalar_text(value: object) -> str | None:
    """How a non-text scalar is written: plain text that our reader coerces back."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return float_text(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, datetime):
        return format_datetime(value)
    return None


class _EditRepresenter(RoundTripRepresenter):
    def represent_text(self, data: str) -> Any:
        return self.represent_scalar("tag:yaml.org,2002:str", data, style=str_style(data))

    def represent_plain(self, data: object) -> Any:
        # The resolver knows no types, so a tagged int would be written `!!int 5`.
        return self.represent_scalar("tag:yaml.org,2002:str", _scalar_text(data))


_EditRepresenter.add_representer(str, _EditRepresenter.represent_text)
for _type in (type(None), bool, int, float, datetime):
    _EditRepresenter.add_representer(_type, _EditRepresenter.represent_plain)

# Assigning a bare str to an existing key makes ruamel reuse the old value's quoting, which
# can be wrong for the new text, so new text always carries the style it needs.
_STYLED: dict[str | None, type[ScalarString]] = {
    None: PlainScalarString,
    "'": SingleQuotedScalarString,
    '"': DoubleQuotedScalarString,
    "|": LiteralScalarString,
}


def edit_value(value: object) -> Any:
    """A model value as ruamel data: text styled as it must be, scalar lists and speakers
    in flow style, preference-like lists (BlockList) one item per line."""
    value = plain_value(value)
    if isinstance(value, str) and not isinstance(value, ScalarString):
        return _STYLED[str_style(value)](value)
    if isinstance(value, dict):
        result = CommentedMap((k, edit_value(v)) for k, v in value.items())
        if isinstance(value, FlowMap):
            result.fa.set_flow_style()
        return result
    if isinstance(value, list):
        seq = CommentedSeq(edit_value(item) for item in value)
        if not isinstance(value, BlockList) and all(
            not isinstance(item, (dict, list)) for item in value
        ):
            seq.fa.set_flow_style()
        return seq
    return value


def _meaning(value: Any) -> Any:
    """What load_block will read for ruamel data, to check an edit changed nothing else."""
    if isinstance(value, dict):
        return {str(k): _meaning(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_meaning(v) for v in value]
    if isinstance(value, PlainScalarString):
        return None if value in NULL_WORDS else str(value)
    if isinstance(value, str):
        return str(value)
    return None if value is None else _scalar_text(value)


def _reads_as(text: str, expected: Any) -> bool:
    try:
        return load_block(text).data == expected
    except FormatError:
        return False


def _rt_yaml() -> YAML:
    rt = YAML(typ="rt")
    rt.Resolver = _TextResolver
    rt.Constructor = _TextConstructor
    rt.Representer = _EditRepresenter
    rt.preserve_quotes = True
    rt.width = 1 << 30  # never re-wrap a person's long line
    rt.allow_unicode = True
    return rt


def _rt_dump(rt: YAML, data: Any) -> str:
    out = io.StringIO()
    rt.dump(data, out)
    return drop_document_end(out.getvalue())


def _rt_load(rt: YAML, text: str) -> Any:
    try:
        try:
            root, indent, seq_indent = load_yaml_guess_indent(text, yaml=rt)
        except IndexError:  # ruamel's indent guess trips over some lines; loading does not
            root, indent, seq_indent = rt.load(text), None, None
    except RuamelError as exc:
        raise FormatError(f"{_CANNOT_EDIT} ({exc})") from exc
    if seq_indent is None:  # no block list yet: new ones are indented like DESIGN.md 4
        rt.indent(mapping=indent or 2, sequence=(indent or 2) + 2, offset=2)
    else:  # `indent` is where item text starts: the dash offset plus the mapping step
        step = indent - seq_indent if indent and indent > seq_indent else 2
        rt.indent(mapping=step, sequence=indent or 2, offset=seq_indent)
    return root


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split on LF only (CRLF stays with its line; U+2028 is text)."""
    return re.findall(r"[^\n]*\n|[^\n]+\Z", text)


def rt_edit(text: str, mutate: Callable[[CommentedMap], None], *, newline: str = "\n") -> str:
    """Apply `mutate` to the top-level mapping of `text`; change only the lines it must.

    ruamel keeps comments and order but still normalises a few untouched lines (spacing
    inside `[a,b]`, after a colon), so its output is diffed against its own unedited output
    and only the changed lines are spliced into the original text, with `newline` endings.
    Whatever is returned is checked to read exactly as the edited data; FormatError if no
    safe rewrite exists.
    """
    rt = _rt_yaml()
    root = _rt_load(rt, text.replace("\r\n", "\n"))
    if root is None:  # empty or only comments: keep them and append the new fields
        fresh = CommentedMap()
        mutate(fresh)
        prefix = text if not text or text.endswith("\n") else text + newline
        result = prefix + _eol(_rt_dump(rt, fresh) if fresh else "", newline)
        if not _reads_as(result, _meaning(fresh) if fresh else None):
            raise FormatError(_CANNOT_EDIT)
        return result
    if not isinstance(root, CommentedMap):
        raise FormatError("only YAML made of `field: value` lines can be edited")
    if _meaning(root) != load_block(text).data:  # ruamel reads this file differently
        raise FormatError(_CANNOT_EDIT)
    before = split_lines(_rt_dump(rt, root))
    mutate(root)
    expected = _meaning(root)
    after = _eol(_rt_dump(rt, root), newline)
    original = split_lines(text)
    if len(original) == len(before):
        out: list[str] = []
        after_lines = split_lines(after.replace("\r\n", "\n"))
        matcher = difflib.SequenceMatcher(a=before, b=after_lines, autojunk=False)
        for op, i1, i2, j1, j2 in matcher.get_opcodes():
            if op == "equal":
                out.extend(original[i1:i2])
            else:
                out.extend(_eol(line, newline) for line in after_lines[j1:j2])
        if out and not out[-1].endswith("\n"):
            out[-1] += newline
        if _reads_as("".join(out), expected):
            return "".join(out)
    if _reads_as(after, expected):  # ruamel re-flowed lines: its full output is still right
        return after
    raise FormatError(_CANNOT_EDIT)


def _eol(text: str, newline: str) -> str:
    return text.replace("\n", newline) if newline != "\n" else text
