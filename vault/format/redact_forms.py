"""vault.redaction.redact for the other forms a text is stored or sent in: names and keys, and data.

A name or a key (a speaker's display name, a tag, a memory's or a profile slot's key, an
uploaded file's name) is short, and is often stored or compared folded: a slot key is
lower-cased on its way into the YAML, a tag's match key is NFKC + casefold in the index. A
secret must not survive that folding, so such a text is judged with the format rules read
blind to case ("AKIAIOSFODNN7EXAMPLE" lower-cased is still the AWS key it was) and as NFKC
folds it. Data (a prompt's JSON, a snapshot) is redacted string by string before it
is serialised, so a placeholder never breaks the quoting around it.
"""

from __future__ import annotations

import unicodedata
from dataclasses import replace
from typing import Any

from vault.format.model import Episode, Speaker
from vault.format.tags import normalise_tags
from vault.redaction.redact import Redaction, redact


def redact_name(text: str) -> Redaction:
    """A name or key redacted with the rules blind to case (it may be stored lower-cased),
    and once more as NFKC folds it (full-width letters compare as ASCII ones: vault.format.tags).
    When only the NFKC form holds a secret, that form is what is kept, secret replaced."""
    red = redact(text, folded=True)
    wide = unicodedata.normalize("NFKC", red.text)
    if wide == red.text:
        return red
    again = redact(wide, folded=True)
    if not again.changed:
        return red
    return Redaction(again.text, tuple(dict.fromkeys((*red.kinds, *again.kinds))))


def redacted_name(text: str | None) -> str | None:
    """`text` as redact_name keeps it; None and "" as given."""
    return redact_name(text).text if text else text


NAME_CHARS = 100  # a one-line string this short in data is a name, a tag, a key or an id


def redact_data(value: Any) -> Any:
    """A copy of JSON-like `value` with every string in it redacted: a short one-line string
    (a speaker's name, a tag, a key; mapping keys too) as a name, any other as text."""
    if isinstance(value, str):
        short = len(value) <= NAME_CHARS and "\n" not in value
        return (redact_name(value) if short else redact(value)).text
    if isinstance(value, list | tuple):
        return [redact_data(v) for v in value]
    if isinstance(value, dict):
        return {
            (redact_name(k).text if isinstance(k, str) else k): redact_data(v)
            for k, v in value.items()
        }
    return value


def episode_as_sent(episode: Episode) -> Episode:
    """The episode with its body, tags and speaker name redacted: what the index keeps of a
    file (a person's hand-written one too), so recall and injection send no secret."""
    speaker = episode.speaker
    if speaker is not None and speaker.name:
        speaker = Speaker(speaker.id, redacted_name(speaker.name))
    tags = normalise_tags(redact_name(t).text for t in episode.tags)
    return replace(episode, body=redact(episode.body).text, speaker=speaker, tags=tags)
