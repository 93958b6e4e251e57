"""Profile operations on a vault: edit one field (imports are vault.transfer_profiles)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ruamel.yaml.comments import CommentedMap

from templates import read_template
from vault.keys import ScopeId
from vault.model import FormatError, Profile
from vault.profile_edit import apply_edit
from vault.profiles import parse_profile
from vault.redact_write import scrub_profile_value
from vault.safewrite import create_new, rewrite
from vault.store import BadRequestError
from vault.yamledit import rt_edit
from vault.yamlio import decode

if TYPE_CHECKING:
    from pathlib import Path

    from vault.operations import Vault
    from vault.transaction import Txn

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
    vault: Vault,
    scope: ScopeId,
    field: str,
    action: str,
    value: str,
    *,
    speaker: str | None = None,
    fact_key: str | None = None,
    previous_value: str | None = None,
    source: str = "agent",
    query_id: int | str | None = None,
    expected_hash: str | None = None,
) -> Profile:
    with vault.operation(scope, "update_profile", source=source, query_id=query_id) as txn:
        edit_profile_in(
            vault,
            txn,
            field,
            action,
            value,
            speaker=speaker,
            fact_key=fact_key,
            previous_value=previous_value,
            expected_hash=expected_hash,
        )
    return vault.read_profile(scope, speaker)


def edit_profile_in(
    vault: Vault,
    txn: Txn,
    field: str,
    action: str,
    value: str,
    *,
    speaker: str | None = None,
    fact_key: str | None = None,
    previous_value: str | None = None,
    expected_hash: str | None = None,
) -> None:
    """The profile edit of update_profile inside an operation that may write more files
    (accepting a candidate: the profile and the candidate file, in one commit)."""
    scope = txn.scope
    # No secret reaches the file or the audit line (vault.redact_write).
    value, previous_value = scrub_profile_value(action, value, fact_key, previous_value)
    path = vault.profile_path(scope, speaker)
    rel = vault.layout.rel(path)

    def edit(doc: CommentedMap) -> None:
        apply_edit(
            doc,
            field,
            action,
            value,
            now=vault.clock(),
            fact_key=fact_key,
            previous_value=previous_value,
            limits=vault.profile_limits,
        )

    target = "speaker_profile" if speaker else "session_profile"
    target_id = f"{scope.session_key}:{speaker}" if speaker else scope.session_key
    slot = f" ({fact_key})" if fact_key else ""
    summary = f"{action} {'speaker' if speaker else 'session'} profile {field}{slot}: {value}"
    _write_profile(path, rel, lambda data: edit_profile_bytes(data, edit, rel), expected_hash)
    txn.written.append(path)
    txn.record("update_profile", target, target_id, summary)


def _write_profile(path: Path, rel: str, transform: Any, expected_hash: str | None) -> None:
    if not path.exists():
        fresh = transform(read_template("profile.yaml").encode("utf-8"))
        if create_new(path, fresh):
            return
    rewrite(path, transform, expected_hash=expected_hash)
