"""What one MemVault chunk is in the host's vector database, and how the scope is carried.

LangBot's Milvus, pgvector and Valkey backends drop every metadata filter except `file_id`
(Milvus and pgvector also keep `text` and `uuid`), so the scope (the chunk's index_key) is
carried as the row's `file_id`: one logical file per (space, index key), a fixed prefix and
the sha256 of an injective encoding (a JSON list), so two keys never share a file id and no
LangBot document's file id (a uuid) looks like one. The row's `text` field (kept and returned
by every backend) carries the chunk id, the key itself (checked on every hit), status, kind and
expiry; `uuid` carries the row id, the one field besides file_id a delete can filter on.

The space is one vault's vectors of one model (`space_of`): a collection (a LangBot knowledge
base) can hold several vaults and models without any of them seeing the others.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass
from typing import Any

from indexer.backends.records import ChunkDoc

FILE_ID_PREFIX = "memvault1-"
# Rows being deleted are moved here first (see vectors.HostVectorIndex.commit).
TOMBSTONE = "tombstone"
_NAMESPACE = uuid.UUID("6d0c7c3e-3f7a-4f8e-9a8e-6d656d766c74")


def space_of(vault_id: str, identity: str) -> str:
    return hashlib.sha256(json.dumps([vault_id, identity]).encode("utf-8")).hexdigest()[:32]


def scope_file_id(space: str, index_key: str) -> str:
    digest = hashlib.sha256(json.dumps([space, index_key]).encode("utf-8")).hexdigest()
    return FILE_ID_PREFIX + digest


def tombstone_file_id(space: str) -> str:
    return FILE_ID_PREFIX + hashlib.sha256(json.dumps([space, None]).encode()).hexdigest()


def row_id(space: str, chunk_id: int) -> str:
    """A uuid string: the one id format every LangBot backend takes (Qdrant wants uuids)."""
    return str(uuid.uuid5(_NAMESPACE, f"{space}:{chunk_id}"))


@dataclass(frozen=True)
class Row:
    chunk_id: int
    index_key: str
    status: str
    kind: str
    expires_at: int

    @classmethod
    def of(cls, doc: ChunkDoc) -> Row:
        return cls(doc.chunk_id, doc.index_key, doc.status, doc.kind, int(doc.expires_at))

    def text(self, space: str) -> str:
        fields = [space, self.chunk_id, self.index_key, self.status, self.kind, self.expires_at]
        return json.dumps(fields, ensure_ascii=False)

    def metadata(self, space: str) -> dict[str, Any]:
        return {
            "file_id": scope_file_id(space, self.index_key),
            "uuid": row_id(space, self.chunk_id),
            "text": self.text(space),
        }


def parse_row(space: str, metadata: Any) -> Row | None:
    """The row a hit or a listed item carries, or None when it is not one of this space's
    (another vault, another model, a LangBot document, a tombstone, anything malformed)."""
    if not isinstance(metadata, dict):
        return None
    try:
        fields = json.loads(metadata.get("text") or "")
    except (TypeError, ValueError):
        return None
    if not isinstance(fields, list) or len(fields) != 6 or fields[0] != space:
        return None
    _, cid, key, status, kind, expires = fields
    if not (isinstance(cid, int) and isinstance(key, str) and isinstance(expires, int)):
        return None
    row = Row(cid, key, str(status), str(kind), expires)
    # The key it says must be the file id it is filed under: never trust one without the other.
    if metadata.get("file_id") != scope_file_id(space, key):
        return None
    return row


@dataclass(frozen=True)
class Metric:
    """How a backend's `distance` turns into cosine similarity (measured by the probe: Chroma
    answers squared L2, Milvus cosine similarity, others cosine distance)."""

    name: str

    def cosine(self, distance: float) -> float:
        if self.name == "similarity":
            return distance
        if self.name == "cosine_distance":
            return 1.0 - distance
        if self.name == "squared_l2":
            return 1.0 - distance / 2.0
        if self.name == "l2":
            return 1.0 - distance * distance / 2.0
        raise ValueError(f"unknown metric {self.name}")


METRICS = tuple(Metric(n) for n in ("similarity", "cosine_distance", "squared_l2", "l2"))


def metric_from(pairs: list[tuple[float, float]]) -> Metric | None:
    """The metric that maps every measured distance to its known cosine, or None."""
    for metric in METRICS:
        if all(abs(metric.cosine(d) - cos) < 1e-3 for d, cos in pairs):
            return metric
    return None
