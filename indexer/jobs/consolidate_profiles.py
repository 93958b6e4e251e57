"""The model's suggested profile updates, read as hostile input and tried out in memory.

Each suggestion must name a field, an action and a profile the consolidated memories are
about (the session, or a speaker who said one of them: never any other file), and must
apply cleanly, in order, to the profile as it is now (vault.format.profile_edit rules, e.g. a
full list). What fails is dropped with the reason, shown in the preview; nothing is written.
"""

from __future__ import annotations

from typing import Any

from templates import read_template
from vault.errors import BadRequestError
from vault.format.model import FormatError
from vault.format.profile_edit import ACTIONS, FIELDS, apply_edit
from vault.layout.keys import ScopeId
from vault.layout.links import read_vault_file
from vault.layout.names import UnsafeNameError
from vault.writes.operations import Vault
from vault.writes.profile_edit import ProfileEdit
from vault.writes.profile_ops import edit_profile_bytes
from vault.writes.redact_write import scrub_profile_value

MAX_VALUE_CHARS = 500
MAX_SUGGESTIONS = 20


def check_profile_edits(
    vault: Vault, scope: ScopeId, suggested: list[Any], speakers: set[str]
) -> tuple[tuple[ProfileEdit, ...], tuple[str, ...]]:
    """(usable edits in order, one line per dropped suggestion saying why)."""
    edits: list[ProfileEdit] = []
    dropped: list[str] = []
    files: dict[str | None, bytes] = {}
    for number, raw in enumerate(suggested[:MAX_SUGGESTIONS], 1):
        try:
            edit = _parse(raw, scope, speakers)
            files[edit.speaker] = _try(vault, edit, files)
        except (BadRequestError, UnsafeNameError, FormatError) as exc:
            dropped.append(f"profile update {number}: {exc}")
            continue
        edits.append(edit)
    if len(suggested) > MAX_SUGGESTIONS:
        dropped.append(f"{len(suggested) - MAX_SUGGESTIONS} more profile updates: too many")
    return tuple(edits), tuple(dropped)


def _parse(raw: Any, scope: ScopeId, speakers: set[str]) -> ProfileEdit:
    if not isinstance(raw, dict):
        raise BadRequestError("not a {field, action, value} object")
    profile, field, action = raw.get("profile"), raw.get("field"), raw.get("action")
    value, key, speaker = raw.get("value", ""), raw.get("key"), raw.get("speaker")
    if profile not in ("session", "speaker"):
        raise BadRequestError(f"profile must be session or speaker (got {str(profile)[:40]!r})")
    if field not in FIELDS or action not in ACTIONS:
        raise BadRequestError(f"unknown field/action {str(field)[:40]!r}/{str(action)[:40]!r}")
    if not isinstance(value, str) or len(value) > MAX_VALUE_CHARS:
        raise BadRequestError(f"value must be a text of at most {MAX_VALUE_CHARS} characters")
    if key is not None and (not isinstance(key, str) or not key.strip()):
        key = None
    # As the write will store it (vault.writes.redact_write), so the preview shows what is
    # written.
    value, _, key = scrub_profile_value(action, value.strip(), key, None, name=field == "name")
    if profile == "speaker":
        if not isinstance(speaker, str) or speaker.strip() not in speakers:
            raise BadRequestError(
                f"speaker {str(speaker)[:40]!r} said none of the consolidated memories"
            )
        return ProfileEdit(scope, field, action, value, speaker.strip(), key)
    return ProfileEdit(scope, field, action, value, None, key)


def _try(vault: Vault, edit: ProfileEdit, files: dict[str | None, bytes]) -> bytes:
    """The profile's bytes after `edit` (in memory), after the earlier edits of that file."""
    rel = vault.layout.rel(vault.profile_path(edit.scope, edit.speaker))
    data = files.get(edit.speaker)
    if data is None:
        try:
            data = read_vault_file(vault.root, rel)[0]
        except (FileNotFoundError, NotADirectoryError):
            data = read_template("profile.yaml").encode("utf-8")  # as the write would start

    def change(doc: Any) -> None:
        apply_edit(
            doc,
            edit.field,
            edit.action,
            edit.value,
            now=vault.clock(),
            fact_key=edit.fact_key,
            limits=vault.profile_limits,
        )

    return edit_profile_bytes(data, change, rel)
