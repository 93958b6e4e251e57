"""What the MemVault knowledge engine keeps besides episodes: KB settings, document maps,
and turning uploaded files into episodes.

Where uploaded files go (the KB's import target), first match wins:
1. the KB's `import_scope` creation setting (a session key such as `bot-uuid:group_123`,
   or `group_123` for memory without a bot): an admin's explicit choice;
2. the `scope_key` a JSON export names (MemVault's and LongTermMemory's exports both carry
   it): the memory goes back to the chat it came from, where it is recalled;
3. otherwise the KB's own library scope, `bots/_nobot/sessions/kb_<kb id>/`: reference
   memory of this knowledge base. `retrieve` searches it next to the chat's own scope, so
   every chat whose pipeline uses the KB recalls it (upstream's fixed "imported" key was
   never recalled anywhere).

Each ingest records `document id -> (scope, episode ids)` in
`<vault>/.memvault/knowledge/<kb id>.json`, next to the vault it describes (it survives a
plugin reinstall like the vault does), so `delete_document` removes exactly those files.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from indexer.search import hybrid_search
from vault.episodes import parse_episode
from vault.keys import ScopeId
from vault.layout import STATE_DIR
from vault.model import FormatError
from vault.names import encode_name
from vault.operations import Vault
from vault.safewrite import atomic_write
from vault.store import BadRequestError
from vault.transfer import import_payload

log = logging.getLogger(__name__)

KB_CONFIGS_KEY = "kb_configs"  # plugin storage, upstream's shape: {kb_id: creation settings}
LIBRARY_PREFIX = "kb_"
SESSION_PREFIXES = ("group_", "person_")
PIECE_CHARS = 1500  # one uploaded-text episode: fits the injection budget next to others
TEXT_SUFFIXES = (".md", ".markdown", ".txt", ".text")
_HEADING = re.compile(r"^#{1,3}\s+\S")
_map_locks: dict[Path, threading.Lock] = {}
_map_locks_guard = threading.Lock()


# --------------------------------------------------------------------------- scopes


def library_scope(kb_id: str) -> ScopeId:
    """The KB's own scope. Always session-isolated: in `bot` isolation a no-bot scope would
    otherwise land in the shared `global` key."""
    return ScopeId(None, f"{LIBRARY_PREFIX}{kb_id}", "session")


def parse_session_key(key: str, isolation: str) -> ScopeId:
    """`bot-uuid:group_123` or `group_123` (a session_key as `!memory` shows it)."""
    text = (key or "").strip()
    if not text:
        raise BadRequestError("the import scope is empty")
    # A session name is `<launcher_type>_<launcher_id>` and the id may hold ":" (LangBot's
    # web chats do), so a key that starts like a session name has no bot part.
    no_bot = ":" not in text or text.startswith(SESSION_PREFIXES)
    bot, _, session = ("", "", text) if no_bot else text.partition(":")
    if not session:
        raise BadRequestError(
            f"import scope {text!r} has no session name: write bot-uuid:group_123 or group_123"
        )
    return ScopeId(bot or None, session, isolation)  # type: ignore[arg-type]


def scope_json(scope: ScopeId) -> dict[str, Any]:
    return {"bot": scope.bot, "session": scope.session, "isolation": scope.isolation}


def scope_from_json(data: dict[str, Any]) -> ScopeId:
    return ScopeId(data.get("bot"), data["session"], data.get("isolation", "session"))


def search_with(engine: Any, request: Any, extra_user_keys: Sequence[str]) -> list[Any]:
    """engine.run(request) over the request's scope plus more user keys (KB libraries), as
    ONE ranking: each index's raw scores are comparable across its scopes, so candidates
    merge before fusion. (Ranking separate searches and merging them would not work: each
    result list is normalised on its own, so a lone weak hit in a small library would score
    like a perfect match.)"""
    if not extra_user_keys:
        return engine.run(request)
    backends = {
        name: _Union(index, tuple(extra_user_keys))
        for name, index in (("text", engine.text), ("vector", engine.vector))
    }
    return hybrid_search(request, backends, engine.lookup)


class _Union:
    """An index backend seen through several scopes at once."""

    def __init__(self, backend: Any, extra: tuple[str, ...]) -> None:
        self.backend = backend
        self.extra = extra

    def search(self, query: str, user_key: str, limit: int, **kw: Any) -> list[Any]:
        hits = list(self.backend.search(query, user_key, limit, **kw))
        for key in self.extra:
            hits += self.backend.search(query, key, limit, **kw)
        hits.sort(key=lambda h: -h.score)
        return hits[:limit]


# --------------------------------------------------------------------------- document map


@dataclass(frozen=True)
class Document:
    doc_id: str
    filename: str
    scope: ScopeId
    target: str  # form | payload | library
    episode_ids: tuple[str, ...]
    imported_at: str


class DocumentMap:
    """`<vault>/.memvault/knowledge/<kb>.json`: what each ingested document wrote."""

    def __init__(self, root: Path, kb_id: str) -> None:
        self.path = root / STATE_DIR / "knowledge" / f"{encode_name(kb_id, 'kb id')}.json"
        with _map_locks_guard:
            self._lock = _map_locks.setdefault(self.path, threading.Lock())

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text("utf-8"))
        except FileNotFoundError:
            return {"documents": {}}
        except (OSError, ValueError) as exc:
            log.warning("kb=document_map_unreadable path=%s error=%r", self.path, str(exc))
            return {"documents": {}}
        return data if isinstance(data.get("documents"), dict) else {"documents": {}}

    def _write(self, data: dict[str, Any]) -> None:
        text = json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True)
        atomic_write(self.path, text.encode("utf-8"))

    def get(self, doc_id: str) -> Document | None:
        with self._lock:
            item = self._read()["documents"].get(doc_id)
        return _document(doc_id, item) if isinstance(item, dict) else None

    def all(self) -> list[Document]:
        with self._lock:
            docs = self._read()["documents"]
        return [_document(k, v) for k, v in sorted(docs.items()) if isinstance(v, dict)]

    def put(self, doc: Document) -> None:
        with self._lock:
            data = self._read()
            data["documents"][doc.doc_id] = {
                "filename": doc.filename,
                "scope": scope_json(doc.scope),
                "target": doc.target,
                "episode_ids": list(doc.episode_ids),
                "imported_at": doc.imported_at,
            }
            self._write(data)

    def pop(self, doc_id: str) -> Document | None:
        with self._lock:
            data = self._read()
            item = data["documents"].pop(doc_id, None)
            if item is not None:
                self._write(data)
        return _document(doc_id, item) if isinstance(item, dict) else None


def _document(doc_id: str, item: dict[str, Any]) -> Document:
    return Document(
        doc_id,
        str(item.get("filename", "")),
        scope_from_json(item["scope"]),
        str(item.get("target", "")),
        tuple(str(i) for i in item.get("episode_ids", [])),
        str(item.get("imported_at", "")),
    )


# --------------------------------------------------------------------------- files -> episodes


class UnsupportedFile(ValueError):
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
            ep = parse_episode(stripped, rel_path=filename, mtime=0.0)
        except FormatError:
            ep = None
        if ep is not None:
            episodes.append(
                vault.new_episode(
                    ep.body,
                    ep.speaker,
                    ep.tags,
                    ep.importance,
                    ep.key,
                    ep.category,
                    "import",
                    ep.created_at,
                    ep.status,
                )
            )
    if not episodes:
        for piece in split_text(stripped):
            episodes.append(
                vault.new_episode(
                    piece, None, ("imported",), 2, None, None, "import", None, "active"
                )
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
            return parse_session_key(key, isolation)
    return None


def delete_episodes(vault: Vault, doc: Document) -> int:
    """Remove the files one document created (those still there) in one operation."""
    wanted = set(doc.episode_ids)
    removed = 0
    with vault.lock.hold():
        stored = [s for s in vault.load_episodes(doc.scope)[0] if s.episode.id in wanted]
        with vault.operation(doc.scope, "delete_document", source="import") as txn:
            for item in stored:
                item.path.unlink(missing_ok=True)
                txn.written.append(item.path)
                txn.record("forget", "episode", item.episode.id, item.episode.body)
                removed += 1
            txn.record(
                "delete_document",
                "document",
                doc.doc_id,
                f"Deleted {removed} episode(s) imported from {doc.filename or doc.doc_id}",
            )
    return removed


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
