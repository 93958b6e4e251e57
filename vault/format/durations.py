"""Short durations people type for expiry and filters: `30m`, `12h`, `7d`, `2w`."""

from __future__ import annotations

import re
from datetime import timedelta

from vault.errors import BadRequestError

_UNITS: dict[str, timedelta] = {
    "m": timedelta(minutes=1),
    "h": timedelta(hours=1),
    "d": timedelta(days=1),
    "w": timedelta(weeks=1),
}
_PATTERN = re.compile(r"\s*(\d{1,6})\s*([mhdw])\s*", re.IGNORECASE)
# Ten years: far beyond any expiry a chat memory needs, and well inside datetime's range.
MAX_DURATION = timedelta(days=3660)


class DurationError(BadRequestError):
    """A duration that cannot be read; the message shows the accepted spelling."""


def parse_duration(text: str) -> timedelta:
    """`7d` -> 7 days. Raises DurationError (a BadRequestError) saying what to write instead."""
    match = _PATTERN.fullmatch(text or "")
    if match is None:
        raise DurationError(
            f"duration {str(text)[:40]!r} is not understood: write a whole number and a unit, "
            "m (minutes), h (hours), d (days) or w (weeks), e.g. 30m, 12h, 7d, 2w"
        )
    amount = int(match.group(1)) * _UNITS[match.group(2).lower()]
    if amount <= timedelta(0):
        raise DurationError(f"duration {text.strip()!r} is zero: give at least 1, e.g. 1d")
    if amount > MAX_DURATION:
        raise DurationError(
            f"duration {text.strip()!r} is longer than 10 years: give at most 3660d, or set "
            "an exact date with expires_at"
        )
    return amount
