"""Read what LongTermMemory stored from a LangBot data folder (`data/`), read-only.

- L1: LangBot keeps plugin storage in its database, table `binary_storages` (langbot 4.11.2,
  pkg/entity/persistence/bstorage.py): LongTermMemory's rows have owner_type `plugin`,
  owner `<author>/LongTermMemory`, the plain key (`ps:...`, `pp:...`, `kb_configs`) and the
  JSON bytes as value. Only a SQLite database (`data/langbot.db`, the default) is read here.
- L2: with the default vector database (Chroma, `data/chroma/`), each collection's metadata
  sits in `chroma.sqlite3` (tables collections, segments, embeddings, embedding_metadata;
  checked with chromadb 1.5.9). A knowledge base's collection is `lb_` + uuid5(URL,
  `langbot:knowledge-vector:{instance}:{workspace}:{kb}`) (pkg/vector/mgr.py
  physical_collection_name), or its own `collection_id` when marked legacy. Another backend
  (Qdrant, SeekDB, Milvus, pgvector) cannot be read from files: the plugin's
  `!memory migrate ltm` reads it through LangBot.

Nothing here writes: the databases are opened with `mode=ro`.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from vault.errors import BadRequestError

PLUGIN_NAME = "LongTermMemory"
_NAMESPACE = "langbot:knowledge-vector:{instance}:{workspace}:{kb}"


@dataclass
class LangBotData:
    storage: list[tuple[str, bytes]] = field(default_factory=list)
    vectors: list[dict[str, Any]] = field(default_factory=list)
    kbs: list[str] = field(default_factory=list)  # LongTermMemory's knowledge bases
    notes: list[str] = field(default_factory=list)  # what could not be read, and what to do


def _connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)


def _config(folder: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load((folder / "config.yaml").read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return {}
    return data if isinstance(data, dict) else {}


def _section(config: dict[str, Any], name: str) -> dict[str, Any]:
    value = config.get(name)
    return value if isinstance(value, dict) else {}


def read_langbot_data(folder: Path, *, plugin: str = PLUGIN_NAME) -> LangBotData:
    """LongTermMemory's records in `folder` (LangBot's `data/`)."""
    config = _config(folder)
    database = _section(config, "database")
    if database.get("use", "sqlite") != "sqlite":
        raise BadRequestError(
            f"{folder}/config.yaml uses the {database.get('use')!r} database: this reader takes "
            "SQLite only. Run `!memory migrate ltm` in a chat for the memories, and bring each "
            "chat's profiles with LongTermMemory's `!memory export` + `!memory import l2`"
        )
    db = folder / "langbot.db"
    if not db.is_file():
        raise BadRequestError(
            f"{db} does not exist: pass LangBot's data folder (the one holding langbot.db and "
            "config.yaml), e.g. --langbot-data /opt/langbot/data"
        )
    found = LangBotData()
    with closing(_connect(db)) as conn:
        found.storage = _storage(conn, plugin)
        kbs = _kb_collections(conn, found.storage, plugin)
    found.kbs = sorted(kbs)
    backend = _section(config, "vdb").get("use", "chroma")
    if backend != "chroma":
        found.notes.append(
            f"the memories sit in {backend}, which cannot be read from files: run "
            "`!memory migrate ltm` in a chat of the bot (the plugin reads them through LangBot)"
        )
        return found
    chroma = folder / "chroma" / "chroma.sqlite3"
    if kbs and not chroma.is_file():
        found.notes.append(f"{chroma} does not exist: no memories read")
        return found
    if kbs:
        with closing(_connect(chroma)) as conn:
            for kb, names in sorted(kbs.items()):
                found.vectors += _chroma_items(conn, names, kb, found.notes)
    return found


def _storage(conn: sqlite3.Connection, plugin: str) -> list[tuple[str, bytes]]:
    rows = conn.execute(
        "SELECT workspace_uuid, owner, key, value FROM binary_storages "
        "WHERE owner_type = 'plugin' AND (owner = ? OR owner LIKE ?)",
        (plugin, f"%/{plugin}"),
    ).fetchall()
    places = {(w, o) for w, o, _, _ in rows}
    if len(places) > 1:
        shown = ", ".join(f"{o} in workspace {w}" for w, o in sorted(places))
        raise BadRequestError(
            f"LongTermMemory's storage is there more than once ({shown}): migrate one "
            "installation at a time (ask on the issue tracker for --workspace)"
        )
    return [(str(k), bytes(v)) for _, _, k, v in rows]


def _kb_collections(
    conn: sqlite3.Connection, storage: list[tuple[str, bytes]], plugin: str
) -> dict[str, list[str]]:
    """LongTermMemory's knowledge bases -> the Chroma collection names each may have."""
    ids: set[str] = set()
    for key, value in storage:
        if key == "kb_configs":
            try:
                configs = json.loads(value.decode("utf-8"))
            except (ValueError, UnicodeDecodeError):
                configs = {}
            ids |= set(configs) if isinstance(configs, dict) else set()
    rows = conn.execute(
        "SELECT kb.uuid, kb.collection_id, kb.legacy_vector_collection, kb.workspace_uuid, "
        "w.instance_uuid, kb.knowledge_engine_plugin_id FROM knowledge_bases kb "
        "LEFT JOIN workspaces w ON w.uuid = kb.workspace_uuid"
    ).fetchall()
    found: dict[str, list[str]] = {}
    for kb, collection, legacy, workspace, instance, engine in rows:
        if kb not in ids and plugin not in str(engine or ""):
            continue
        names = [collection] if legacy and collection else []
        if instance and workspace:
            made = uuid.uuid5(
                uuid.NAMESPACE_URL,
                _NAMESPACE.format(instance=instance, workspace=workspace, kb=kb),
            )
            names.append(f"lb_{made.hex}")
        found[kb] = names + ([collection] if collection and collection not in names else [])
    for kb in ids - set(found):
        found[kb] = [kb]  # a knowledge base LangBot no longer lists: its old name, if any
    return found


def _chroma_items(
    conn: sqlite3.Connection, names: list[str], kb: str, notes: list[str]
) -> list[dict[str, Any]]:
    for name in names:
        row = conn.execute(
            "SELECT s.id FROM collections c JOIN segments s ON s.collection = c.id "
            "WHERE c.name = ? AND s.scope = 'METADATA'",
            (name,),
        ).fetchone()
        if row is not None:
            return _segment_items(conn, row[0])
    notes.append(f"knowledge base {kb}: no Chroma collection found ({', '.join(names)})")
    return []


def _segment_items(conn: sqlite3.Connection, segment: str) -> list[dict[str, Any]]:
    items: dict[int, dict[str, Any]] = {}
    for rowid, ident in conn.execute(
        "SELECT id, embedding_id FROM embeddings WHERE segment_id = ? ORDER BY id", (segment,)
    ):
        items[rowid] = {"id": ident, "document": None, "metadata": {}}
    for rowid, key, text, whole, real, flag in conn.execute(
        "SELECT m.id, m.key, m.string_value, m.int_value, m.float_value, m.bool_value "
        "FROM embedding_metadata m JOIN embeddings e ON e.id = m.id WHERE e.segment_id = ?",
        (segment,),
    ):
        item = items.get(rowid)
        if item is None:
            continue
        value = next((v for v in (text, whole, real) if v is not None), None)
        if value is None and flag is not None:
            value = bool(flag)
        if key == "chroma:document":
            item["document"] = value
        else:
            item["metadata"][key] = value
    return list(items.values())
