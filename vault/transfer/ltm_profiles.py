"""A LongTermMemory profile (plugin storage `ps:` / `pp:` values, `!memory export`) in the
shape MemVault's profile import reads (vault.transfer.transfer_profiles).

Upstream keeps slot facts in `profile_slots` (`{traits|preferences: {key: {value,
updated_at, confidence, history: [{value, timestamp, status, reason}]}}}`) next to plain
items (`freeform_traits`, `freeform_preferences`); its `traits`/`preferences` lists are both
composed (store/memory_store.py, langbot-app/langbot-plugins de2c6d6). MemVault writes a
slot as a `key: value` item and a slot's earlier values as `history` entries `{key, value,
until, reason}`, so: each current slot value becomes `key: value`, each plain item stays as
it is, and each earlier value gets `until` = when the next value was set (upstream records
when each value was SET). What MemVault has no field for (a slot's confidence, when its
current value was set) stays in upstream's own record, kept whole under `extra.profile_slots`.
"""

from __future__ import annotations

from typing import Any

# Upstream's profile fields that this mapping reads; any other field is kept in `extra`.
LTM_FIELDS = frozenset(
    {"name", "traits", "preferences", "notes", "updated_at", "profile_slots"}
    | {"freeform_traits", "freeform_preferences"}
)
GROUPS = ("traits", "preferences")


def is_ltm_profile(raw: dict[str, Any]) -> bool:
    return any(k in raw for k in ("profile_slots", "freeform_traits", "freeform_preferences"))


def _slots(raw: dict[str, Any], group: str) -> dict[str, dict[str, Any]]:
    root = raw.get("profile_slots")
    found = root.get(group) if isinstance(root, dict) else None
    if not isinstance(found, dict):
        return {}
    return {str(k): v for k, v in found.items() if isinstance(v, dict) and str(k).strip()}


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _items(raw: dict[str, Any], group: str) -> list[Any]:
    """The group's items as MemVault writes them: current slot values as `key: value`
    (newest first, as upstream composes them), then the plain items."""
    slots = sorted(
        _slots(raw, group).items(), key=lambda kv: _text(kv[1].get("updated_at")), reverse=True
    )
    items: list[Any] = [f"{k}: {_text(s.get('value'))}" for k, s in slots if _text(s.get("value"))]
    plain = raw.get(f"freeform_{group}")
    if plain is None:  # only the composed list: drop the slot values it repeats
        values = {_text(s.get("value")) for _, s in slots}
        listed = raw.get(group)
        plain = [i for i in listed if _text(i) not in values] if isinstance(listed, list) else []
    if not isinstance(plain, list):
        return [*items, plain]  # refused by the importer with its type message
    return items + [i for i in plain if not (isinstance(i, str) and i in items)]


def _history(raw: dict[str, Any]) -> list[dict[str, str]]:
    """Every earlier slot value, newest first, dated by when it stopped being current."""
    entries: list[dict[str, str]] = []
    for group in GROUPS:
        for key, slot in _slots(raw, group).items():
            past = [h for h in slot.get("history") or [] if isinstance(h, dict)]
            ends = [_text(h.get("timestamp")) for h in past[1:]] + [_text(slot.get("updated_at"))]
            for entry, until in zip(past, ends, strict=True):
                value = _text(entry.get("value"))
                until = until or _text(raw.get("updated_at"))
                if not value or not until:
                    continue  # still in extra.profile_slots, as upstream wrote it
                status, reason = _text(entry.get("status")), _text(entry.get("reason"))
                said = reason if status in ("", "superseded") else f"{status}: {reason}"
                entries.append({"key": key, "value": value, "until": until, "reason": said})
    return sorted(entries, key=lambda e: e["until"], reverse=True)


def ltm_profile(raw: dict[str, Any]) -> dict[str, Any]:
    """`raw` (upstream's profile object) as MemVault's export writes a profile."""
    extra = {str(k): v for k, v in raw.items() if k not in LTM_FIELDS and str(k).strip()}
    if any(_slots(raw, group) for group in GROUPS):
        extra["profile_slots"] = raw["profile_slots"]
    return {
        "name": raw.get("name"),
        "traits": _items(raw, "traits"),
        "preferences": _items(raw, "preferences"),
        "notes": raw.get("notes"),
        "updated_at": raw.get("updated_at"),
        "history": _history(raw),
        "extra": extra,
    }
