"""Profile operations on a vault: edit one field, or import profiles from an export."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ruamel.yaml.comments import CommentedMap

from templates import read_template
from vault.keys import ScopeId
from vault.model import FormatError, Profile
from vault.profile_edit import apply_edit
from vault.profiles import parse_profile, render_profile
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
        )

    target = "speaker_profile" if speaker else "session_profile"
    target_id = f"{scope.session_key}:{speaker}" if speaker else scope.session_key
    slot = f" ({fact_key})" if fact_key else ""
    summary = f"{action} {'speaker' if speaker else 'session'} profile {field}{slot}: {value}"
    with vault.operation(scope, "update_profile", source=source, query_id=query_id) as txn:
        _write_profile(path, rel, lambda data: edit_profile_bytes(data, edit, rel), expected_hash)
        txn.written.append(path)
        txn.record("update_profile", target, target_id, summary)
    return vault.read_profile(scope, speaker)


def _write_profile(path: Path, rel: str, transform: Any, expected_hash: str | None) -> None:
    if not path.exists():
        fresh = transform(read_template("profile.yaml").encode("utf-8"))
        if create_new(path, fresh):
            return
    rewrite(path, transform, expected_hash=expected_hash)


def _profile_targets(profiles: list[Any]) -> list[tuple[dict[str, Any], str | None]]:
    """(entry, speaker id or None for the session) of each importable profile entry."""
    targets: list[tuple[dict[str, Any], str | None]] = []
    for entry in profiles:
        if not isinstance(entry, dict) or not isinstance(entry.get("profile"), dict):
            continue
        sender = str(entry.get("sender_id") or "").strip()  # as the parser reads ids back
        speaker = sender if entry.get("type") == "speaker" else None
        if entry.get("type") == "speaker" and not speaker:
            continue
        targets.append((entry, speaker))
    return targets


def check_profile_targets(vault: Vault, scope: ScopeId, profiles: list[Any]) -> None:
    """Refuse (UnsafeNameError) a speaker id that can have no file, before anything is
    written: an import is validated whole, even a profile that would turn out blank."""
    for _, speaker in _profile_targets(profiles):
        vault.profile_path(scope, speaker)


def import_profile(vault: Vault, txn: Txn, profiles: list[Any]) -> bool:
    """Write exported profiles whose file does not exist here yet; never merge over one."""
    wrote = False
    for entry, speaker in _profile_targets(profiles):
        raw = entry["profile"]
        given = Profile(
            name=str(raw.get("name") or "") or None,
            traits=tuple(str(t) for t in raw.get("traits") or ())[:20],
            preferences=tuple(str(p) for p in raw.get("preferences") or ())[:10],
            notes=str(raw.get("notes") or "")[:2000] or None,
        )
        # As the parser reads it back (blank items and names dropped, text stripped): what
        # is written is exactly what is read, and a profile of blanks is not written at all.
        profile = parse_profile(render_profile(given), rel_path="")
        if profile.is_empty():
            continue
        path = vault.profile_path(txn.scope, speaker or None)
        # Only into a file that does not exist yet: an existing one may hold comments.
        if not create_new(path, render_profile(profile).encode("utf-8")):
            continue
        txn.written.append(path)
        kind = "speaker_profile" if speaker else "session_profile"
        txn.record("import_profile", kind, speaker or txn.scope.session_key, "imported profile")
        wrote = True
    return wrote
