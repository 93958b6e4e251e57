"""One scope's vectors: 8-bit coded rows in a faiss flat-code index, with ids and filter fields.

Why per scope: every vector search is inside one index_key, so scanning only that scope's
rows makes its cost follow the scope's size, not the vault's (a selector over every row of
one flat index measured ~40 ms a search at 1M chunks, 3 ms for the same scope alone).
Why 8-bit codes: a quarter of float32's memory (0.5 GB instead of 2 GB, float16's 1 GB, at 1M
chunks of 512-d), the one structure that grows with the vault. Each dimension d is coded in
[-h_d, h_d] (`ranges`), set once per index from the first rows it sees and kept in the
snapshot, so codes never drift: h_d = max(1.5 * max |x_d|, max over all d of max |x_d|) over
the model's calibration sentences (templates/calibration_sentences.txt; VectorIndex passes
them as `initial`), so the codes depend on the model only, never on which memory a vault
happened to index first: a deleted and rebuilt index codes every row exactly as before.
Exact top-5 sets kept on 10k USE vectors (300 perturbed queries): calibration ranges 99.7%,
the first row's 99.0%, the first 256 rows' 99.5%, a fixed [-1, 1] 96.7%, float16 100%;
values outside are clipped. The quality check on LoCoMo and MADial is in
bench/results/memory.json.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence

import faiss
import numpy as np

from indexer.backends.vector_store import Row

# A scope's storage grows by this factor, not faiss's own doubling (std::vector), which left
# up to half of 1 GB of float16 rows unused at 1M chunks.
GROWTH = 1.25
# Up to this many rows filtered out (archived, expired, another kind), fetch k + that many
# and drop them: still exact, and faster than faiss's per-row selector path.
OVERFETCH = 1024


# Widening of the first rows' per-dimension range, and its floor (see the module doc).
RANGE_GROWTH = 1.5


def train_ranges(vecs: np.ndarray) -> np.ndarray:
    """Per-dimension half-ranges h_d for the 8-bit codes, from the first rows seen."""
    top = np.abs(np.asarray(vecs, dtype=np.float32)).max(axis=0)
    return np.minimum(1.0, np.maximum(RANGE_GROWTH * top, top.max())).astype(np.float32)


def _new_index(dim: int, ranges: np.ndarray) -> faiss.IndexScalarQuantizer:
    code, inner_product = faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT
    index = faiss.IndexScalarQuantizer(dim, code, inner_product)
    # QT_8bit's trained table: every dimension's lower bound, then its width.
    faiss.copy_array_to_vector(np.concatenate([-ranges, 2 * ranges]), index.sq.trained)
    index.is_trained = True
    return index


class Codes:
    """Small ints for the few distinct statuses and kinds, shared by every scope."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self._of: dict[str, int] = {}

    def code(self, name: str) -> int:
        found = self._of.get(name)
        if found is None:
            found = self._of[name] = len(self.names)
            self.names.append(name)
        return found

    def wanted(self, names: set[str]) -> np.ndarray:
        """code -> is it one of `names` (a lookup table for numpy fancy indexing)."""
        return np.array([n in names for n in self.names] or [False], dtype=bool)


