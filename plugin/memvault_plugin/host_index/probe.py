"""The proof `index: host` needs before MemVault trusts the host's vector database.

Two probe scopes are written (one row of the same vector in each, plus a second row at a
known cosine in the first); the first is searched through its file id: the other scope's
row must not come back, or the backend does not filter on file_id and MemVault refuses it.
The same answers tell how the backend reports `distance` (rows.Metric). Probe rows are
written under a space of their own (a fresh nonce) and deleted before returning.
"""

from __future__ import annotations

import logging
import math
import uuid

from vault.errors import Unavailable

from . import rows
from .calls import HostCalls

log = logging.getLogger(__name__)


class IsolationProofError(Unavailable, RuntimeError):
    """The host's vector database failed the isolation probe: `index: host` is refused."""


def _unit(dim: int, cos: float) -> list[float]:
    vec = [0.0] * dim
    vec[0], vec[1] = cos, math.sqrt(max(0.0, 1.0 - cos * cos))
    return vec


def prove_isolation(calls: HostCalls, dim: int) -> rows.Metric:
    """The backend's metric, or IsolationProofError saying what went wrong."""
    if dim < 2:
        raise IsolationProofError(f"a {dim}-dimensional model cannot be probed")
    space = rows.space_of(f"probe:{uuid.uuid4().hex}", "probe")
    mine = rows.Row(1, "probe:a", "active", "episode", 0)
    theirs = rows.Row(2, "probe:b", "active", "episode", 0)
    near = rows.Row(3, "probe:a", "active", "episode", 0)
    cosine = {1: 1.0, 3: 0.6}  # each of mine's rows against the query
    probe = [(mine, _unit(dim, 1.0)), (theirs, _unit(dim, 1.0)), (near, _unit(dim, 0.6))]
    files = [rows.scope_file_id(space, "probe:a"), rows.scope_file_id(space, "probe:b")]
    calls.upsert(
        [vec for _, vec in probe],
        [rows.row_id(space, row.chunk_id) for row, _ in probe],
        [row.metadata(space) for row, _ in probe],
    )
    try:
        got: list[list[int]] = []
        pairs: list[tuple[float, float]] = []
        for where in ({"file_id": files[0]}, {"file_id": {"$in": files[:1]}}):
            found = calls.search(_unit(dim, 1.0), 10, where)
            parsed = [(rows.parse_row(space, h.get("metadata")), h) for h in found]
            got.append(sorted(r.chunk_id for r, _ in parsed if r is not None))
            for row, hit in parsed:
                if row is not None and row.chunk_id in cosine:
                    pairs.append((float(hit.get("distance", 0.0)), cosine[row.chunk_id]))
        if any(2 in ids for ids in got):
            raise IsolationProofError(
                f"the host's vector database returned another scope's probe row (found {got}): "
                "it does not filter on file_id, so chats could see each other's memories"
            )
        if any(ids != [1, 3] for ids in got):
            raise IsolationProofError(
                f"the host's vector database did not return the probe rows it was given "
                f"(found {got}, expected [1, 3] twice)"
            )
        metric = rows.metric_from(pairs)
        if metric is None:
            raise IsolationProofError(f"unknown distance convention: {pairs}")
    finally:
        calls.delete_files(files)
    log.info("event=host_index_proved collection=%s metric=%s", calls.collection, metric.name)
    return metric
