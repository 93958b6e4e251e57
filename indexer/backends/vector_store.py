"""On-disk form of a vector index: a snapshot file plus an append-only log of commits.

`vectors.mvv` (format 1, as before): magic, a JSON header (identity, dim, per-row metadata,
and now a `generation` token), the int64 ids, the float32 rows. `vectors.log`: a magic line
naming the snapshot generation it extends, then one record per commit (ids deleted, rows
added or replaced) behind a CRC.

Why a log: rewriting the whole snapshot on every commit made a cold build quadratic (at 1M
chunks, ~3,900 batch commits of up to 2 GB each). A commit now appends only its own rows,
and the snapshot is rewritten when the log outgrows it, so the bytes written over a build
stay a small multiple of the final size.

Crash safety: the snapshot is replaced by temp + fsync + rename, as before. A log whose
generation is not the snapshot's is stale (a crash between the two renames, or an older
MemVault that rewrote the snapshot without knowing the log) and is ignored: the snapshot
already holds everything it did, or the sync's self-heal re-sends what is missing. A torn
last record (crash mid-append) fails its CRC; readers stop before it and the writer cuts it
off. Its batch never reached the manifest, so sync redoes it.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import struct
import uuid
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from vault.errors import Unavailable
from vault.files.safewrite import fsync_dir
from vault.files.tempfiles import removed_on_error

SNAPSHOT_NAME = "vectors.mvv"
LOG_NAME = "vectors.log"
MAGIC = b"MVVEC\x001\n"
LOG_MAGIC = b"MVVLOG1\n"
FORMAT = 1
_RECORD = struct.Struct("<IQQ")  # crc32 of the body, JSON length, row count
# Rows per read when loading: never a second full copy in memory. A block is read as float32
# and regrouped by scope before faiss codes it, so it costs ~3x its size at the peak:
# 65,536 rows (128 MB at 512-d) made the biggest transient of a reader's open.
_COPY_ROWS = 8192

Row = tuple[str, str, str, int]  # index_key, status, kind, expires_at
# Header field (optional): the per-dimension ranges of the in-memory 8-bit codes
# (indexer.backends.vector_scope); a file without it is read as before.
RANGES_FIELD = "code_ranges"


def pack_floats(values: np.ndarray) -> str:
    """float32 values as base64 text: exact, and small beside the rows it describes."""
    return base64.b64encode(np.ascontiguousarray(values, dtype="<f4").tobytes()).decode("ascii")


def unpack_floats(text: object, count: int) -> np.ndarray | None:
    """pack_floats' values, or None if `text` is not `count` of them."""
    if not isinstance(text, str):
        return None
    try:
        raw = base64.b64decode(text, validate=True)
    except ValueError:
        return None
    if len(raw) != 4 * count:
        return None
    return np.frombuffer(raw, dtype="<f4").astype(np.float32)


@dataclass
class Change:
    """One commit: ids to drop, then (id, metadata, vector) rows to add or replace."""

    deleted: list[int]
    ids: np.ndarray  # int64 (n,)
    rows: list[Row]
    vecs: np.ndarray  # float32 (n, dim)


class IdentityError(Unavailable, ValueError):
    """The snapshot holds vectors of another model or dimension (as IndexMismatchError, which
    the vector index raises with it: rebuild the index)."""


