"""`memvault migrate ltm --langbot-data DIR`: LangBot's own data folder read as LangBot and
Chroma write it, every chat brought in one go, a second run adding nothing.

The folder is built with the tables and columns those programs write (only the ones read):
langbot 4.11.2 `binary_storages`, `knowledge_bases`, `workspaces`
(pkg/entity/persistence/bstorage.py, rag.py, workspace.py) and chromadb 1.5.9's
`chroma.sqlite3` (`collections`, `segments`, `embeddings`, `embedding_metadata`; checked
against a store chromadb 1.5.9 itself wrote). The records are LongTermMemory's
(tests/vault/ltm/ltm_shapes.py).
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from pathlib import Path
from typing import Any

from memvault_cli.main import main
from tests.vault.ltm.ltm_shapes import BOT, CHAT, DM, SESSION_KEY, installation
from vault.layout.keys import ScopeId

INSTANCE, WORKSPACE, KB = "3d1c2b4a-0000-4000-8000-00000000aaaa", "ws-default", "7c1f0e2a"
OWNER = "langbot-team/LongTermMemory"


def collection_name(kb: str) -> str:
    """LangBot 4.11.2 pkg/vector/mgr.py physical_collection_name."""
    made = uuid.uuid5(uuid.NAMESPACE_URL, f"langbot:knowledge-vector:{INSTANCE}:{WORKSPACE}:{kb}")
    return f"lb_{made.hex}"


def write_langbot_db(path: Path, rows: list[tuple[str, bytes]], owner: str = OWNER) -> None:
    db = sqlite3.connect(path)
    db.executescript(
        """
        CREATE TABLE workspaces (uuid VARCHAR(36) PRIMARY KEY, instance_uuid VARCHAR(255));
        CREATE TABLE knowledge_bases (uuid VARCHAR(255) PRIMARY KEY, workspace_uuid VARCHAR(36),
            name VARCHAR, knowledge_engine_plugin_id VARCHAR, collection_id VARCHAR,
            legacy_vector_collection BOOLEAN, creation_settings JSON);
        CREATE TABLE binary_storages (workspace_uuid VARCHAR(36), unique_key VARCHAR(255),
            key VARCHAR(255) NOT NULL, owner_type VARCHAR(255) NOT NULL,
            owner VARCHAR(255) NOT NULL, value BLOB NOT NULL,
            PRIMARY KEY (workspace_uuid, unique_key));
        """
    )
    db.execute("INSERT INTO workspaces VALUES (?, ?)", (WORKSPACE, INSTANCE))
    db.execute(
        "INSERT INTO knowledge_bases VALUES (?, ?, ?, ?, ?, ?, ?)",
        (KB, WORKSPACE, "memory", OWNER, KB, 0, json.dumps({"isolation": "session"})),
    )
    db.execute(  # another plugin's row: never read
        "INSERT INTO binary_storages VALUES (?, 'v1:other', 'ps:x:group_1', 'plugin', "
        "'someone/OtherPlugin', ?)",
        (WORKSPACE, b'{"name": "not ours"}'),
    )
    for n, (key, value) in enumerate(rows):
        db.execute(
            "INSERT INTO binary_storages VALUES (?, ?, ?, 'plugin', ?, ?)",
            (WORKSPACE, f"v1:{n}", key, owner, value),
        )
    db.commit()
    db.close()


def write_chroma(folder: Path, name: str, vectors: list[dict[str, Any]]) -> None:
    folder.mkdir(parents=True)
    db = sqlite3.connect(folder / "chroma.sqlite3")
    db.executescript(
        """
        CREATE TABLE collections (id TEXT PRIMARY KEY, name TEXT NOT NULL, dimension INTEGER,
            database_id TEXT NOT NULL, config_json_str TEXT, schema_str TEXT);
        CREATE TABLE segments (id TEXT PRIMARY KEY, type TEXT NOT NULL, scope TEXT NOT NULL,
            collection TEXT NOT NULL);
        CREATE TABLE embeddings (id INTEGER PRIMARY KEY, segment_id TEXT NOT NULL,
            embedding_id TEXT NOT NULL, seq_id BLOB NOT NULL, created_at TIMESTAMP);
        CREATE TABLE embedding_metadata (id INTEGER, key TEXT NOT NULL, string_value TEXT,
            int_value INTEGER, float_value REAL, bool_value INTEGER, PRIMARY KEY (id, key));
        """
    )
    db.execute("INSERT INTO collections VALUES ('c1', ?, 384, 'db0', '{}', '{}')", (name,))
    db.execute("INSERT INTO segments VALUES ('s-vec', 'hnsw', 'VECTOR', 'c1')")
    db.execute("INSERT INTO segments VALUES ('s-meta', 'urn:chroma:segment/metadata/sqlite', "
               "'METADATA', 'c1')")  # fmt: skip
    for n, item in enumerate(vectors, start=1):
        db.execute("INSERT INTO embeddings VALUES (?, 's-meta', ?, ?, '')", (n, item["id"], n))
        pairs = {**item["metadata"], "chroma:document": item["document"]}
        for key, value in pairs.items():
            db.execute("INSERT INTO embedding_metadata VALUES (?, ?, ?, NULL, NULL, NULL)",
                       (n, key, value))  # fmt: skip
    db.commit()
    db.close()


def langbot_folder(tmp_path: Path, config: str = "") -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    rows, vectors = installation()
    write_langbot_db(folder / "langbot.db", rows)
    write_chroma(folder / "chroma", collection_name(KB), vectors)
    (folder / "config.yaml").write_text(config or "database:\n  use: sqlite\nvdb:\n  use: chroma\n")
    return folder


def run(capsys, vault, folder: Path, *more: str) -> tuple[int, str, str]:
    code = main(
        ["migrate", "ltm", "--langbot-data", str(folder), "--vault", str(vault.root), *more]
    )
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_cli_brings_every_chat_and_a_second_run_adds_nothing(capsys, vault, tmp_path):
    folder = langbot_folder(tmp_path)
    code, out, _ = run(capsys, vault, folder, "--dry-run")
    assert code == 0
    assert f"chat {SESSION_KEY}: 5 new, 0 already imported, 0 refused, 1 deleted" in out
    assert f"chat {BOT}:{DM}: 1 new, 0 already imported, 0 refused" in out
    assert vault.load_episodes(ScopeId(BOT, CHAT))[0] == []
    code, out, _ = run(capsys, vault, folder)
    assert code == 0 and "imported 6 memories and 2 profiles in 2 scope(s)" in out
    assert vault.read_profile(ScopeId(BOT, CHAT), "u42").name == "Alice"
    assert vault.read_profile(ScopeId(BOT, CHAT)).name == "Stargazers"  # not "not ours"
    (bob,) = vault.load_episodes(ScopeId(BOT, DM))[0]
    assert bob.episode.body == "Bob's birthday is on May 3" and bob.episode.importance == 5
    code, out, _ = run(capsys, vault, folder)
    assert code == 0 and "imported 0 memories and 0 profiles" in out and "6 already" in out


def test_json_report_lists_each_chat(capsys, vault, tmp_path):
    folder = langbot_folder(tmp_path)
    main(["--json", "migrate", "ltm", "--langbot-data", str(folder), "--vault", str(vault.root)])
    report = json.loads(capsys.readouterr().out)
    assert report["knowledge_bases"] == [KB]
    assert {c["chat"]: c["imported"] for c in report["chats"]} == {SESSION_KEY: 5, f"{BOT}:{DM}": 1}


def test_another_vector_database_brings_the_profiles_and_says_how_to_get_the_rest(
    capsys, vault, tmp_path
):
    folder = langbot_folder(tmp_path, "vdb:\n  use: qdrant\n")
    code, out, err = run(capsys, vault, folder)
    assert code == 1
    assert "the memories sit in qdrant" in err and "!memory migrate ltm" in err
    assert "imported 0 memories and 2 profiles" in out
    assert vault.read_profile(ScopeId(BOT, CHAT), "u42").name == "Alice"


def test_a_folder_that_is_not_langbots_says_what_to_pass(capsys, vault, tmp_path):
    code, _, err = run(capsys, vault, tmp_path)
    assert code == 2 and "langbot.db does not exist: pass LangBot's data folder" in err
    (tmp_path / "config.yaml").write_text("database:\n  use: postgresql\n")
    code, _, err = run(capsys, vault, tmp_path)
    assert code == 2 and "uses the 'postgresql' database" in err
