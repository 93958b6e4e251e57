"""Profile operations on a vault: apply one vault.writes.profile_edit.ProfileEdit (imports are
vault.transfer.transfer_profiles)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ruamel.yaml.comments import CommentedMap

from templates import read_template
from vault.errors import BadRequestError, Internal
from vault.files.safewrite import ConflictError, create_new, rewrite
from vault.format.model import FormatError, Profile
from vault.format.profile_edit import apply_edit
from vault.format.profiles import parse_profile
from vault.format.redact_forms import redact_name
from vault.format.yamledit import rt_edit
from vault.format.yamlio import decode
from vault.writes.profile_edit import ProfileEdit
from vault.writes.redact_write import scrub_profile_value

if TYPE_CHECKING:
    from pathlib import Path

    from vault.writes.core import VaultCore
    from vault.writes.transaction import Txn

BOM = b"\xef\xbb\xbf"


def edit_profile_bytes(data: bytes, edit: Callable[[CommentedMap], None], rel: str) -> bytes:
    """Apply `edit(doc)` to a profile file's bytes; only the lines it changes are rewritten,
    and the BOM, line endings and comments stay as the person left them."""
    try:
        text, bom = decode(data)
        newline = "\r\n" if "\r\n" in text else "\n"
        result = rt_edit(text, edit, newline=newline)
        # Never write a profile we could not read back ourselves.
        parse_profile(result, rel_path=rel)
    except FormatError as exc:
        raise BadRequestError(f"{rel}:{exc.line}: {exc.message}: fix it, then retry") from exc
    return (BOM if bom else b"") + result.encode("utf-8")


def update_profile(
    vault: VaultCore,
    edit: ProfileEdit,
    *,
    source: str = "agent",
    query_id: int | str | None = None,
    expected_hash: str | None = None,
) -> Profile:
    """Apply `edit` in one operation of its own; returns the profile as it is now.
    `expected_hash`: the sha of the file the caller showed (None: no check)."""
    with vault.operation(edit.scope, "update_profile", source=source, query_id=query_id) as txn:
        edit_profile_in(vault, txn, edit, expected_hash=expected_hash)
    return vault.read_profile(edit.scope, edit.speaker)


def update_seen_profile(
    vault: VaultCore,
    edit: ProfileEdit,
    *,
    seen_hash: str | None,
    source: str,
    query_id: int | str | None = None,
) -> Profile:
    """update_profile for a person who was shown the file at `seen_hash` (None: there was no
    file): the console's /profile/update and `!memory profile edit`. A file created, deleted
    or changed since is a ConflictError and nothing is written; update_profile alone would
    write over a file created meanwhile, as it has no version to compare."""
    path = vault.profile_path(edit.scope, edit.speaker)
    rel = vault.layout.rel(path)
    with vault.lock.hold():
        exists = path.exists()
        if seen_hash is None and exists:
            raise ConflictError(
                f"{rel} was created since you opened it: reload and apply your change again"
            )
        if seen_hash is not None and not exists:
            raise ConflictError(f"{rel} was deleted since you opened it: reload first")
        return update_profile(
            vault, edit, source=source, query_id=query_id, expected_hash=seen_hash
        )


def name_to_fill(doc: CommentedMap, field: str, speaker_name: str | None) -> str | None:
    """The name a speaker profile gets as a side effect of another edit: `speaker_name`
    (one line, at most NAME_MAX characters: vault.writes.profile_edit), only while the file's
    `name:` is empty (FORMAT 3: blank is not given). A name a person or an earlier call
    wrote is never replaced, and an edit of `name` itself (set, or remove = clear it) is
    left as asked. A name that holds a secret is not written (vault.redaction.redact)."""
    current = doc.get("name")
    empty = current is None or (isinstance(current, str) and not current.strip())
    if field == "name" or not empty or not speaker_name:
        return None
    if redact_name(speaker_name).changed:
        return None
    return speaker_name


def edit_profile_in(
    vault: VaultCore, txn: Txn, edit: ProfileEdit, *, expected_hash: str | None = None
) -> None:
    """The profile edit of update_profile inside an operation that may write more files
    (accepting a candidate: the profile and the candidate file, in one commit)."""
    scope = txn.scope
    if edit.scope != scope:
        raise Internal(
            f"a profile edit of {edit.scope.session_key} was applied in an operation on "
            f"{scope.session_key}: nothing was written; please report this with the log"
        )
    field, action, speaker = edit.field, edit.action, edit.speaker
    # No secret reaches the file or the audit line (vault.writes.redact_write).
    value, previous_value, fact_key = scrub_profile_value(
        action, edit.value, edit.fact_key, edit.previous_value, name=field == "name"
    )
    path = vault.profile_path(scope, speaker)
    rel = vault.layout.rel(path)

    filled: list[str] = []

    def change(doc: CommentedMap) -> None:
        now = vault.clock()
        apply_edit(
            doc,
            field,
            action,
            value,
            now=now,
            fact_key=fact_key,
            previous_value=previous_value,
            limits=vault.profile_limits,
        )
        name = name_to_fill(doc, field, edit.speaker_name) if speaker else None
        filled[:] = [name] if name else []
        if name:
            apply_edit(doc, "name", "set", name, now=now)

    target = "speaker_profile" if speaker else "session_profile"
    target_id = f"{scope.session_key}:{speaker}" if speaker else scope.session_key
    slot = f" ({fact_key})" if fact_key else ""
    summary = f"{action} {'speaker' if speaker else 'session'} profile {field}{slot}: {value}"
    _write_profile(path, rel, lambda data: edit_profile_bytes(data, change, rel), expected_hash)
    txn.written.append(path)
    if filled:  # the audit line says it, as the file does: `name:` was written too
        summary += f"; name {filled[0]} (the speaker's, the name was empty)"
    txn.record("update_profile", target, target_id, summary)


def _write_profile(path: Path, rel: str, transform: Any, expected_hash: str | None) -> None:
    if not path.exists():
        fresh = transform(read_template("profile.yaml").encode("utf-8"))
        if create_new(path, fresh):
            return
    rewrite(path, transform, expected_hash=expected_hash)
