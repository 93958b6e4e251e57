"""ProfileEdit: one change to one profile field, as a frozen value built where input arrives.

The plugin's `update_profile` tool, `memvault profile set|add|remove`, the console's
/profile/update, an accepted profile candidate, a consolidation's profile changes, the demo
vault and the hostsuite's seeds each build ONE ProfileEdit; Vault.update_profile and
vault.writes.profile_ops.edit_profile_in take it as it is. Construction refuses what no
profile can take (vault.format.profile_edit.check_edit: the field, the action, a value, the
slot key) and what names no profile (a blank speaker id), with the same messages as the
write itself, each saying what to send instead; it normalises what needs neither the file
nor redaction. What the file decides (a full list, an item to remove that is not there) and
redaction (vault.writes.redact_write) are the write's. Two equal inputs give equal values.

How the write is made is not the edit: `source`, `query_id` and `expected_hash` are keyword
arguments of the operation (vault.writes.profile_ops.update_profile), since an accepted
candidate and a consolidation apply their edits inside an operation of their own.
"""

from __future__ import annotations

from dataclasses import dataclass

from vault.errors import BadRequestError
from vault.format.profile_edit import check_edit
from vault.layout.keys import ScopeId, checked_scope
from vault.layout.store import check_speaker_id

NAME_MAX = 100  # a display name a chat platform sends may be anything: one line, this long


@dataclass(frozen=True)
class ProfileEdit:
    """`action` (set | add | remove) `value` on `field` (name | traits | preferences | notes)
    of the session profile of `scope`, or of speaker `speaker`'s there. `fact_key`: the slot
    of a traits/preferences item (a new value replaces the old one); `previous_value`: the
    slot's value before, kept in its history; `speaker_name`: the display name the caller
    knows for `speaker` (the sender's), written only while the profile has no name
    (vault.writes.profile_ops.name_to_fill)."""

    scope: ScopeId
    field: str
    action: str
    value: str = ""
    speaker: str | None = None  # None (or ""): the session profile
    fact_key: str | None = None
    previous_value: str | None = None
    speaker_name: str | None = None

    def __post_init__(self) -> None:
        checked_scope(self.scope)
        value = _text("value", self.value).strip()  # as apply_edit reads it
        fact_key = self.fact_key
        if fact_key is not None:  # as the plugin's tool always sent it: one line
            fact_key = " ".join(_text("fact_key", fact_key).split())
        check_edit(self.field, self.action, value, fact_key)
        _set(self, "value", value)
        _set(self, "fact_key", fact_key)
        _set(self, "previous_value", _text("previous_value", self.previous_value).strip() or None)
        # "" is the session profile, as it always was; a blank id names no one: refused.
        speaker = _text("speaker id", self.speaker)
        _set(self, "speaker", check_speaker_id(speaker) if speaker else None)
        # Only a speaker profile takes a name from the sender: one line, at most NAME_MAX.
        name = " ".join(_text("speaker_name", self.speaker_name).split())[:NAME_MAX].strip()
        _set(self, "speaker_name", name if name and self.speaker else None)

    def describe(self) -> str:
        """One line saying what the edit does (a consolidation preview lists them)."""
        where = f"speaker {self.speaker}" if self.speaker else "session"
        slot = f" ({self.fact_key})" if self.fact_key else ""
        return f"{self.action} {where} profile {self.field}{slot}: {self.value}"


def _text(name: str, raw: object) -> str:
    """`raw` as text; None is "" (not given)."""
    if raw is None:
        return ""
    if not isinstance(raw, str):
        raise BadRequestError(f"{name} must be text (got {type(raw).__name__})")
    return raw


def _set(value: ProfileEdit, name: str, normalised: object) -> None:
    object.__setattr__(value, name, normalised)  # frozen: only __post_init__ normalises
