"""The host side of the LongTermMemory round trip: LongTermMemory attached, its knowledge base
made the way its engine expects (the host's embedding model, isolation `session`), a pipeline
whose plugins are switched between LongTermMemory and MemVault (both register `!memory`, and
LangBot 4.11.2 runs every bound plugin's command of that name, so the two are never bound to
the same pipeline at once), and what LongTermMemory really stored, read where it lies: its
plugin-storage rows in LangBot's database and its vectors through the host's vector API.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hostsuite import rig
from hostsuite.host import Host, SuiteError
from hostsuite.host_vectors import PROBE_PLUGIN, RelayVectorAPI
from hostsuite.local_agent import LOCAL_AGENT_ID, RUNNER_ID
from hostsuite.ltm.fixture import LTM_ID, prepare_ltm

if TYPE_CHECKING:
    from hostsuite.framework import SuiteContext


def attach_ltm(suite: SuiteContext, host: Host) -> None:
    """A temp copy of the cached plugin, debug-attached like LocalAgent (host venv's lbp)."""
    source = prepare_ltm(suite.work / "src" / "LongTermMemory")
    venv: Path = getattr(suite, "host_venv")  # noqa: B009 - HostRig's, not in the protocol
    getattr(suite, "attach")(host, "ltm", source, venv / "bin", LTM_ID, {})  # noqa: B009


def embedding_model(host: Host, provider: str) -> str:
    """An embedding model on the host, served by the FAKE LLM's /v1/embeddings (hash vectors)."""
    body = {"name": "fake-embedding (ltm)", "provider_uuid": provider, "extra_args": {}}
    return str(host.call("POST", "/api/v1/provider/models/embedding", json=body)["uuid"])


def ltm_engine(host: Host) -> str:
    engines = host.call("GET", "/api/v1/knowledge/engines")["engines"]
    engine = next((e for e in engines if LTM_ID in json.dumps(e)), None)
    if engine is None:
        raise SuiteError(f"no LongTermMemory knowledge engine among {json.dumps(engines)[:400]}")
    return str(engine.get("plugin_id") or LTM_ID)


def create_ltm_kb(host: Host, engine: str, embedding: str) -> str:
    """LongTermMemory's one memory KB, with its creation_schema's settings (memory_engine.yaml).
    Candidate extraction with auto-apply is on: on 4.11.2 it is the write path of its own that
    works (its tools refuse there: /work/notes/ltm_facts.md, and `tool_attempts` below)."""
    settings = {
        "embedding_model_uuid": embedding,
        "isolation": "session",
        "candidate_extraction_enabled": True,
        "candidate_auto_apply": True,
    }
    body = {
        "name": "LongTermMemory",
        "description": "LongTermMemory (suite)",
        "knowledge_engine_plugin_id": engine,
        "creation_settings": settings,
        "retrieval_settings": {"top_k": 5},
    }
    return str(host.call("POST", "/api/v1/knowledge/bases", json=body)["uuid"])


def create_pipeline(host: Host, llm: str, kb: str) -> str:
    """A pipeline whose runner is LocalAgent with `kb` in its knowledge bases."""
    return rig.create_pipeline(host, "ltm round trip", RUNNER_ID, llm, kb)


def bind_plugins(host: Host, pipeline: str, memory_plugin: str) -> None:
    """The pipeline's plugins: LocalAgent, the suite's probe and ONE memory plugin."""
    bound = [
        dict(zip(("author", "name"), ident.split("/", 1), strict=True))
        for ident in (memory_plugin, LOCAL_AGENT_ID, PROBE_PLUGIN)
    ]
    body = {
        "enable_all_plugins": False,
        "bound_plugins": bound,
        "enable_all_mcp_servers": True,
        "bound_mcp_servers": [],
        "enable_all_skills": True,
        "bound_skills": [],
    }
    host.call("PUT", f"/api/v1/pipelines/{pipeline}/extensions", json=body)
    seen = host.call("GET", f"/api/v1/pipelines/{pipeline}/extensions")
    names = {f"{p.get('author')}/{p.get('name')}" for p in seen.get("bound_plugins") or []}
    if seen.get("enable_all_plugins") or memory_plugin not in names:
        raise SuiteError(f"pipeline {pipeline}: plugins not bound as asked: {json.dumps(seen)}")


def storage_rows(suite: SuiteContext, owner: str = LTM_ID) -> dict[str, Any]:
    """LongTermMemory's plugin-storage rows in LangBot's SQLite database: key -> decoded JSON
    (or the raw text when a value is not JSON), read as a migration tool would."""
    db = suite.work / "langbot" / "data" / "langbot.db"
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        rows = conn.execute(
            "SELECT key, owner_type, value FROM binary_storages WHERE owner = ? ORDER BY key",
            (owner,),
        ).fetchall()
    found: dict[str, Any] = {}
    for key, owner_type, value in rows:
        text = bytes(value).decode("utf-8", "replace")
        try:
            decoded: Any = json.loads(text)
        except ValueError:
            decoded = text
        found[key] = {"owner_type": owner_type, "value": decoded}
    return found


def ltm_vectors(host: Host, kb: str) -> list[dict[str, Any]]:
    """Every vector of LongTermMemory's KB as the host's vector API lists it (the probe's
    relay: another plugin of the workspace, as MemVault would be)."""
    relay = RelayVectorAPI(host.base, host.token, host.workspace)
    page = relay.call("vector_list", collection_id=kb, filters=None, limit=1000, offset=0)
    return list((page or {}).get("items") or [])


def console(host: Host, endpoint: str, body: dict[str, Any]) -> dict[str, Any]:
    """LongTermMemory's own Memory Console API (its Page component), through the host."""
    page = {"page_id": "memory_console", "endpoint": endpoint, "method": "POST", "body": body}
    answer = host.call("POST", f"/api/v1/plugins/{LTM_ID}/page-api", json=page)
    data = answer.get("data", answer) if isinstance(answer, dict) else None
    if not isinstance(data, dict):
        raise SuiteError(f"LongTermMemory console {endpoint}: {json.dumps(answer)[:400]}")
    return data


def export_json(reply: str, what: str) -> dict[str, Any]:
    """LongTermMemory's `!memory export` / `export l2` reply is the JSON document itself."""
    start = reply.find("{")
    try:
        data = json.loads(reply[start:]) if start >= 0 else None
    except ValueError as exc:
        raise SuiteError(f"{what}: the reply is not JSON ({exc}): {reply[:300]!r}") from exc
    if not isinstance(data, dict):
        raise SuiteError(f"{what}: no JSON object in the reply {reply[:300]!r}")
    return data
