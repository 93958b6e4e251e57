"""What the write paths store when a memory holds a secret (the rules are vault.redaction.redact).

A secret is replaced by `[redacted:<kind>]` and the rest of the memory is kept ("my password
is hunter2" -> "my password is [redacted:password]"): the words around it are often the
memory, and a refusal would lose them. A text that is nothing but a secret ("sk-...") is
refused with a BadRequestError that names the kinds, never the secret: there is nothing
left to remember, and an empty placeholder in a file helps no one.
"""

from __future__ import annotations

import logging

from vault.errors import BadRequestError
from vault.format.redact_forms import redact_name
from vault.redaction.redact import Redaction, only_secret, redact, redact_slot

log = logging.getLogger(__name__)


def refuse_if_only_secret(red: Redaction, what: str) -> None:
    if red.changed and only_secret(red.text):
        raise BadRequestError(
            f"{what} is only a secret ({', '.join(red.kinds)}): MemVault keeps no passwords, "
            "keys, tokens, one-time codes, card or ID numbers, so nothing was written; remember "
            "what it is for instead (e.g. 'the wifi password is on the fridge')"
        )


def scrub(text: str, what: str = "content") -> str:
    """`text` redacted; refused when nothing but a secret is left."""
    red = redact(text)
    refuse_if_only_secret(red, what)
    if red.changed:
        log.info("op=redacted field=content kinds=%s", ",".join(red.kinds))
    return red.text


def scrub_all(items: tuple[str, ...] | list[str]) -> list[str]:
    """Short texts (tags, list items) redacted as names (vault.format.redact_forms: also as they
    are folded for matching), never refused: a tag is not a memory."""
    return [redact_name(item).text if isinstance(item, str) else item for item in items]


def _key(text: str) -> str:
    red = redact_name(text)
    if red.changed:
        log.info("op=redacted what=profile_key kinds=%s", ",".join(red.kinds))
    return red.text


def scrub_profile_value(
    action: str, value: str, fact_key: str | None, previous: str | None, *, name: bool = False
) -> tuple[str, str | None, str | None]:
    """(value, previous value, slot key) to write into a profile field (`name`: the
    profile's name, redacted as a name, blind to case).

    The slot key becomes a YAML key, lower-cased (vault.format.profile_edit.normalise_key): it is
    redacted as a name (vault.format.redact_forms), as written and as folded. A slot is judged
    whole (`wifi_password` + `hunter2`). `remove` without a slot key keeps its value as
    given: it has to match what the file holds (a person may have written a secret there
    by hand); its audit line is still redacted (Txn.record)."""
    if action == "remove" and not fact_key:
        return value, previous, fact_key
    if fact_key:
        fact_key = _key(fact_key)
    else:  # `key: value` in the value is a slot too, lower-cased on the way (split_slot)
        head, sep, rest = value.partition(": ")
        if sep and head.strip() and rest.strip():
            value = f"{_key(head)}{sep}{rest}"
    if name:
        red = redact_name(value)
    else:
        red = redact_slot(fact_key, value) if fact_key else redact(value)
    if action != "remove":
        refuse_if_only_secret(red, "the profile value")
    if red.changed:
        log.info("op=redacted what=profile_value kinds=%s", ",".join(red.kinds))
    if previous:
        previous = (redact_slot(fact_key, previous) if fact_key else redact(previous)).text
    return red.text, previous, fact_key