def read_snapshot(
    path: Path,
    identity: str,
    dim: int,
    sink: Callable[[np.ndarray, list[Row], np.ndarray], None],
    header: Callable[[dict[str, object]], None] | None = None,
) -> str | None:
    """Feed the snapshot to `sink(ids, rows, vectors)` in blocks (never a second full copy
    in memory); returns its generation. ValueError if unreadable, IdentityError if foreign."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if f.read(len(MAGIC)) != MAGIC:
            raise ValueError("not a MemVault vector file")
        (hlen,) = struct.unpack("<Q", f.read(8))
        head, rows = _header(f.read(hlen).decode("utf-8"))
        n, found = int(head["count"]), int(head["dim"])
        if len(MAGIC) + 8 + hlen + (8 + 4 * found) * n != size:
            raise ValueError("size does not match its header")
        if head["format"] != FORMAT:
            raise ValueError(f"format {head['format']} is not {FORMAT}")
        if head["identity"] != identity or found != dim:
            raise IdentityError(
                f"it holds vectors of identity={head['identity']!r} dim={found}, "
                f"not identity={identity!r} dim={dim}"
            )
        if header is not None:
            header(head)
        ids = np.frombuffer(f.read(8 * n), dtype="<i8").astype(np.int64)
        for start in range(0, n, _COPY_ROWS):
            end = min(n, start + _COPY_ROWS)
            block = np.frombuffer(f.read(4 * dim * (end - start)), dtype="<f4")
            part = list(itertools.islice(rows, end - start))
            if len(part) != end - start:
                raise ValueError("fewer rows than its count")
            sink(ids[start:end], part, block.reshape(-1, dim))
        if next(rows, None) is not None:
            raise ValueError("more rows than its count")
        return head.get("generation")


_ROWS_AT = ',"rows":['  # written last (write_snapshot); a quote inside a string is escaped


def _header(text: str) -> tuple[dict[str, object], Iterator[Row]]:
    """The header without its rows, and the rows parsed one at a time: json.loads of all of
    them at once held ~1M lists and strings at 1M chunks (the reader's peak at open)."""
    cut = text.find(_ROWS_AT)
    if cut < 0 or not text.endswith("]}"):  # another writer's layout: parse it whole
        head = json.loads(text)
        return head, (tuple(r) for r in head.pop("rows"))
    head = json.loads(text[:cut] + "}")

    def rows() -> Iterator[Row]:
        decode, at, end = json.JSONDecoder().raw_decode, cut + len(_ROWS_AT), len(text) - 2
        while at < end:
            row, at = decode(text, at)
            yield tuple(row)  # type: ignore[misc]
            at += text[at] == ","

    return head, rows()


def write_snapshot(
    folder: Path,
    identity: str,
    dim: int,
    ids: np.ndarray,
    rows: Iterable[Row],
    blocks: Iterator[np.ndarray],
    extra: dict[str, object] | None = None,
) -> str:
    """Replace the snapshot (temp + fsync + rename), then start an empty log for it."""
    generation = uuid.uuid4().hex
    head = {"format": FORMAT, "identity": identity, "dim": dim, "count": len(ids)}
    head |= extra or {}
    head["generation"] = generation
    target = folder / SNAPSHOT_NAME
    tmp = folder / f".{SNAPSHOT_NAME}.{os.getpid()}.tmp"
    with removed_on_error(tmp), open(tmp, "wb") as f:
        # The header is streamed and its length patched in after: one JSON string of 1M
        # rows at once cost ~200 MB of peak memory.
        f.write(MAGIC + bytes(8))
        opening = json.dumps(head, ensure_ascii=False, separators=(",", ":"))[:-1]
        f.write((opening + ',"rows":[').encode())
        pending: list[Row] = []
        count = 0
        for row in rows:
            pending.append(row)
            count += 1
            if len(pending) == 10000 or count == len(ids):
                part = json.dumps(pending, ensure_ascii=False, separators=(",", ":"))[1:-1]
                f.write(("," if count > len(pending) else "").encode() + part.encode())
                pending = []
        if count != len(ids) or pending:
            raise ValueError(f"{count} rows for {len(ids)} ids")
        f.write(b"]}")
        hlen = f.tell() - len(MAGIC) - 8
        f.seek(len(MAGIC))
        f.write(struct.pack("<Q", hlen))
        f.seek(0, os.SEEK_END)
        f.write(np.ascontiguousarray(ids, dtype="<i8").tobytes())
        written = 0
        for block in blocks:
            f.write(np.ascontiguousarray(block, dtype="<f4").data)
            written += len(block)
        if written != len(ids):
            raise ValueError(f"{written} vectors for {len(ids)} ids")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, target)
    start_log(folder, generation)
    fsync_dir(folder)
    return generation


