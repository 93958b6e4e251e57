"""Card numbers for vault.redaction.redact: 13-19 digits, grouped by single spaces or dashes, that
pass the Luhn check and start like a card (so phone numbers, dates and most ids do not).

Digits grouped like a date or a phone number are never a card. A run of digit groups is
split into windows of whole groups: a card written next to other
numbers ("4111 1111 1111 1111 101") is found without swallowing them, and the usual
groupings (4-4-4-4, Amex 4-6-5, 4-4-4-4-3) win over any other reading of the same digits.
"""

from __future__ import annotations

import re

_RUN = re.compile(r"(?<![\d+])(?<!\d[ -])\d+(?:[ -]\d+)*")
_GROUP = re.compile(r"\d+")
# Usual groupings, best first: 4-4-4-4 before the 19-digit 4-4-4-4-3, so a 16-digit card
# followed by a short number ("... 0002 101") keeps the number.
_RANK = {(4, 4, 4, 4): 0, (4, 6, 5): 1, (4, 6, 4): 2, (4, 4, 4, 4, 3): 3}
_MAX_GROUPS = 8  # a card has at most 5 groups; longer runs are only searched this far


def luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def is_card(digits: str) -> bool:
    # Issuer prefixes (Visa 4, Mastercard 51-55/2221-2720, Amex/Diners/JCB 3, Discover/
    # UnionPay/Maestro 5-6): a Luhn-valid id starting 0, 1, 7, 8 or 9 is not a card.
    if not 13 <= len(digits) <= 19 or not luhn(digits):
        return False
    return digits[0] in "3456" or 2221 <= int(digits[:4]) <= 2720


def _card_shape(shape: tuple[int, ...]) -> bool:
    """One unbroken number, or groups as cards print them: 4 first, 4-6 between, 3-6 last
    (dates, times and phone numbers have groups of 2 or 3 digits, or 3 first)."""
    if len(shape) == 1:
        return True
    first, *middle, last = shape
    return first == 4 and all(4 <= g <= 6 for g in middle) and 3 <= last <= 6


def card_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each card number in `text`, in order, never overlapping."""
    spans: list[tuple[int, int]] = []
    for run in _RUN.finditer(text):
        if sum(c.isdigit() for c in run.group()) < 13:
            continue
        groups = [
            (g.start() + run.start(), g.end() + run.start()) for g in _GROUP.finditer(run.group())
        ]
        windows: list[tuple[int, int, int, int]] = []
        for i in range(len(groups)):
            for j in range(i, min(len(groups), i + _MAX_GROUPS)):
                part = groups[i : j + 1]
                digits = "".join(text[a:b] for a, b in part)
                if len(digits) > 19:
                    break
                shape = tuple(b - a for a, b in part)
                if _card_shape(shape) and is_card(digits):
                    rank = _RANK.get(shape, len(_RANK))
                    windows.append((rank, -len(digits), part[0][0], part[-1][1]))
        taken: list[tuple[int, int]] = []
        for _, _, start, end in sorted(windows):
            if all(end <= a or start >= b for a, b in taken):
                taken.append((start, end))
        spans.extend(sorted(taken))
    return spans
