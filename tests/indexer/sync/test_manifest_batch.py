"""Candidate docs are read from the manifest in one batched query (`IN (...)`), not one
SELECT per hit: the batch returns exactly what the per-row read did, for any ids
(missing ones, chunks without a doc, duplicates, more than one IN chunk)."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from indexer.backends.records import ChunkDoc
from indexer.sync.manifest import IN_CHUNK, Manifest
from indexer.sync.manifest_schema import FileEntry, doc_from_json

FILES = 50
PER_FILE = 30  # 1,500 chunk ids, 1,200 with a doc: more than two IN chunks


def _per_row(db: sqlite3.Connection, chunk_id: int) -> ChunkDoc | None:
    """The read search used to make once per hit."""
    row = db.execute("SELECT doc FROM chunks WHERE chunk_id = ?", (chunk_id,)).fetchone()
    return doc_from_json(row[0]) if row and row[0] else None


@pytest.fixture(scope="module")
def manifest(tmp_path_factory):
    m = Manifest(tmp_path_factory.mktemp("batch") / "manifest.sqlite")
    entries = []
    for f in range(FILES):
        ids = tuple(m.allocate(PER_FILE))
        path = f"bots/b/sessions/s{f % 3}/episodes/{f}.md"
        docs = tuple(
            ChunkDoc(
                cid,
                f"ep_{cid}",
                path,
                n,
                "episode",
                f"b:s{f % 3}",
                f"text {cid} 猫",
                tags=("t",) if n % 2 else (),
                created_at=cid,
            )  # fmt: skip
            for n, cid in enumerate(ids)
        )
        # Every fifth file was indexed without its docs (an entry from before they were
        # kept): its chunks exist, with no doc to return.
        kept = docs if f % 5 else ()
        entries.append(FileEntry(path, 1, 1, "sha", "episode", f"b:s{f % 3}", ids, docs=kept))
    m.apply(put=entries)
    yield m
    m.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ids=st.lists(st.integers(-5, FILES * PER_FILE + 200), max_size=1600))
def test_batched_read_equals_the_per_row_read(manifest, ids):
    with manifest._lock:
        expected = {cid: d for cid in ids if (d := _per_row(manifest._db, cid)) is not None}
    got = manifest.docs(ids)
    assert got == expected
    assert all(got[cid].chunk_id == cid for cid in got)
    if ids:  # the one-id read is the batch of one
        assert manifest.doc(ids[0]) == expected.get(ids[0])


def test_the_fixture_has_docs_missing_ids_and_docless_chunks(manifest):
    # The property above is only worth something if all three kinds of id exist.
    with manifest._lock:
        held = {r[0] for r in manifest._db.execute("SELECT chunk_id FROM chunks")}
        with_doc = {
            r[0] for r in manifest._db.execute("SELECT chunk_id FROM chunks WHERE doc NOT NULL")
        }
    assert len(with_doc) > IN_CHUNK * 2 and held - with_doc
    assert set(manifest.docs(range(FILES * PER_FILE + 100))) == with_doc


def test_a_search_reads_the_manifest_once(manifest, monkeypatch):
    """The hot path: every candidate of a search in one call of Manifest.docs."""
    from indexer.backends.text_index import TextIndex
    from indexer.retrieval.search import SearchRequest, hybrid_search

    docs = list(manifest.docs(range(FILES * PER_FILE)).values())
    text = TextIndex.open(None)
    text.upsert(docs)
    text.commit()
    calls: list[int] = []

    def lookup(chunk_ids):
        wanted = list(chunk_ids)
        calls.append(len(wanted))
        return manifest.docs(wanted)

    request = SearchRequest(query="text 猫", index_key="b:s1", top_k=5, mode="text")
    found = hybrid_search(request, {"text": text}, lookup)
    text.close()
    assert len(found) == 5 and all(r.doc.index_key == "b:s1" for r in found)
    assert calls == [max(calls)] and calls[0] >= 50  # one read of all ~200 candidates
