"""A memory's Synapse fields as a person or a model sends them, parsed once at the edge.

`remember` (plugin tool, `memvault remember`, the console's form) and the console's edit
take the same raw values (strings from a shell, JSON from a model or a page) and turn them
into one frozen FieldInput here, so the three surfaces accept and refuse exactly the same
things, with one message each that says what to write instead.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from vault.errors import BadRequestError
from vault.format.durations import parse_duration
from vault.format.model import CATEGORIES, PRIORITIES
from vault.format.tags import normalise_tags
from vault.format.yamlio import parse_datetime

_ISO_EXAMPLE = "an ISO 8601 time such as 2026-12-31 or 2026-12-31T18:00:00Z"


@dataclass(frozen=True)
class FieldInput:
    """Checked values; None = not given (the caller's default applies)."""

    category: str | None = None
    key: str | None = None
    priority: str | None = None
    tags: tuple[str, ...] = ()
    expires_at: datetime | None = None
    confidence: float | None = None


def _one_of(name: str, raw: object, options: tuple[str, ...]) -> str | None:
    if raw is None or raw == "":
        return None
    if isinstance(raw, str) and raw.strip().lower() in options:
        return raw.strip().lower()
    raise BadRequestError(f"{name} must be one of {', '.join(options)} (got {_shown(raw)})")


def parse_priority(raw: object) -> str | None:
    """low | normal | high | critical (any case); None or "" = not given."""
    return _one_of("priority", raw, PRIORITIES)


def parse_category(raw: object) -> str | None:
    return _one_of("category", raw, CATEGORIES)


def parse_confidence(raw: object) -> float | None:
    """A number from 0 to 1 (a model may send "0.8"); None or "" = not given."""
    if raw is None or raw == "":
        return None
    value: float | None = None
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        value = float(raw)
    elif isinstance(raw, str):
        try:
            value = float(raw.strip())
        except ValueError:
            value = None
    if value is None or math.isnan(value) or not 0.0 <= value <= 1.0:
        raise BadRequestError(
            f"confidence must be a number from 0 to 1, e.g. 0.8 (got {_shown(raw)})"
        )
    return value


def parse_expiry(expires_at: object, expires_in: object, now: datetime) -> datetime | None:
    """When the memory stops being recalled: `expires_at` (ISO 8601) or `expires_in` ("7d",
    vault.format.durations), never both; it must lie after `now`, or it would be stored expired."""
    given_at = expires_at not in (None, "")
    given_in = expires_in not in (None, "")
    if given_at and given_in:
        raise BadRequestError("give expires_at or expires_in, not both")
    if given_in:
        if not isinstance(expires_in, str):
            raise BadRequestError(
                f"expires_in must be a duration like 30m, 12h, 7d or 2w (got {_shown(expires_in)})"
            )
        return now + parse_duration(expires_in)
    if not given_at:
        return None
    if not isinstance(expires_at, str):
        raise BadRequestError(f"expires_at must be {_ISO_EXAMPLE} (got {_shown(expires_at)})")
    try:
        when = parse_datetime(expires_at)
    except ValueError:
        raise BadRequestError(
            f"expires_at must be {_ISO_EXAMPLE} (got {_shown(expires_at)})"
        ) from None
    if when <= now:
        raise BadRequestError(
            f"expires_at {expires_at.strip()} is not in the future: give a later time, or "
            "leave it out so the memory never expires"
        )
    return when


def parse_tags(raw: object) -> tuple[str, ...]:
    """A list of strings, normalised (vault.format.tags: one per case-folded spelling)."""
    if raw is None:
        return ()
    if not isinstance(raw, list | tuple) or not all(isinstance(t, str) for t in raw):
        raise BadRequestError('tags must be a list of strings, e.g. ["travel", "family"]')
    return normalise_tags(raw)


def parse_key(raw: object) -> str | None:
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise BadRequestError(f"key must be a short text (got {_shown(raw)})")
    return raw.strip() or None


def parse_fields(
    *,
    now: datetime,
    category: object = None,
    key: object = None,
    priority: object = None,
    tags: object = None,
    expires_at: object = None,
    expires_in: object = None,
    confidence: object = None,
) -> FieldInput:
    """Every field checked; the first bad one raises BadRequestError naming it."""
    return FieldInput(
        category=parse_category(category),
        key=parse_key(key),
        priority=parse_priority(priority),
        tags=parse_tags(tags),
        expires_at=parse_expiry(expires_at, expires_in, now),
        confidence=parse_confidence(confidence),
    )


def parse_edit(raw: Mapping[str, object], now: datetime) -> dict[str, object]:
    """The fields an edit sends, checked, by Episode field name. A field left out is not
    changed; category, key and expiry sent blank (None or "") are cleared; priority and
    confidence sent blank are left as they are (they always have a value)."""
    out: dict[str, object] = {}
    if "category" in raw:
        out["category"] = parse_category(raw["category"])
    if "key" in raw:
        out["key"] = parse_key(raw["key"])
    if (priority := parse_priority(raw.get("priority"))) is not None:
        out["priority"] = priority
    if (confidence := parse_confidence(raw.get("confidence"))) is not None:
        out["confidence"] = confidence
    if "expires_at" in raw or "expires_in" in raw:
        out["expires_at"] = parse_expiry(raw.get("expires_at"), raw.get("expires_in"), now)
    return out


def _shown(raw: object) -> str:
    text = repr(raw)
    return text if len(text) <= 60 else text[:57] + "..."
