"""Edit one episode in place (body, tags, verified): the console's curate operations.

The file keeps every byte a person wrote except the fields asked for: front matter goes
through `edit_front_matter` (unknown fields, comments and order kept), the body is replaced
as text with the file's own line endings. Like every rewrite this is a compare-and-swap, and
`expected_hash` (the version the person was shown) turns a concurrent hand edit into a
ConflictError instead of a silent overwrite.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from vault.errors import BadRequestError
from vault.files.safewrite import ConflictError, rewrite
from vault.format.episodes import edit_front_matter, parse_episode, split_front_matter
from vault.format.model import SOURCES, Episode
from vault.format.redact_forms import redact_name
from vault.format.yamlio import decode
from vault.layout.keys import ScopeId
from vault.layout.store import StoredEpisode
from vault.writes.episode_create import MAX_EPISODE_CHARS, unique_tags
from vault.writes.operations import Vault
from vault.writes.redact_write import scrub, scrub_all

# What `fields` may change (the rest has its own parameter or is MemVault's own).
FIELD_NAMES = frozenset({"category", "key", "priority", "confidence", "expires_at"})


def clean_content(content: str) -> str:
    body = (content or "").replace("\r\n", "\n").replace("\r", "\n").strip()
    if not body:
        raise BadRequestError("content is empty: write the memory's text (or delete the memory)")
    body = scrub(body).strip()  # no secret reaches a file (vault.redaction.redact)
    if len(body) > MAX_EPISODE_CHARS:
        raise BadRequestError(
            f"content is {len(body)} characters: keep one memory under {MAX_EPISODE_CHARS}"
        )
    return body


def clean_tags(tags: Sequence[str]) -> tuple[str, ...]:
    if isinstance(tags, str) or not all(isinstance(t, str) for t in tags):
        raise BadRequestError('tags must be a list of strings, e.g. ["travel", "family"]')
    out = unique_tags(scrub_all(list(tags)))
    if any(len(t) > 64 or "\n" in t for t in out):
        raise BadRequestError("a tag is one line of at most 64 characters")
    return out


def replace_body(data: bytes, body: str, *, current: Episode) -> bytes:
    """The file with its body replaced; front matter (pinned id/created_at) kept as it was."""
    pinned = edit_front_matter(data, {}, current=current)
    text, bom = decode(pinned)
    parts = split_front_matter(text)
    newline = "\r\n" if parts.head.endswith("\r\n") else "\n"
    lead = parts.body[: len(parts.body) - len(parts.body.lstrip("\r\n"))] or newline
    new_text = parts.head + (parts.yaml or "") + parts.close + lead
    new_text += body.replace("\n", newline) + newline
    parse_episode(new_text, rel_path="", mtime=current.created_at.timestamp())
    return (b"\xef\xbb\xbf" if bom else b"") + new_text.encode("utf-8")


def edit_episode(
    vault: Vault,
    scope: ScopeId,
    episode_id: str,
    *,
    expected_hash: str | None,
    content: str | None = None,
    tags: Sequence[str] | None = None,
    verified: bool | None = None,
    source: str = "console",
    query_id: int | str | None = None,
    fields: Mapping[str, object] | None = None,
) -> StoredEpisode:
    """Change the body, the tags, `verified` and/or `fields` (vault.format.field_input.parse_edit:
    category, key, priority, confidence, expires_at, checked) of one episode of this scope."""
    if source not in SOURCES:
        raise BadRequestError(f"source must be one of {', '.join(SOURCES)}")
    body = clean_content(content) if content is not None else None
    new_tags = clean_tags(tags) if tags is not None else None
    with vault.lock.hold():
        stored = vault.find_episode(scope, episode_id)
        if expected_hash is not None and stored.sha != expected_hash:
            raise ConflictError(
                f"{stored.rel} changed on disk since you opened it: reload it and apply your "
                "change again"
            )
        ep = stored.episode
        changes: dict[str, object] = {}
        if new_tags is not None and new_tags != ep.tags:
            changes["tags"] = list(new_tags)
        if verified is not None and verified != ep.verified:
            changes["verified"] = verified
        for name, value in (fields or {}).items():
            if name == "key" and isinstance(value, str):
                # A key as a name (vault.format.redact_forms), as when it was written: redacted,
                # blind to case, never refused.
                value = redact_name(value).text.strip() or None
            if name not in FIELD_NAMES:
                raise BadRequestError(f"{name} cannot be edited here")
            if value != getattr(ep, name):
                changes[name] = value
        body_changed = body is not None and body != ep.body
        if not changes and not body_changed:
            return stored
        what = ", ".join([*changes, *(["body"] if body_changed else [])])
        name = "verify" if list(changes) == ["verified"] and not body_changed else "edit"
        changes["updated_at"] = vault.stamp()

        def transform(data: bytes) -> bytes:
            out = edit_front_matter(data, changes, current=ep)
            return replace_body(out, body, current=ep) if body_changed and body else out

        with vault.operation(scope, name, source=source, query_id=query_id) as txn:
            rewrite(stored.path, transform, expected_hash=stored.sha)
            txn.written.append(stored.path)
            txn.record(name, "episode", ep.id, f"{what}: {body or ep.body}")
        return vault.find_episode(scope, episode_id)
