"""Exported L1 profiles read into checked Profiles, and written where none exists yet.

Everything `profile_json` exports comes back: name, traits, preferences, notes, updated_at,
the slot history and unknown fields (`extra`), each as the profile reader gives it back,
redacted like every write. A profile file that already exists is never merged over (it may
hold a person's comments); it is counted as skipped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

from vault.errors import BadRequestError
from vault.files.safewrite import create_new
from vault.format.model import (
    DEFAULT_PROFILE_LIMITS,
    PROFILE_MAX_NOTES,
    FormatError,
    HistoryEntry,
    Profile,
    ProfileLimits,
)
from vault.format.profiles import PROFILE_FIELDS, parse_profile, render_profile
from vault.format.redact_forms import redact_name
from vault.format.yamlio import parse_datetime
from vault.redaction.redact import redact
from vault.transfer.ltm_profiles import is_ltm_profile, ltm_profile
from vault.transfer.transfer_items import Fail, as_yaml, json_ident, json_text, json_texts
from vault.writes.redact_write import scrub_all

if TYPE_CHECKING:
    from vault.layout.keys import ScopeId
    from vault.writes.operations import Vault
    from vault.writes.transaction import Txn


@dataclass(frozen=True)
class ProfileImport:
    speaker: str | None  # None: the session's profile
    profile: Profile  # as the reader reads it back; may be empty (then nothing is written)


def _failer(what: str) -> Fail:
    def fail(message: str) -> NoReturn:
        raise BadRequestError(f"{what}: {message}")

    return fail


def _text(value: Any, name: str = "", what: str = "") -> str:
    given = json_text(value, name, _failer(what))
    return redact(given).text if given else ""


def _name(value: Any, name: str = "", what: str = "") -> str:
    """A name or a key (vault.format.redact_forms): redacted blind to case."""
    given = json_text(value, name, _failer(what))
    return redact_name(given).text if given else ""


def _when(value: Any, what: str, name: str = "updated_at") -> Any:
    given = json_text(value, name, _failer(what))
    if not given:
        return None
    try:
        return parse_datetime(given)
    except ValueError:
        raise BadRequestError(
            f"{what}: invalid date {str(value)[:40]!r}; use ISO-8601 such as 2026-03-14T00:00:00Z"
        ) from None


def _history(raw: Any, what: str) -> tuple[HistoryEntry, ...]:
    if raw in (None, []):
        return ()
    if not isinstance(raw, list) or not all(isinstance(h, dict) for h in raw):
        raise BadRequestError(f"{what}: history must be a list of {{key, value, until}} objects")
    entries = []
    where = f"{what}: history"
    for h in raw:
        until = _when(h.get("until"), where, "until")
        key, value = _name(h.get("key"), "key", where), _text(h.get("value"), "value", where)
        if not key or not value or until is None:
            raise BadRequestError(f"{what}: each history entry needs key, value and until")
        entries.append(HistoryEntry(key, value, until, _text(h.get("reason"), "reason", where)))
    return tuple(entries)


def _extra(raw: Any, what: str) -> tuple[tuple[str, Any], ...]:
    if raw in (None, {}):
        return ()
    if not isinstance(raw, dict):
        raise BadRequestError(f"{what}: extra must be an object of field: value pairs")
    clash = [k for k in raw if k in PROFILE_FIELDS or not str(k).strip()]
    if clash:
        raise BadRequestError(f"{what}: extra field {clash[0]!r} is a known (or blank) field name")
    try:
        return tuple((_name(k), as_yaml(v)) for k, v in raw.items())
    except FormatError as exc:  # e.g. nested deeper than a profile file may be
        raise BadRequestError(f"{what}: extra: {exc.message}") from None


def _profile(
    raw: dict[str, Any], what: str, limits: ProfileLimits = DEFAULT_PROFILE_LIMITS
) -> Profile:
    fail = _failer(what)
    if is_ltm_profile(raw):  # LongTermMemory's own shape (slots beside plain items)
        raw = ltm_profile(raw)
    elif unknown := {k: v for k, v in raw.items() if k not in PROFILE_FIELDS and k != "extra"}:
        given_extra = raw.get("extra")  # a field MemVault does not know is kept, never dropped
        if given_extra in (None, {}) or isinstance(given_extra, dict):
            raw = raw | {"extra": unknown | (given_extra or {})}
    traits = json_texts(raw.get("traits"), "traits", fail)
    preferences = json_texts(raw.get("preferences"), "preferences", fail)
    given = Profile(
        name=_name(raw.get("name"), "name", what) or None,
        traits=tuple(scrub_all(traits))[: limits.traits],
        preferences=tuple(scrub_all(preferences))[: limits.preferences],
        notes=_text(raw.get("notes"), "notes", what)[:PROFILE_MAX_NOTES] or None,
        updated_at=_when(raw.get("updated_at"), what),
        history=_history(raw.get("history"), what),
        extra=_extra(raw.get("extra"), what),
    )
    # As the reader reads it back (blank items dropped, text stripped): what is written is
    # exactly what is read, and a profile of blanks is not written at all.
    try:
        return parse_profile(render_profile(given), rel_path="")
    except (ValueError, FormatError) as exc:
        raise BadRequestError(f"{what} cannot be saved: {exc}") from exc


def parse_profiles(
    vault: Vault, scope: ScopeId, entries: list[Any], *, first: int = 1
) -> list[ProfileImport]:
    """Every importable entry (numbered from `first` in messages), checked before anything
    is written: a speaker id that can have no file is refused (UnsafeNameError), even for a
    blank profile."""
    found: list[ProfileImport] = []
    for number, entry in enumerate(entries, start=first):
        if not isinstance(entry, dict) or not isinstance(entry.get("profile"), dict):
            continue  # not a profile entry (upstream skips those too)
        fail = _failer(f"profile {number}")
        sender = (json_ident(entry.get("sender_id"), "sender_id", fail) or "").strip()
        if entry.get("type") == "speaker" and not sender:
            continue  # a blank sender is "unknown": nothing to file it under
        speaker = sender if entry.get("type") == "speaker" else None
        vault.profile_path(scope, speaker)
        given = _profile(entry["profile"], f"profile {number}", vault.profile_limits)
        found.append(ProfileImport(speaker, given))
    return found


def write_profiles(vault: Vault, txn: Txn, profiles: list[ProfileImport]) -> tuple[int, int]:
    """(written, skipped): each into a file that does not exist yet, never over one."""
    written = skipped = 0
    for item in profiles:
        if item.profile == Profile():
            continue  # nothing at all (a profile of only unknown fields is still kept)
        path = vault.profile_path(txn.scope, item.speaker)
        if not create_new(path, render_profile(item.profile).encode("utf-8")):
            skipped += 1
            continue
        txn.written.append(path)
        kind = "speaker_profile" if item.speaker else "session_profile"
        target = item.speaker or txn.scope.session_key
        txn.record("import_profile", kind, target, "imported profile")
        written += 1
    return written, skipped
