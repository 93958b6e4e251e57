"""How a value from a chat or a file is written into an injected prompt (pure functions).

Two kinds of value, one rule each, so no value can imitate the text around it:

- `neutralise` (prose: a memory's body, profile traits, notes): one line (whitespace runs,
  line breaks included, become one space), `& < >` written `&amp; &lt; &gt;`, and characters
  that fold to those under NFKC (full-width `＜`, small `﹤`, ...) or are control characters
  written as numeric entities. A body therefore stays inside its `<mem>...</mem>` and the
  `<memory-records>` fence, even for a reader that folds look-alikes; `[ ] ( ) :` are ordinary
  prose there and stay readable (Chinese text keeps its `，（）：`).
- `field` (metadata: ids, tags, speaker ids, anything shown as `key:value` or in `[...]`
  or `(...)`; `label` for names: the same after folding whitespace runs): additionally every
  character of the record syntax `[ ] ( ) , :` and the backtick, every bracket of any script,
  everything that folds to one of those under NFKC (`］ （ ： ，`), whitespace other than a
  plain space, and invisible/format characters (zero-width space, bidi controls) are written
  as `&#N;`. Nothing is dropped or merged, so the escaping is reversible: two different ids
  or tags never look the same in the prompt.

Entities (`&lt;`, `&#93;`) are the convention the injected wording already announces.
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Callable

_NAMED = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
# The characters a record line and a profile line are built from:
# `[1] [ts] (id:x, importance:n, ...) [tag,tag] <mem>...</mem>` and `- Name: x`.
SYNTAX = frozenset("[](),:`")
# Categories that are never needed to read a metadata value and can hide or fake structure:
# controls, format (zero-width, bidi), surrogates, private use, unassigned, line/paragraph
# separators, opening/closing brackets of any script.
_FIELD_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Ps", "Pe"})


def _entity(ch: str) -> str:
    return _NAMED.get(ch) or f"&#{ord(ch)};"


def _folds_to(ch: str, targets: frozenset[str]) -> bool:
    """True when a reader that folds compatibility forms (NFKC) would see one of `targets`."""
    return not ch.isascii() and any(c in targets for c in unicodedata.normalize("NFKC", ch))


_MARKUP = frozenset(_NAMED)
_FIELD_TARGETS = SYNTAX | _MARKUP


@functools.lru_cache(maxsize=8192)
def _prose_char(ch: str) -> str:
    if ch in _MARKUP or _folds_to(ch, _MARKUP) or unicodedata.category(ch) in ("Cc", "Cs"):
        return _entity(ch)
    return ch


@functools.lru_cache(maxsize=8192)
def _field_char(ch: str) -> str:
    if ch == " ":
        return ch
    if (
        ch in _FIELD_TARGETS
        or ch.isspace()
        or unicodedata.category(ch) in _FIELD_CATEGORIES
        or _folds_to(ch, _FIELD_TARGETS)
    ):
        return _entity(ch)
    return ch


def _escaped(value: str, char: Callable[[str], str]) -> str:
    if value and unicodedata.category(value[0]).startswith("M"):
        # A leading combining mark would combine with the syntax before the value: `>` of
        # `<mem>` + U+0338 is `≯` once normalised, and the tag would no longer read as one.
        return _entity(value[0]) + "".join(map(char, value[1:]))
    return "".join(map(char, value))


def neutralise(text: object) -> str:
    """Prose as one line of inert text: no line breaks, no markup characters."""
    return _escaped(" ".join(str(text).split()), _prose_char)


def field(text: object) -> str:
    """A metadata value that cannot imitate the record or profile syntax (see the module doc)."""
    return _escaped(str(text), _field_char)


def label(text: object) -> str:
    """A name shown to the model (a speaker's, a profile's, a profile key): one line, then
    escaped like a `field`. Whitespace runs become one space, as people read names."""
    return field(" ".join(str(text).split()))
