"""The chunk ids an index holds, as one sorted int64 array (what the self-heal compares).

Why arrays: at 1M chunks a `set[int]` per backend plus the manifest's id -> path dict kept
~1M Python objects each, several hundred MB at every reconcile, for a comparison numpy does
in a few milliseconds. A backend that can list its ids without building a set offers
`id_array()`; any other backend of the contract answers through `ids()`.
"""

from __future__ import annotations

import numpy as np

from indexer.backends.backend import SearchBackend

EMPTY = np.zeros(0, dtype=np.int64)


def held_ids(backend: SearchBackend) -> np.ndarray:
    """Sorted, unique int64 ids of the chunks `backend` holds (committed state)."""
    listed = getattr(backend, "id_array", None)
    if callable(listed):
        return np.unique(np.asarray(listed(), dtype=np.int64))
    ids = backend.ids()
    return np.unique(np.fromiter(ids, dtype=np.int64, count=len(ids)))


def top_id(ids: np.ndarray) -> int:
    return int(ids[-1]) if len(ids) else 0


def missing(wanted: np.ndarray, held: np.ndarray) -> np.ndarray:
    """Ids of `wanted` not in `held` (both sorted unique)."""
    return np.setdiff1d(wanted, held, assume_unique=True)