class ScopeVectors:
    """Rows in insertion order; faiss position i holds ids[i], status[i], kind[i], ..."""

    __slots__ = ("_arrays", "_capacity", "_ranges", "expires", "ids", "index", "kind", "status")

    def __init__(self, dim: int, ranges: np.ndarray) -> None:
        self._ranges = ranges
        self.index = _new_index(dim, ranges)
        self._capacity = 0  # bytes reserved in index.codes
        self.ids: list[int] = []
        self.status: list[int] = []
        self.kind: list[int] = []
        self.expires: list[int] = []
        self._arrays: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None

    def __len__(self) -> int:
        return len(self.ids)

    def add(
        self, ids: Sequence[int], rows: Sequence[tuple[int, int, int]], vecs: np.ndarray
    ) -> None:
        need = (len(self.ids) + len(vecs)) * self.index.code_size
        if need > self._capacity:
            self._regrow(int(need * GROWTH))
        self.index.add(np.ascontiguousarray(vecs, dtype=np.float32))
        self.ids.extend(ids)
        for status, kind, expires in rows:
            self.status.append(status)
            self.kind.append(kind)
            self.expires.append(expires)
        self._arrays = None

    def _regrow(self, capacity: int) -> None:
        # Resizing an empty std::vector allocates exactly; shrinking it back keeps that
        # capacity, so the adds up to `capacity` bytes never reallocate.
        used = len(self.ids) * self.index.code_size
        grown = _new_index(self.index.d, self._ranges)
        grown.codes.resize(capacity)
        if used:
            target = faiss.rev_swig_ptr(grown.codes.data(), used)
            target[:] = faiss.rev_swig_ptr(self.index.codes.data(), used)
        grown.codes.resize(used)
        grown.ntotal = len(self.ids)
        self.index, self._capacity = grown, capacity

    def fit(self) -> None:
        """Drop the growth room (a reader's rows after loading)."""
        if self._capacity > len(self.ids) * self.index.code_size:
            self._regrow(len(self.ids) * self.index.code_size)

    def remove(self, gone: set[int]) -> None:
        keep = [i for i, cid in enumerate(self.ids) if cid not in gone]
        if len(keep) == len(self.ids):
            return
        drop = np.setdiff1d(np.arange(len(self.ids), dtype=np.int64), np.array(keep, np.int64))
        # IndexFlatCodes.remove_ids takes positions and keeps the others in order.
        self.index.remove_ids(faiss.IDSelectorBatch(drop))
        for name in ("ids", "status", "kind", "expires"):
            values = getattr(self, name)
            setattr(self, name, [values[i] for i in keep])
        self._arrays = None

    def _columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        if self._arrays is None:  # rebuilt after a change, reused by every search until then
            self._arrays = (
                np.array(self.ids, dtype=np.int64),
                np.array(self.status, dtype=np.int32),
                np.array(self.kind, dtype=np.int32),
                np.array(self.expires, dtype=np.int64),
            )
        return self._arrays

    def search(
        self,
        vec: np.ndarray,
        k: int,
        status_ok: np.ndarray,
        kind_ok: np.ndarray,
        now: int | None,
        allowed: np.ndarray | None = None,
    ) -> list[tuple[int, float]]:
        ids, status, kind, expires = self._columns()
        mask = status_ok[status] & kind_ok[kind]
        if now is not None:
            mask &= (expires == 0) | (expires > now)
        if (
            allowed is not None
        ):  # field filters (indexer.retrieval.filters): part of the mask, pre-rank
            mask &= np.isin(ids, allowed)
        allowed = int(mask.sum())
        k = min(k, allowed)
        if k <= 0:
            return []
        excluded = len(ids) - allowed
        if excluded <= OVERFETCH:  # the k best allowed rows are among the k + excluded best
            scores, rows = self.index.search(vec, min(len(ids), k + excluded))
        else:
            bits = np.packbits(mask, bitorder="little")  # must outlive the search call
            selector = faiss.IDSelectorBitmap(len(mask), faiss.swig_ptr(bits))
            params = faiss.SearchParameters(sel=selector)
            scores, rows = self.index.search(vec, k, params=params)
        hits = [(int(ids[r]), float(s)) for s, r in zip(scores[0], rows[0], strict=True)
                if r >= 0 and mask[r]]  # fmt: skip
        return hits[:k]

    def float32_blocks(self, rows: int = 65536) -> Iterator[np.ndarray]:
        """The rows as float32 (the on-disk format), decoded a block at a time."""
        n, size = len(self.ids), self.index.code_size
        if not n:
            return
        raw = faiss.rev_swig_ptr(self.index.codes.data(), n * size)
        codes = raw.reshape(n, size)  # a view: no copy of the scope's rows
        for start in range(0, n, rows):
            yield self.index.sa_decode(np.ascontiguousarray(codes[start : start + rows]))


Changes = dict[int, "tuple[Row, np.ndarray] | None"]  # chunk id -> new row, or None = delete


