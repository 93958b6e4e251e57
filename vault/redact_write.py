"""What the write paths store when a memory holds a secret (the rules are vault.redact).

A secret is replaced by `[redacted:<kind>]` and the rest of the memory is kept ("my password
is hunter2" -> "my password is [redacted:password]"): the words around it are often the
memory, and a refusal would lose them. A text that is nothing but a secret ("sk-...") is
refused with a BadRequestError that names the kinds, never the secret: there is nothing
left to remember, and an empty placeholder in a file helps no one.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from vault.model import Episode
from vault.redact import Redaction, only_secret, redact, redact_slot
from vault.store import BadRequestError
from vault.tags import normalise_tags

log = logging.getLogger(__name__)


def refuse_if_only_secret(red: Redaction, what: str) -> None:
    if red.changed and only_secret(red.text):
        raise BadRequestError(
            f"{what} is only a secret ({', '.join(red.kinds)}): MemVault keeps no passwords, "
            "keys, tokens, one-time codes or card numbers, so nothing was written; remember "
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
    """Short texts (tags, list items) redacted, never refused: a tag is not a memory."""
    return [redact(item).text if isinstance(item, str) else item for item in items]


def scrub_profile_value(
    action: str, value: str, fact_key: str | None, previous: str | None
) -> tuple[str, str | None]:
    """(value, previous value) to write into a profile field.

    A slot is judged whole (`wifi_password` + `hunter2`). `remove` without a slot key keeps
    its value as given: it has to match what the file holds (a person may have written a
    secret there by hand); its audit line is still redacted (Txn.record)."""
    if action == "remove" and not fact_key:
        return value, previous
    red = redact_slot(fact_key, value) if fact_key else redact(value)
    if action != "remove":
        refuse_if_only_secret(red, "the profile value")
    if red.changed:
        log.info("op=redacted what=profile_value kinds=%s", ",".join(red.kinds))
    if previous:
        previous = (redact_slot(fact_key, previous) if fact_key else redact(previous)).text
    return red.text, previous


def redact_episode(episode: Episode) -> Episode:
    """The episode with its body, key and tags redacted (a no-op when they hold no secret):
    the last step before any new episode file is rendered, whoever built the episode."""
    body = redact(episode.body).text
    key = redact(episode.key).text if episode.key else episode.key
    tags = normalise_tags(scrub_all(episode.tags))  # two tags may scrub to one spelling
    if (body, key, tags) == (episode.body, episode.key, episode.tags):
        return episode
    return replace(episode, body=body, key=key, tags=tags)
