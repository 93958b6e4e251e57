"""Chinese resident ID numbers (居民身份证号码, GB 11643) for vault.redaction.redact: 18 characters
written as one run, 17 digits and a check character (0-9 or X) that passes ISO 7064
MOD 11-2, a province code that exists and a birth date that is a real, past day.

The check character alone lets 1 in 11 random numbers through; the province and the birth
date make an order number, a timestamp or a Discord-style snowflake id that passes all three
rare (0 over the bench texts: README, Secrets). Other shapes are left alone on purpose: the
15-digit ids of before 1999 carry no check digit, and phone numbers, passports and other
countries' ids have no checksum either, so no rule could tell them from an ordinary number.
"""

from __future__ import annotations

import re
from datetime import date

_RUN = re.compile(r"(?<![0-9A-Za-z])\d{17}[0-9Xx](?![0-9A-Za-z])")
_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_CHECK = "10X98765432"
# GB/T 2260 province-level codes (plus 71 Taiwan, 81/82 Hong Kong/Macao, 83 residence
# permits for Taiwan residents, 91 foreigners' permanent residence).
_PROVINCES = frozenset(
    (*range(11, 16), *range(21, 24), *range(31, 38), *range(41, 47), *range(50, 55))
) | frozenset((*range(61, 66), 71, 81, 82, 83, 91))


def check_char(first17: str) -> str:
    return _CHECK[sum(int(d) * w for d, w in zip(first17, _WEIGHTS, strict=True)) % 11]


def _born(digits: str, today: date) -> bool:
    try:
        born = date(int(digits[:4]), int(digits[4:6]), int(digits[6:8]))
    except ValueError:
        return False
    return date(1900, 1, 1) <= born <= today


def is_national_id(text: str, today: date | None = None) -> bool:
    """`text` is an 18-character resident ID number (see the module docstring)."""
    if len(text) != 18 or not text[:17].isdigit() or text[17] not in "0123456789Xx":
        return False
    if int(text[:2]) not in _PROVINCES or not _born(text[6:14], today or date.today()):
        return False
    return check_char(text[:17]) == text[17].upper()


def national_id_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each resident ID number in `text`, in order."""
    today = date.today()
    return [(m.start(), m.end()) for m in _RUN.finditer(text) if is_national_id(m.group(), today)]
