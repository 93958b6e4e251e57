"""Tags as people type them: trimmed, matched without regard to case, first spelling kept.

`[Hobby, hobby]` is one tag, shown as `Hobby` (the spelling written first); a search or filter
for `HOBBY` finds it. Matching goes through `tag_key` everywhere (files, index, filters) so the
three can never disagree about which tags are "the same".
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable


def tag_key(tag: str) -> str:
    """The form two tags are compared in: NFKC (full-width letters fold too), then casefold."""
    return unicodedata.normalize("NFKC", tag).strip().casefold()


def normalise_tags(tags: Iterable[str]) -> tuple[str, ...]:
    """Trimmed, blanks dropped, one entry per `tag_key`, keeping the first spelling given."""
    kept: dict[str, str] = {}
    for raw in tags:
        tag = raw.strip()
        key = tag_key(tag)
        if key and key not in kept:
            kept[key] = tag
    return tuple(kept.values())


def tag_keys(tags: Iterable[str]) -> tuple[str, ...]:
    """The match keys of `tags`, deduplicated, in order (what the index stores)."""
    return tuple(dict.fromkeys(key for key in map(tag_key, tags) if key))
