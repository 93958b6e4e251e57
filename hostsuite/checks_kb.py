"""MemVault as a LangBot knowledge base: a Markdown upload is ingested by MemVault and
retrieved through the host's KB API, in a chat's scope only."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import httpx

from hostsuite.framework import phase
from hostsuite.host import Host, SuiteError, wait_for

if TYPE_CHECKING:
    from hostsuite.framework import SuiteContext


@phase("knowledge base", order=20)
def run(suite: SuiteContext, host: Host, ids: dict[str, str]) -> None:
    files = httpx.Client(base_url=host.base, timeout=60)
    headers = {"Authorization": f"Bearer {host.token}", "X-Workspace-Id": host.workspace}
    body = b"# Office\n\nVisitors park on level -2 of the suite garage.\n"
    up = files.post(
        "/api/v1/files/documents",
        headers=headers,
        files={"file": ("handbook.md", body, "text/markdown")},
    ).json()
    file_id = up["data"]["file_id"]
    host.call("POST", f"/api/v1/knowledge/bases/{ids['kb']}/files", json={"file_id": file_id})

    def done() -> Any:
        items = host.call("GET", f"/api/v1/knowledge/bases/{ids['kb']}/files")
        items = items.get("files", items) if isinstance(items, dict) else items
        states = [str(i.get("status")) for i in items]
        if any(s in ("failed", "error") for s in states):
            raise SuiteError(f"ingest failed: {json.dumps(items)[:400]}")
        return items if states and all(s == "completed" for s in states) else None

    items = wait_for("the KB upload to be ingested", done, 120, every=1)
    session = suite.facts["sessions"]["B"]
    found = host.call(
        "POST",
        f"/api/v1/knowledge/bases/{ids['kb']}/retrieve",
        json={
            "query": "where do visitors park",
            "retrieval_settings": {
                "top_k": 3,
                "session_name": session,
                "bot_uuid": ids["bot"],
                "sender_id": "x",
            },
        },
    )["results"]
    suite.check(
        "KB upload (Markdown) is ingested by MemVault and retrieved in a chat",
        "level -2" in json.dumps(found),
        f"files={len(items)} results={len(found)}",
    )
    refused = host.call(
        "POST",
        f"/api/v1/knowledge/bases/{ids['kb']}/retrieve",
        json={"query": "where do visitors park"},
    )["results"]
    suite.check(
        "KB retrieve without a session name returns nothing",
        refused == [],
        f"results={len(refused)}",
    )
