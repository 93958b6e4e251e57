"""Loading a vector log into memory a record at a time (indexer.backends.vector_index).

Why: reading the log whole and merging every record into one dict of rows held the log
twice (its bytes, then the rows stacked for faiss): a log may grow to the size of the rows
before it is folded into the snapshot (GBs at 1M chunks), and a reader paid that at open.
Two passes instead: the first notes, per chunk id, the last record that adds or deletes it
(numpy arrays, not a dict of ids); the second re-reads the records and adds each chunk's
last row only. The result is the one a merged replay gives: a chunk updated in many
commits is added once, a chunk deleted last is gone.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from indexer.backends import vector_store as store
from indexer.backends.vector_scope import ScopedRows


def replay_log(rows: ScopedRows, folder: Path, generation: str | None, dim: int) -> int:
    """Apply the log of snapshot `generation` to `rows`; the offset after its last good
    record (0 if there is no log of that snapshot)."""
    opened = store.open_log(folder, generation)
    if opened is None:
        return 0
    f, first = opened
    with f:
        touched, last, adds, end = [], [], [], first
        for i, (change, end) in enumerate(store.records(f, dim)):  # noqa: B007 - the last end
            ids = np.concatenate([np.asarray(change.deleted, dtype=np.int64), change.ids])
            touched.append(ids)
            last.append(np.full(len(ids), i, dtype=np.int64))
            # Within a record deletes come first, so a chunk both deleted and added is added.
            adds.append(np.arange(len(ids)) >= len(change.deleted))
        if not touched:
            return end
        every = np.concatenate(touched)
        # The last occurrence of each id: unique over the reversed order.
        chunk_ids, back = np.unique(every[::-1], return_index=True)
        final = len(every) - 1 - back
        final_record, final_add = np.concatenate(last)[final], np.concatenate(adds)[final]
        del touched, last, adds, every
        held = [int(c) for c in chunk_ids if int(c) in rows.owner]
        if held:  # replaced or deleted since the snapshot: removed once, in one pass
            rows.apply(dict.fromkeys(held))
        f.seek(first)
        for i, (change, _) in enumerate(store.records(f, dim)):
            if not len(change.ids):
                continue
            at = np.searchsorted(chunk_ids, change.ids)
            keep = np.flatnonzero((final_record[at] == i) & final_add[at])
            if len(keep):
                picked = [change.rows[j] for j in keep]
                rows.add(change.ids[keep].tolist(), picked, change.vecs[keep])
    return end
