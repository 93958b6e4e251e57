"""Turning an uploaded knowledge-base file into episodes: decode it, pick its scope (see
knowledge_store's docstring), split text into pieces that fit the injection budget, and
import JSON exports through the vault's own import."""

from __future__ import annotations

import json
import re
from typing import Any

from vault.errors import BadInput, BadRequestError
from vault.format.episodes import parse_episode
from vault.format.jsonin import load_json
from vault.format.model import FormatError
from vault.layout.keys import ScopeId
from vault.transfer.exchange import import_payload
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

from . import knowledge_store as ks

PIECE_CHARS = 1500  # one uploaded-text episode: fits the injection budget next to others
TEXT_SUFFIXES = (".md", ".markdown", ".txt", ".text")
_HEADING = re.compile(r"^#{1,3}\s+\S")


class UnsupportedFile(BadInput, ValueError):
    pass


def is_json(filename: str, mime: str, text: str) -> bool:
    if filename.lower().endswith(".json") or "json" in (mime or "").lower():
        return True
    return not filename.lower().endswith(TEXT_SUFFIXES) and text.lstrip()[:1] in ("{", "[")


def decode_upload(data: bytes, filename: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnsupportedFile(
            f"{filename} is not UTF-8 text: upload a JSON export, Markdown or text file "
            "(or add a parser plugin for this file type)"
        ) from exc


def split_text(text: str, limit: int = PIECE_CHARS) -> list[str]:
    """Markdown/text -> episode bodies: one per heading section (levels 1-3), long sections
    cut at paragraph boundaries into pieces of at most `limit` characters; a piece that
    continues a section repeats the section's heading so it still says what it is about."""
    sections: list[list[str]] = [[]]
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if _HEADING.match(line) and any(s.strip() for s in sections[-1]):
            sections.append([])
        sections[-1].append(line)
    pieces: list[str] = []
    for lines in sections:
        section = "\n".join(lines).strip()
        if not section:
            continue
        heading = lines[0].strip() if _HEADING.match(lines[0]) else ""
        pieces.extend(_pack(section, heading, limit))
    return pieces


def _pack(section: str, heading: str, limit: int) -> list[str]:
    if len(section) <= limit:
        return [section]
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", section) if p.strip()]
    out: list[str] = []
    current = ""
    for para in paragraphs:
        for part in _hard_split(para, limit - len(heading) - 2):
            joined = f"{current}\n\n{part}" if current else part
            if len(joined) <= limit:
                current = joined
                continue
            out.append(current)
            current = f"{heading}\n\n{part}" if heading and part != heading else part
    if current:
        out.append(current)
    return out


def _hard_split(text: str, limit: int) -> list[str]:
    limit = max(limit, 200)
    parts: list[str] = []
    while len(text) > limit:
        cut = max(text.rfind(". ", 0, limit), text.rfind("。", 0, limit), text.rfind(" ", 0, limit))
        cut = cut + 1 if cut > limit // 2 else limit
        parts.append(text[:cut].strip())
        text = text[cut:].strip()
    if text:
        parts.append(text)
    return parts


def import_text(
    vault: Vault, scope: ScopeId, text: str, *, filename: str, doc_id: str
) -> list[str]:
    """A Markdown/text upload as episodes of `scope`, in one operation (one commit).

    A MemVault episode file (front matter + body) keeps its metadata; any other text is
    split by `split_text`. Returns the new episode ids."""
    stripped = text.lstrip("\ufeff")
    episodes = []
    if stripped.startswith("---"):
        try:
            # An upload has no file time of its own: a front matter without created_at
            # means "now", as a hand-written file is dated by its modification time
            # (docs/FORMAT.md), never 1970, which consolidation would take as ancient.
            ep = parse_episode(stripped, rel_path=filename, mtime=vault.clock().timestamp())
        except FormatError:
            ep = None
        if ep is not None:
            episodes.append(
                vault.new_episode(
                    NewEpisode(
                        scope,
                        ep.body,
                        ep.speaker,
                        ep.tags,
                        ep.importance,
                        ep.key,
                        ep.category,
                        "import",
                        created_at=ep.created_at,
                        status=ep.status,
                    )
                )
            )
    if not episodes:
        for piece in split_text(stripped):
            episodes.append(
                vault.new_episode(NewEpisode(scope, piece, tags=("imported",), source="import"))
            )
    ids: list[str] = []
    if not episodes:
        return ids
    with vault.operation(scope, "import", source="import") as txn:
        for episode in episodes:
            ids.append(vault.add_episode(txn, episode).id)
        txn.record(
            "import", "document", doc_id, f"Imported {len(ids)} L2 episode(s) from {filename}"
        )
    return ids


def import_json(vault: Vault, scope: ScopeId, payload: Any) -> list[str]:
    return list(import_payload(vault, scope, payload, source="import")["ids"])


def has_items(payload: Any) -> bool:
    """Anything to import? (An empty export completes with 0 and writes nothing.)"""
    if isinstance(payload, dict):
        return bool(payload.get("episodes")) or bool(payload.get("profiles"))
    return bool(payload) if isinstance(payload, list) else True


def payload_scope(payload: Any, isolation: str) -> ScopeId | None:
    """The chat a JSON export came from (its `scope_key`), in this plugin's isolation."""
    if isinstance(payload, dict) and isinstance(payload.get("scope_key"), str):
        key = payload["scope_key"].strip()
        if key:
            return ks.parse_session_key(key, isolation)
    return None


def ingest_document(
    vault: Vault,
    isolation: str,
    kb_id: str,
    doc_id: str,
    filename: str,
    mime_type: str,
    text: str,
    settings: dict[str, Any],
) -> tuple[ScopeId, str, list[str]]:
    """Write one uploaded document's episodes (replacing a previous run of the same doc)."""
    docs = ks.DocumentMap(vault.root, kb_id)
    previous = docs.get(doc_id)
    if previous is not None:  # the host re-ran this document: replace, never duplicate
        ks.delete_episodes(vault, previous)
        docs.pop(doc_id)
    payload: Any = None
    if is_json(filename, mime_type, text):
        try:
            payload = load_json(text, filename)
        except json.JSONDecodeError as exc:
            raise BadRequestError(f"Invalid JSON format: {exc}") from exc
        if isinstance(payload, dict) and "episodes" not in payload and "content" in payload:
            payload = [payload]  # one episode object, as upstream accepts
    form_scope = str(settings.get("import_scope") or "").strip()
    if form_scope:
        scope, target = ks.parse_session_key(form_scope, isolation), "form"
    elif payload is not None and payload_scope(payload, isolation) is not None:
        scope, target = payload_scope(payload, isolation), "payload"  # type: ignore[assignment]
    else:
        scope, target = ks.library_scope(kb_id), "library"
    if payload is not None:
        ids = import_json(vault, scope, payload) if has_items(payload) else []
    else:
        ids = import_text(vault, scope, text, filename=filename, doc_id=doc_id)
    docs.put(ks.Document(doc_id, filename, scope, target, tuple(ids), ks.now_iso()))
    return scope, target, ids
