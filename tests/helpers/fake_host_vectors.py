"""FAKE host vector database (named as such: the real one runs only inside a LangBot host,
checked by hostsuite/checks_host_index.py on Chroma and Milvus Lite). It behaves like LangBot
4.11.2's Milvus backend, the strictest one: only `text`, `file_id` and `uuid` are stored and
filterable (any other filter field is dropped, as Milvus drops it), an upsert INSERTS (an
existing id is duplicated, not replaced), `distance` is cosine similarity. Its rows live in a
JSON file re-read on every call, so another process sees the same "host"."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np

KEPT = ("text", "file_id", "uuid")


def _matches(row: dict[str, Any], filters: dict[str, Any] | None) -> bool:
    for field, cond in (filters or {}).items():
        if field not in KEPT:
            continue  # LangBot's Milvus: "Filter field ... will be ignored"
        ops = cond if isinstance(cond, dict) else {"$eq": cond}
        for op, value in ops.items():
            if op == "$eq" and row[field] != value:
                return False
            if op == "$in" and row[field] not in value:
                return False
    return True


class FakeMilvusHost:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.calls: list[str] = []

    def _rows(self) -> list[dict[str, Any]]:
        return json.loads(self.path.read_text()) if self.path.exists() else []

    def _save(self, rows: list[dict[str, Any]]) -> None:
        tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(rows))
        os.replace(tmp, self.path)

    async def vector_upsert(self, collection_id, vectors, ids, metadata=None, documents=None):
        self.calls.append("upsert")
        rows = self._rows()
        for vid, vec, meta in zip(ids, vectors, metadata or [{}] * len(ids), strict=True):
            rows.append({"id": vid, "vector": vec, **{k: meta.get(k, "") for k in KEPT}})
        self._save(rows)

    async def vector_search(self, collection_id, query_vector, top_k=5, filters=None, **kw):
        self.calls.append("search")
        q = np.asarray(query_vector, dtype=np.float64)
        scored = [
            (float(np.dot(q, r["vector"]) / (np.linalg.norm(q) * np.linalg.norm(r["vector"]))), r)
            for r in self._rows()
            if _matches(r, filters)
        ]
        scored.sort(key=lambda item: -item[0])
        return [
            {"id": r["id"], "distance": s, "metadata": {k: r[k] for k in KEPT}}
            for s, r in scored[:top_k]
        ]

    async def vector_list(self, collection_id, filters=None, limit=20, offset=0):
        self.calls.append("list")
        rows = [r for r in self._rows() if _matches(r, filters)]
        items = [
            {"id": r["id"], "document": r["text"], "metadata": {k: r[k] for k in KEPT}}
            for r in rows[offset : offset + limit]
        ]
        return {"items": items, "total": len(rows)}

    async def vector_delete(self, collection_id, file_ids=None, filters=None):
        self.calls.append("delete")
        rows = self._rows()
        if file_ids:
            keep = [r for r in rows if r["file_id"] not in file_ids]
        elif filters and any(field in KEPT for field in filters):
            keep = [r for r in rows if not _matches(r, filters)]
        else:
            keep = rows  # no usable condition: skipped, never "delete everything"
        self._save(keep)
        return len(rows) - len(keep)


def start_loop() -> asyncio.AbstractEventLoop:
    """An event loop running in its own daemon thread until the process ends: the plugin's
    loop, as the SDK runs it."""
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True, name="fake-host-loop").start()
    return loop