class ScopedRows:
    """Every committed row, grouped by scope. Not thread-safe: the caller holds a lock."""

    def __init__(self, dim: int, initial: Callable[[], np.ndarray] | None = None) -> None:
        self.dim = dim
        # Where the codes' ranges come from when nothing stored them (see train_ranges).
        self._initial = initial
        self.scopes: dict[str, ScopeVectors] = {}
        self.owner: dict[int, str] = {}  # chunk id -> index_key, for deletes and ids()
        self.ranges: np.ndarray | None = None  # the 8-bit codes' ranges, set by the first add
        self.status, self.kind = Codes(), Codes()

    def __len__(self) -> int:
        return len(self.owner)

    def apply(self, changes: Changes) -> None:
        # Remove first: an updated chunk is removed and added again, never held twice.
        gone: dict[str, set[int]] = {}
        for cid in changes:
            key = self.owner.pop(cid, None)
            if key is not None:
                gone.setdefault(key, set()).add(cid)
        for key, cids in gone.items():
            scope = self.scopes[key]
            scope.remove(cids)
            if not len(scope):
                del self.scopes[key]
        added = [(cid, c) for cid, c in changes.items() if c is not None]
        if added:
            self.add(
                [cid for cid, _ in added],
                [row for _, (row, _) in added],
                np.stack([vec for _, (_, vec) in added]),
            )

    def add(self, ids: Sequence[int], rows: Sequence[Row], vecs: np.ndarray) -> None:
        """New chunks (ids not held yet), grouped into their scopes in one call each."""
        if self.ranges is None and len(vecs):
            self.ranges = self._initial() if self._initial is not None else train_ranges(vecs)
        groups: dict[str, list[int]] = {}
        for i, row in enumerate(rows):
            groups.setdefault(row[0], []).append(i)
        for key, picks in groups.items():
            scope = self.scopes.get(key)
            if scope is None:
                assert self.ranges is not None
                scope = self.scopes[key] = ScopeVectors(self.dim, self.ranges)
            coded = [
                (self.status.code(rows[i][1]), self.kind.code(rows[i][2]), int(rows[i][3]))
                for i in picks
            ]
            whole = len(picks) == len(rows)  # one scope (a snapshot block): no copy
            scope.add([ids[i] for i in picks], coded, vecs if whole else vecs[picks])
            self.owner.update((ids[i], key) for i in picks)

    def fit(self) -> None:
        for scope in self.scopes.values():
            scope.fit()

    def search(
        self,
        vec: np.ndarray,
        index_keys: Sequence[str],
        k: int,
        statuses: set[str],
        kinds: set[str],
        now: int | None,
        allowed: Collection[int] | None = None,
    ) -> list[tuple[int, float]]:
        """The k best rows of these scopes together: each scope's own k best, merged (the
        k best of a union are among them), best first, ties by chunk id. `allowed`: only
        these chunk ids (None = no such filter)."""
        status_ok, kind_ok = self.status.wanted(statuses), self.kind.wanted(kinds)
        only = None if allowed is None else np.fromiter(allowed, dtype=np.int64)
        found: list[tuple[int, float]] = []
        for key in dict.fromkeys(index_keys):
            scope = self.scopes.get(key)
            if scope is not None:
                found += scope.search(vec, k, status_ok, kind_ok, now, only)
        if len(index_keys) > 1:
            found.sort(key=lambda hit: (-hit[1], hit[0]))
        return found[:k]

    def snapshot(self) -> tuple[np.ndarray, Iterator[Row], Iterator[np.ndarray]]:
        """ids, rows and float32 vectors, scope after scope (the on-disk order); rows and
        vectors are generated as they are written, never all at once."""
        keys = sorted(self.scopes)
        ids = np.array([cid for k in keys for cid in self.scopes[k].ids], dtype=np.int64)
        rows = (
            (k, self.status.names[s], self.kind.names[t], e)
            for k in keys
            for s, t, e in zip(
                self.scopes[k].status, self.scopes[k].kind, self.scopes[k].expires, strict=True
            )
        )
        blocks = (block for k in keys for block in self.scopes[k].float32_blocks())
        return ids, rows, blocks
