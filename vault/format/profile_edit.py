"""Profile edits (set/add/remove) applied to a round-trip YAML document.

Working on ruamel's round-trip tree rather than on a `Profile` keeps a person's comments,
key order and untouched lines exactly as they wrote them; only the edited lines change.
Semantics follow LongTermMemory's update_profile, with two deliberate differences: a full
list or notes that are too long is an error (upstream drops data silently), and `remove`
on `name` clears it (upstream sets it to the value passed).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from vault.errors import BadRequestError
from vault.format.model import (
    DEFAULT_PROFILE_LIMITS,
    PROFILE_MAX_HISTORY,
    PROFILE_MAX_NOTES,
    PROFILE_MAX_PREFERENCES,
    PROFILE_MAX_TRAITS,
    ProfileLimits,
)
from vault.format.profiles import slot_key
from vault.format.yamledit import edit_value
from vault.format.yamlio import FlowMap

FIELDS = ("name", "traits", "preferences", "notes")
ACTIONS = ("set", "add", "remove")
LIMITS = {"traits": PROFILE_MAX_TRAITS, "preferences": PROFILE_MAX_PREFERENCES}


def normalise_key(key: str) -> str:
    return "_".join(key.strip().lower().split())


def split_slot(item: Any) -> tuple[str | None, str]:
    """(slot key, value) of a list item; key None for a plain item. Same rule as reading."""
    if isinstance(item, dict) and len(item) == 1:
        ((k, v),) = item.items()
        return normalise_key(str(k)), "" if v is None else str(v).strip()
    text = str(item).strip()
    key = slot_key(text)
    if key is not None:
        return key, text.partition(": ")[2].strip()
    return None, text


def _push_history(doc: CommentedMap, key: str, value: str, now: datetime, reason: str) -> None:
    if not value:
        return
    history = doc.get("history")
    if not isinstance(history, list):
        history = CommentedSeq()
        doc["history"] = history
    entry = FlowMap(key=key, value=value, until=now.replace(microsecond=0), reason=reason)
    history.insert(0, edit_value(entry))
    del history[PROFILE_MAX_HISTORY:]


def check_edit(field: str, action: str, value: str, fact_key: str | None) -> None:
    """What no profile can take, whatever its file holds: BadRequestError saying what to send
    instead. apply_edit checks it, and so does vault.writes.profile_edit.ProfileEdit where
    the edit arrives, so a refusal comes before the vault is locked. `value` stripped."""
    if field not in FIELDS:
        raise BadRequestError(f"invalid field {field!r}: use one of {', '.join(FIELDS)}")
    if action not in ACTIONS:
        raise BadRequestError(f"invalid action {action!r}: use one of {', '.join(ACTIONS)}")
    if fact_key is not None and field not in LIMITS:
        raise BadRequestError("fact_key is only supported for traits and preferences")
    if action != "remove" and not value:
        raise BadRequestError(f"{action} {field} needs a value")
    if fact_key is not None and not normalise_key(fact_key):
        raise BadRequestError("fact_key is empty: pass a short key such as coffee")


def apply_edit(
    doc: CommentedMap,
    field: str,
    action: str,
    value: str,
    *,
    now: datetime,
    fact_key: str | None = None,
    previous_value: str | None = None,
    limits: ProfileLimits = DEFAULT_PROFILE_LIMITS,
) -> None:
    """Change `doc` in place; raises BadRequestError with what to do instead. `limits`: the
    vault's (Vault.profile_limits: the plugin's max_profile_* settings)."""
    value = (value or "").strip()
    check_edit(field, action, value, fact_key)
    if field == "name":
        doc["name"] = edit_value(value if action != "remove" else None)
    elif field == "notes":
        _edit_notes(doc, action, value)
    else:
        previous = (previous_value or "").strip()
        _edit_list(doc, field, action, value, now, fact_key, previous, limits.of(field))
    doc["updated_at"] = edit_value(now.replace(microsecond=0))


def _edit_notes(doc: CommentedMap, action: str, value: str) -> None:
    current = str(doc.get("notes") or "").rstrip("\n")
    if action == "set":
        new = value
    elif action == "add":
        new = f"{current}\n{value}" if current else value
    elif not value:
        new = ""
    else:
        lines = current.split("\n")
        kept = [line for line in lines if line.strip() != value]
        if len(kept) == len(lines):
            raise BadRequestError(
                "notes have no line equal to that value: remove without a value clears all notes"
            )
        new = "\n".join(kept)
    if len(new) > PROFILE_MAX_NOTES:
        raise BadRequestError(
            f"notes would be {len(new)} characters: keep them under {PROFILE_MAX_NOTES}, "
            "or move details into an episode with remember"
        )
    doc["notes"] = edit_value(new + "\n" if "\n" in new else new)


def _edit_list(
    doc: CommentedMap,
    field: str,
    action: str,
    value: str,
    now: datetime,
    fact_key: str | None,
    previous: str,
    limit: int,
) -> None:
    items = doc.get(field)
    if not isinstance(items, list):
        items = CommentedSeq()
        items.fa.set_block_style()
        doc[field] = items
    key, text = (normalise_key(fact_key), value) if fact_key else split_slot(value)
    slots = [split_slot(item)[0] for item in items]
    if action == "remove":
        _remove(items, field, key, text, now, doc)
        return
    if action == "set" and key is None:
        for item in list(items):
            old_key, old_value = split_slot(item)
            _push_history(doc, old_key or field, old_value, now, "field_set_reset")
        items.clear()
        slots = []
    if key is not None and key in slots:
        index = slots.index(key)
        old_value = split_slot(items[index])[1]
        if old_value != text:
            _push_history(doc, key, old_value, now, "profile_update")
            items[index] = _slot_item(key, text)
        return
    if key is None and any(split_slot(item) == (None, text) for item in items):
        return
    if len(items) >= limit:
        raise BadRequestError(
            f"{field} already has {len(items)} items (the limit is {limit}, setting "
            f"max_profile_{field}): remove one first"
        )
    if key is not None and previous and previous != text:
        _push_history(doc, key, previous, now, "provided_previous_value")
    items.append(_slot_item(key, text) if key is not None else edit_value(text))


def _slot_item(key: str, value: str) -> CommentedMap:
    item = CommentedMap()
    item[key] = edit_value(value)
    return item


def _remove(
    items: CommentedSeq, field: str, key: str | None, text: str, now: datetime, doc: CommentedMap
) -> None:
    for index in range(len(items) - 1, -1, -1):
        item_key, item_value = split_slot(items[index])
        match = item_key == key if key is not None else text in (item_value, str(items[index]))
        if match:
            del items[index]
            if item_key is not None:
                _push_history(doc, item_key, item_value, now, "explicit_remove")
            return
    wanted = key if key is not None else text
    raise BadRequestError(f"{field} has no item {wanted!r}: run `profile show` to see them")
