"""Profile files: one YAML mapping per session or speaker (DESIGN.md 4).

Every field is optional and unknown fields are kept, because people add their own notes to
these files. Items written `key: value` are slots that later updates replace.
"""

from __future__ import annotations

from typing import Any

from vault.format.model import FormatError, HistoryEntry, Profile
from vault.format.yamlio import (
    Block,
    BlockList,
    decode,
    describe,
    dump,
    field_error,
    load_block,
    parse_datetime,
)

PROFILE_FIELDS: tuple[str, ...] = (
    "name",
    "traits",
    "preferences",
    "notes",
    "updated_at",
    "history",
)
_DATETIME = "a date and time like 2026-11-30T04:20:00Z"
_SLOT_SEPARATOR = ": "


def slot_key(item: str) -> str | None:
    """`Coffee order: oat` -> `coffee_order`; None for an item that is not `key: value`."""
    key, sep, value = item.partition(_SLOT_SEPARATOR)
    normalised = "_".join(key.lower().split())
    return normalised if sep and normalised and value.strip() else None


# --------------------------------------------------------------------------- parsing


def parse_profile(data: bytes | str, *, rel_path: str) -> Profile:
    """Parse a profile file; FormatError carries the line to fix.

    `rel_path` mirrors parse_episode's signature: nothing in a profile derives from its path.
    """
    del rel_path
    text, _ = decode(data)
    block = load_block(text, what="profile")
    if block.data is None:
        return Profile()
    if not isinstance(block.data, dict):
        found = "a list" if isinstance(block.data, list) else f"the text {describe(block.data)}"
        raise FormatError(
            f"profile must be `field: value` lines like `name: Alice` (found {found})", 1
        )
    fields: dict[str, Any] = block.data
    return Profile(
        name=_text(block, "name"),
        traits=_items(block, "traits"),
        preferences=_items(block, "preferences"),
        notes=_notes(block),
        updated_at=_datetime(block, "updated_at", fields.get("updated_at")),
        history=_history(block),
        extra=tuple((k, v) for k, v in fields.items() if k not in PROFILE_FIELDS),
    )


def _line(block: Block, name: str, index: int | None = None) -> int:
    if index is not None and index < len(block.item_lines.get(name, ())):
        return block.item_lines[name][index]
    return block.key_lines.get(name, 1)


def _text(block: Block, name: str, raw: object = ..., line: int | None = None) -> str | None:
    raw = block.data.get(name) if raw is ... else raw
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise field_error(name, "a short text", raw, line or _line(block, name))
    return raw.strip() or None


def _notes(block: Block) -> str | None:
    raw = block.data.get("notes")
    if raw is not None and not isinstance(raw, str):
        raise field_error(
            "notes", "text (use `notes: |` for several lines)", raw, _line(block, "notes")
        )
    # Kept exactly as written, including the newline a `|` block ends with.
    return raw if raw and raw.strip() else None


def _datetime(block: Block, name: str, raw: object, line: int | None = None) -> Any:
    text = _text(block, name, raw, line)
    if text is None:
        return None
    try:
        return parse_datetime(text)
    except ValueError:
        raise field_error(name, _DATETIME, text, line or _line(block, name)) from None


def _items(block: Block, name: str) -> tuple[str, ...]:
    raw = block.data.get(name)
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise FormatError(
            f"{name} must be a list of short texts (got {describe(raw)}): write "
            f"`{name}: [first, second]` or one `- item` line per item",
            _line(block, name),
        )
    items: list[str] = []
    for index, item in enumerate(raw):
        line = _line(block, name, index)
        if isinstance(item, dict) and len(item) == 1:
            ((key, value),) = item.items()
            if not isinstance(value, str) or not value.strip():
                raise FormatError(
                    f"{name} item `{key}:` needs a short text after the colon: "
                    f"write `- {key}: value`",
                    line,
                )
            item = f"{key}{_SLOT_SEPARATOR}{value}"
        elif item is not None and not isinstance(item, str):
            raise FormatError(
                f"{name} must be a list of short texts or `key: value` items "
                f"(got {describe(item)}): make this item one line of text",
                line,
            )
        if item and item.strip():
            items.append(item.strip())
    return tuple(items)


def _history(block: Block) -> tuple[HistoryEntry, ...]:
    raw = block.data.get("history")
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise field_error(
            "history", "a list of {key, value, until, reason} entries", raw, _line(block, "history")
        )
    entries: list[HistoryEntry] = []
    for index, item in enumerate(raw):
        line = _line(block, "history", index)
        if not isinstance(item, dict):
            raise FormatError(
                f"history entries must be mappings with key, value and until "
                f"(got {describe(item)}): fix this entry or delete it",
                line,
            )
        key = _text(block, "history key", item.get("key"), line)
        value = _text(block, "history value", item.get("value"), line)
        until = _datetime(block, "history until", item.get("until"), line)
        if key is None or value is None or until is None:
            raise FormatError(
                "history entry needs key, value and until: add the missing one or delete the entry",
                line,
            )
        reason = _text(block, "history reason", item.get("reason"), line) or ""
        entries.append(HistoryEntry(key=key, value=value, until=until, reason=reason))
    return tuple(entries)


# --------------------------------------------------------------------------- writing


def _render_item(item: str) -> Any:
    # A slot is written as a one-key mapping (`- coffee: oat flat white`), as people do.
    if slot_key(item) is None:
        return item
    key, _, value = item.partition(_SLOT_SEPARATOR)
    return {key: value}


def render_profile(p: Profile) -> str:
    """A new profile file; fields in DESIGN.md 4 order, unset ones left out."""
    fields: dict[str, Any] = {}
    if p.name is not None:
        fields["name"] = p.name
    if p.traits:
        fields["traits"] = [_render_item(item) for item in p.traits]
    if p.preferences:
        # Preferences are sentences: one per line reads better than a long [a, b] line.
        fields["preferences"] = BlockList(_render_item(item) for item in p.preferences)
    if p.notes is not None:
        fields["notes"] = p.notes
    if p.updated_at is not None:
        fields["updated_at"] = p.updated_at
    if p.history:
        fields["history"] = [
            {"key": h.key, "value": h.value, "until": h.until}
            | ({"reason": h.reason} if h.reason else {})
            for h in p.history
        ]
    for name, value in p.extra:
        if name in PROFILE_FIELDS or name in fields:
            raise ValueError(f"extra field {name!r} clashes with a known or earlier field")
        fields[name] = value
    return dump(fields) if fields else "{}\n"
