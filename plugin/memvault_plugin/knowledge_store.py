"""What the MemVault knowledge engine keeps besides episodes: KB settings and document
maps (turning uploaded files into episodes is kb_upload.py).

Where uploaded files go (the KB's import target), first match wins:
1. the KB's `import_scope` creation setting (a session key such as `bot-uuid:group_123`,
   or `group_123` for memory without a bot): an admin's explicit choice;
2. the `scope_key` a JSON export names (MemVault's and LongTermMemory's exports both carry
   it): the memory goes back to the chat it came from, where it is recalled;
3. otherwise the KB's own library scope, `bots/_nobot/sessions/kb_<kb id>/`: reference
   memory of this knowledge base. `retrieve`, injection and `recall_memory` rank it with the
   chat's own scope in one pool (present_libraries), so every chat whose pipeline uses the
   KB recalls it (upstream's fixed "imported" key was never recalled anywhere).

Each ingest records `document id -> (scope, episode ids)` in
`<vault>/.memvault/knowledge/<kb id>.json`, next to the vault it describes (it survives a
plugin reinstall like the vault does), so `delete_document` removes exactly those files.
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

# The KBs' library scopes live with the injection code (the console's recall test needs them).
from indexer.injection.libraries import (  # noqa: F401 - re-exported for the plugin
    library_scope,
    present_libraries,
)
from vault.errors import BadRequestError
from vault.files.safewrite import atomic_write
from vault.format.jsonin import load_json
from vault.layout.keys import ScopeId
from vault.layout.layout import STATE_DIR
from vault.layout.names import encode_name
from vault.layout.store import StoredEpisode
from vault.writes.operations import Vault

log = logging.getLogger(__name__)

KB_CONFIGS_KEY = "kb_configs"  # plugin storage, upstream's shape: {kb_id: creation settings}
INHERIT = "plugin"  # a KB form field left on "plugin setting"
SESSION_PREFIXES = ("group_", "person_")
_map_locks: dict[Path, threading.Lock] = {}
_map_locks_guard = threading.Lock()


# --------------------------------------------------------------------------- scopes


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
            data = load_json(self.path.read_text("utf-8"), str(self.path))
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


def delete_episodes(vault: Vault, doc: Document) -> int:
    """Remove the files one document created (those still there) in one operation.

    An id another file states too (a person's copy) is left alone, both files: deleting by
    an ambiguous id could remove the person's copy (`check`/`status` report the pair). A
    file with changes git does not hold yet is committed first, as `forget` does."""
    wanted = set(doc.episode_ids)
    removed = 0
    with vault.lock.hold():
        found: dict[str, list[StoredEpisode]] = {}
        for s in vault.load_episodes(doc.scope)[0]:
            if s.episode.id in wanted:
                found.setdefault(s.episode.id, []).append(s)
        for episode_id, copies in found.items():
            if len(copies) > 1:
                log.warning(
                    "memvault=delete_document_kept id=%s reason=duplicate_id paths=%s",
                    episode_id,
                    ",".join(c.rel for c in copies),
                )
        chat = vault.load_episodes(doc.scope)[0]
        stored = [copies[0] for copies in found.values() if len(copies) == 1]
        with vault.operation(doc.scope, "delete_document", source="import") as txn:
            vault.keep_before_delete([item.rel for item in stored], "deleting a document")
            for item in stored:
                item.path.unlink(missing_ok=True)
                txn.written.append(item.path)
                txn.record("forget", "episode", item.episode.id, item.episode.body)
                removed += 1
            vault.follow_forget(chat, {item.episode.id for item in stored}, txn)
            txn.record(
                "delete_document",
                "document",
                doc.doc_id,
                f"Deleted {removed} episode(s) imported from {doc.filename or doc.doc_id}",
            )
    return removed


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def settings_conflict(s: Any, config: dict[str, Any]) -> str:
    """Why a KB creation form disagrees with the plugin settings, or "" when it does not."""
    where = "MemVault's plugin settings"
    isolation = str(config.get("isolation") or INHERIT)
    if isolation not in (INHERIT, s.isolation):
        return (
            f"isolation is a plugin-wide setting (it decides where memories are stored); "
            f"{where} say {s.isolation!r}: change it there, or leave this field on "
            f"'Plugin setting'"
        )
    model = str(config.get("embedding_model_uuid") or "")
    if model and not (s.embedding == "langbot" and s.embedding_model_uuid == model):
        return (
            f"the embedding model is a plugin-wide setting (the vault has one index); "
            f"{where} use {s.embedding!r}: choose the model there, or leave this field empty"
        )
    checks = (
        ("recency_half_life_days", s.half_life_days, "half_life_days"),
        ("auto_recall_top_k", s.top_k, "top_k"),
    )
    for field, current, name in checks:
        raw = config.get(field)
        if raw in (None, "", 0, "0"):
            continue
        try:
            value = float(raw)
        except (TypeError, ValueError):
            return f"{field} must be a number (0 = plugin setting)"
        if value != float(current):
            return (
                f"{field} is the plugin setting {name} ({current:g} in {where}): change it "
                f"there, or leave this field at 0"
            )
    return ""
