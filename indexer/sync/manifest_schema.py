"""The manifest's SQLite tables and the rows it keeps (indexer.sync.manifest reads and writes them).

A chunk's document is stored as JSON so search can rank a hit from the manifest alone.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import asdict, dataclass
from pathlib import Path

from indexer.backends.backend import IndexMismatchError
from indexer.backends.records import ChunkDoc
from indexer.sync.plan import Known

# 3: chunks are scoped by vault.layout.keys.index_key (injective), no longer by LangBot's joined
# user_key, which collides across scopes: an older manifest is dropped and re-indexed.
# 4: docs carry priority, category, verified, confidence, source, updated_at and
# case-folded tag_keys, and files are indexed by index_key (per-scope reads such as the
# chat's critical memories): an older manifest is dropped and re-indexed at start.
SCHEMA_VERSION = 4

SCHEMA = """
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    sha TEXT NOT NULL,
    kind TEXT NOT NULL,
    index_key TEXT NOT NULL,
    error TEXT,
    error_line INTEGER
);
CREATE TABLE IF NOT EXISTS chunks (
    chunk_id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    fingerprints TEXT NOT NULL DEFAULT '{}',
    doc TEXT,
    UNIQUE (path, ordinal)
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS files_index_key ON files (index_key);
CREATE INDEX IF NOT EXISTS chunks_episode_id
    ON chunks (json_extract(doc, '$.episode_id')) WHERE ordinal = 0;
CREATE INDEX IF NOT EXISTS chunks_priority
    ON chunks (json_extract(doc, '$.priority')) WHERE ordinal = 0;
"""
# chunks_priority: the injector reads the chat's critical memories every turn
# (Engine.critical); without it that read parses every doc of the chat (36 ms on 10,000).
# Created on open for an existing manifest too (IF NOT EXISTS: no schema version change).


# A chunk's episode id, as the duplicate-id index (chunks_episode_id) holds it.
EID = "json_extract(doc, '$.episode_id')"


def doc_json(doc: ChunkDoc | None) -> str | None:
    return None if doc is None else json.dumps(asdict(doc), ensure_ascii=False)


def doc_from_json(text: str) -> ChunkDoc:
    data = json.loads(text)
    data["tags"] = tuple(data["tags"])
    data["tag_keys"] = tuple(data.get("tag_keys", ()))
    return ChunkDoc(**data)


@dataclass(frozen=True)
class FileEntry:
    path: str
    size: int
    mtime_ns: int
    sha: str
    kind: str  # episode | profile | speaker
    index_key: str  # vault.layout.keys.index_key of the file's scope
    chunk_ids: tuple[int, ...] = ()  # by ordinal
    error: str | None = None
    error_line: int | None = None
    # Per chunk (by ordinal): backend name -> hash of what that backend was given, so a
    # chunk a backend already holds unchanged (a rename, an unrelated front-matter edit)
    # is not sent again; for the vector backend that is an embedding saved.
    fingerprints: tuple[dict[str, str], ...] = ()
    # The chunks themselves (by ordinal), so search can rank a hit without re-reading files.
    docs: tuple[ChunkDoc, ...] = ()

    def known(self) -> Known:
        return Known(self.size, self.mtime_ns, self.sha)


def connect_writable(path: Path) -> sqlite3.Connection:
    """The writer's connection. Autocommit mode: transactions are explicit (BEGIN
    IMMEDIATE) so a batch is atomic and a writer takes the lock up front instead of failing
    half-way on upgrade."""
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("PRAGMA busy_timeout=5000")
    return db


def _create(db: sqlite3.Connection) -> None:
    for statement in SCHEMA.split(";"):
        if statement.strip():
            db.execute(statement)


def ensure_schema(db: sqlite3.Connection, path: Path) -> None:
    """Create the tables, or start over from an older schema (derived state: reconcile
    re-indexes and drops orphan index ids); refuse a newer one. Inside the caller's
    transaction."""
    _create(db)
    row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    version = None if row is None else row[0]
    if version is not None and int(version) > SCHEMA_VERSION:
        raise IndexMismatchError(
            f"{path} was written by a newer MemVault (schema {version}): "
            "upgrade, or delete the .memvault/index folder and reindex"
        )
    if version is not None and int(version) < SCHEMA_VERSION:
        for table in ("files", "chunks"):
            db.execute(f"DROP TABLE {table}")
        _create(db)
    if version is None or int(version) < SCHEMA_VERSION:
        db.execute(
            "INSERT OR REPLACE INTO meta VALUES (?, ?)", ("schema_version", str(SCHEMA_VERSION))
        )
