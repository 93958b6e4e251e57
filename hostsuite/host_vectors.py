"""The real host's vector API from outside a plugin: each call goes to the suite probe's
relay Page (hostsuite/suite_plugin/components/pages/relay), which makes the SDK call inside
LangBot's plugin runtime, against the host's configured `vdb` (Chroma, Milvus, ...).

`MEMVAULT_HOST_RELAY` (JSON: base, token, workspace, plugin, kb) hands a relay to the index
contract suite (tests/indexer/backends/test_index_contract.py), which then runs its `host`
cases against the real host instead of its FAKE.
"""

from __future__ import annotations

import json
import os
from typing import Any

import httpx

ENV = "MEMVAULT_HOST_RELAY"
PROBE_PLUGIN = "hostsuite/MemVaultSuiteProbe"


class RelayError(RuntimeError):
    pass


class RelayVectorAPI:
    """Has the methods of BasePlugin's vector API (memvault_plugin.host_index.calls.VectorAPI)."""

    def __init__(self, base: str, token: str, workspace: str, plugin: str = PROBE_PLUGIN) -> None:
        self.http = httpx.Client(base_url=base, timeout=60)
        self.headers = {"Authorization": f"Bearer {token}", "X-Workspace-Id": workspace}
        self.path = f"/api/v1/plugins/{plugin}/page-api"

    @classmethod
    def from_env(cls) -> tuple[RelayVectorAPI, str] | None:
        """(the relay, the knowledge base to use) when the suite passed one."""
        raw = os.environ.get(ENV)
        if not raw:
            return None
        cfg = json.loads(raw)
        return cls(cfg["base"], cfg["token"], cfg["workspace"], cfg["plugin"]), cfg["kb"]

    def env(self, kb: str) -> str:
        base = str(self.http.base_url).rstrip("/")
        token = self.headers["Authorization"].removeprefix("Bearer ")
        workspace = self.headers["X-Workspace-Id"]
        plugin = self.path.split("/api/v1/plugins/")[1].removesuffix("/page-api")
        return json.dumps(
            {"base": base, "token": token, "workspace": workspace, "plugin": plugin, "kb": kb}
        )

    def call(self, name: str, **body: Any) -> Any:
        page = {"page_id": "relay", "endpoint": f"/{name}", "method": "POST", "body": body}
        response = self.http.post(self.path, headers=self.headers, json=page)
        answer = response.json() if response.status_code == 200 else {}
        if response.status_code != 200 or answer.get("code") != 0:
            raise RelayError(f"{name} -> {response.status_code} {response.text[:400]}")
        return (answer.get("data") or {}).get("result")

    # Plain HTTP inside `async def`: the caller (HostCalls) runs these on its own loop thread.
    async def vector_upsert(self, collection_id, vectors, ids, metadata=None, documents=None):  # noqa: ANN001, ANN201
        body = {"collection_id": collection_id, "vectors": vectors, "ids": ids}
        return self.call("vector_upsert", **body, metadata=metadata)

    async def vector_search(self, collection_id, query_vector, top_k=5, filters=None):  # noqa: ANN001, ANN201
        body = {"collection_id": collection_id, "query_vector": query_vector, "top_k": top_k}
        return self.call("vector_search", **body, filters=filters)

    async def vector_list(self, collection_id, filters=None, limit=20, offset=0):  # noqa: ANN001, ANN201
        body = {"collection_id": collection_id, "filters": filters}
        return self.call("vector_list", **body, limit=limit, offset=offset)

    async def vector_delete(self, collection_id, file_ids=None, filters=None):  # noqa: ANN001, ANN201
        body = {"collection_id": collection_id, "file_ids": file_ids, "filters": filters}
        return self.call("vector_delete", **body)