def start_log(folder: Path, generation: str) -> int:
    """An empty log extending snapshot `generation` (replaces any other log); its size."""
    tmp = folder / f".{LOG_NAME}.{os.getpid()}.tmp"
    head = LOG_MAGIC + generation.encode() + b"\n"
    with removed_on_error(tmp), open(tmp, "wb") as f:
        f.write(head)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, folder / LOG_NAME)
    return len(head)


def append_log(folder: Path, change: Change) -> int:
    """Append one commit and fsync; returns the log's new size in bytes."""
    rows = [list(r) for r in change.rows]
    header = json.dumps({"deleted": change.deleted, "rows": rows}, ensure_ascii=False).encode()
    body = (
        header
        + np.ascontiguousarray(change.ids, dtype="<i8").tobytes()
        + np.ascontiguousarray(change.vecs, dtype="<f4").tobytes()
    )
    record = _RECORD.pack(zlib.crc32(body), len(header), len(change.ids)) + body
    with open(folder / LOG_NAME, "ab") as f:
        f.write(record)
        f.flush()
        os.fsync(f.fileno())
        return f.tell()


def open_log(folder: Path, generation: str | None, offset: int = 0) -> tuple[BinaryIO, int] | None:
    """The log positioned at its first record after `offset` (0 = from the start), or None
    if it is missing or stale (another generation). The caller closes it."""
    try:
        f = open(folder / LOG_NAME, "rb")  # noqa: SIM115 - returned open, or closed below
    except FileNotFoundError:
        return None
    if (
        generation is not None
        and f.readline(len(LOG_MAGIC)) == LOG_MAGIC
        and f.readline(64).rstrip(b"\n").decode("ascii", "replace") == generation
    ):
        pos = max(offset, f.tell())
        f.seek(pos)
        return f, pos
    f.close()
    return None


def records(f: BinaryIO, dim: int) -> Iterator[tuple[Change, int]]:
    """Each good record from f's position, read one at a time (a 1M-chunk log is GBs), and
    the offset after it; stops at a torn one (a crash mid-append: it never committed)."""
    pos = f.tell()
    while len(raw := f.read(_RECORD.size)) == _RECORD.size:
        crc, hlen, n = _RECORD.unpack(raw)
        body = f.read(hlen + (8 + 4 * dim) * n)
        if len(body) != hlen + (8 + 4 * dim) * n or zlib.crc32(body) != crc:
            return
        head = json.loads(body[:hlen])
        ids = np.frombuffer(body, "<i8", n, hlen).astype(np.int64)
        vecs = np.frombuffer(body, "<f4", n * dim, hlen + 8 * n).reshape(n, dim)
        pos += _RECORD.size + len(body)
        yield Change(head["deleted"], ids, [tuple(r) for r in head["rows"]], vecs), pos


def read_log(
    folder: Path, generation: str | None, dim: int, offset: int = 0
) -> tuple[list[Change], int]:
    """Records after `offset` (0 = from the start) and the offset after the last good one.
    A missing or stale log (another generation) yields nothing and offset 0."""
    opened = open_log(folder, generation, offset)
    if opened is None:
        return [], 0
    f, pos = opened
    out = []
    with f:
        for change, pos in records(f, dim):  # noqa: B007 - pos: the end of the last one
            out.append(change)
    return out, pos


def cut_torn_tail(folder: Path, good: int) -> None:
    """Writer only: drop bytes after the last good record so new appends follow it."""
    path = folder / LOG_NAME
    if good and path.exists() and path.stat().st_size > good:
        with open(path, "r+b") as f:
            f.truncate(good)
            os.fsync(f.fileno())


def stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)
