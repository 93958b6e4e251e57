"""Full-text backend: BM25 over tantivy, scope filters inside the query, one writer per folder."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path

import numpy as np
import tantivy

from indexer.backends import tokenize
from indexer.backends.backend import (
    DEFAULT_KINDS,
    DEFAULT_STATUSES,
    IndexLockedError,
    IndexMismatchError,
    IndexMissingError,
    scope_keys,
)
from indexer.backends.locks import WriterLock, check_chunk_id
from indexer.backends.readonly import ShadowDir, no_index_error
from indexer.backends.records import ChunkDoc, Hit
from vault.layout.readonly import can_write

log = logging.getLogger(__name__)

_SCOPE_FIELDS = ("episode_id", "path", "kind", "index_key", "speaker_id", "speaker_name", "status")
_RAW_FIELDS = (*_SCOPE_FIELDS, "priority", "category", "source")  # the filter fields
# verified is 0/1. All are fast fields: filters (indexer.retrieval.filters) run inside the query.
_INT_FIELDS = ("created_at", "importance", "expires_at", "updated_at", "verified")
_WRITER_HEAP = 64_000_000
_ID_WINDOW = 1 << 18  # ids listed per search by id_array(): ~35 MB of hits at most
# CJK bigram terms count double against single characters and words: on MADial zh this
# lifted text-only recall@5 51.5 -> 54.0 and hybrid 58.1 -> 58.8 (bench/retrieval);
# English text has no bigrams, so LoCoMo and MADial en are unchanged.
BIGRAM_BOOST = 2.0


def _should(queries: list[tantivy.Query]) -> tantivy.Query:
    if len(queries) == 1:
        return queries[0]
    return tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in queries])


def _schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    sb.add_unsigned_field("chunk_id", stored=True, indexed=True, fast=True)
    for name in _RAW_FIELDS:
        sb.add_text_field(name, stored=True, tokenizer_name="raw", index_option="basic")
    # Case-folded (vault.format.tags.tag_key): a filter for HOBBY finds a memory tagged Hobby.
    sb.add_text_field("tags", stored=True, tokenizer_name="raw", index_option="basic")
    for name in _INT_FIELDS:
        sb.add_integer_field(name, stored=True, indexed=True, fast=True)
    # Text is not stored: the vault files are the truth and the caller reads them.
    sb.add_text_field("text", tokenizer_name=tokenize.TEXT_ANALYZER, index_option="freq")
    sb.add_text_field("text_cjk2", tokenizer_name=tokenize.BIGRAM_ANALYZER, index_option="freq")
    return sb.build()


class TextIndex:
    """SearchBackend over tantivy. Use `TextIndex.open`, not the constructor."""

    def __init__(
        self, index: tantivy.Index, folder: Path | None, lock: WriterLock | None, writer: bool
    ) -> None:
        self._index = index
        self._schema = index.schema
        self._folder = folder
        self._lock = lock
        self._writer: tantivy.IndexWriter | None = None
        self._dirty = False
        self._meta_stamp: tuple[int, int] | None = None
        self._shadow: ShadowDir | None = None  # set by open() on a folder it cannot write
        if writer:
            try:
                self._writer = index.writer(heap_size=_WRITER_HEAP, num_threads=1)
            except ValueError as exc:
                # Same process, other handle: tantivy's own lock; report it like ours.
                raise IndexLockedError(
                    f"the text index in {folder or '<memory>'} already has a writer in this "
                    "process; open it read-only (writer=False) instead"
                ) from exc
        self._reload()

    @classmethod
    def open(cls, folder: Path | None, *, writer: bool = True) -> TextIndex:
        schema = _schema()
        if folder is None:
            index = tantivy.Index(schema)
            tokenize.register(index)
            return cls(index, None, None, writer=writer)
        folder = Path(folder)
        lock: WriterLock | None = None
        shadow: ShadowDir | None = None
        if writer:
            folder.mkdir(parents=True, exist_ok=True)
            lock = WriterLock.acquire(folder, "text index")
            try:
                index = tantivy.Index(schema, path=str(folder), reuse=True)
            except ValueError as exc:
                lock.release()
                raise IndexMismatchError(f"text index in {folder}: {exc}; rebuild it") from exc
        else:
            writable = can_write(folder)
            if not folder.is_dir() or not tantivy.Index.exists(str(folder)):
                if not writable:
                    raise no_index_error(folder)
                raise IndexMissingError(f"no text index in {folder}: open it once as writer")
            # tantivy creates a lock file even to read: where this process cannot write,
            # it reads through a shadow folder of links in the temp dir (indexer.backends.readonly).
            shadow = None if writable else ShadowDir(folder)
            try:
                index = tantivy.Index.open(str(shadow.path if shadow else folder))
                if index.schema != schema:
                    raise IndexMismatchError(
                        f"text index in {folder} has another schema; rebuild it"
                    )
            except BaseException:
                if shadow is not None:
                    shadow.close()
                raise
        tokenize.register(index)
        log.info("event=text_index_open folder=%s writer=%s", folder, writer)
        try:
            opened = cls(index, folder, lock, writer=writer)
        except BaseException:
            if lock is not None:
                lock.release()
            if shadow is not None:
                shadow.close()
            raise
        opened._shadow = shadow
        return opened

    # -- writes ----------------------------------------------------------------------------

    def _require_writer(self) -> tantivy.IndexWriter:
        if self._writer is None:
            raise PermissionError("this TextIndex was opened read-only (writer=False)")
        return self._writer

    def _delete_query(self, chunk_id: int) -> tantivy.Query:
        # delete_documents_by_term takes a Python int as i64 and silently matches nothing
        # on this u64 field; a term query goes through the schema and gets the type right.
        return tantivy.Query.term_query(self._schema, "chunk_id", check_chunk_id(chunk_id))

    def _document(self, doc: ChunkDoc) -> tantivy.Document:
        d = tantivy.Document()
        d.add_unsigned("chunk_id", check_chunk_id(doc.chunk_id))
        for name in _RAW_FIELDS:
            d.add_text(name, getattr(doc, name))
        for tag in doc.tag_keys:
            d.add_text("tags", tag)
        for name in _INT_FIELDS:
            d.add_integer(name, int(getattr(doc, name)))
        # Speaker name and tags join the searchable text so "Alice" finds Alice's memories.
        for value in (doc.text, doc.speaker_name, *doc.tags):
            if value:
                d.add_text("text", value)
                bigrams = tokenize.bigram_text(value)
                if bigrams:
                    d.add_text("text_cjk2", bigrams)
        return d

    def upsert(self, docs: Sequence[ChunkDoc]) -> None:
        writer = self._require_writer()
        for doc in docs:
            writer.delete_documents_by_query(self._delete_query(doc.chunk_id))
            writer.add_document(self._document(doc))
        self._dirty = self._dirty or bool(docs)

    def delete(self, chunk_ids: Iterable[int]) -> None:
        writer = self._require_writer()
        for chunk_id in chunk_ids:
            writer.delete_documents_by_query(self._delete_query(chunk_id))
            self._dirty = True

    def commit(self) -> None:
        writer = self._require_writer()
        started = time.perf_counter()
        writer.commit()
        # Searchers see a commit ~0.5 s later unless told now: read-your-writes needs this.
        self._index.reload()
        self._dirty = False
        log.debug("event=text_commit ms=%.1f", (time.perf_counter() - started) * 1000)

    # -- reads -----------------------------------------------------------------------------

    def _reload(self) -> None:
        if self._shadow is not None:
            self._shadow.refresh()  # link the segments a writer added since
        self._index.reload()
        self._meta_stamp = self._stat_meta()

    def _stat_meta(self) -> tuple[int, int] | None:
        if self._folder is None:
            return None
        try:
            st = os.stat(self._folder / "meta.json")
        except FileNotFoundError:
            return None
        return (st.st_mtime_ns, st.st_size)

    def _refresh_if_stale(self) -> None:
        # A read-only handle in another process would otherwise lag the writer by ~0.5 s
        # (tantivy's file watcher); one stat per search keeps it exact.
        if self._writer is None and self._folder is not None:
            stamp = self._stat_meta()
            if stamp != self._meta_stamp:
                self._reload()

    def _any_of(self, field: str, values: Iterable[str]) -> tantivy.Query:
        return _should([tantivy.Query.term_query(self._schema, field, v) for v in values])

    def _build_query(
        self,
        query: str,
        index_keys: Sequence[str],
        statuses: Sequence[str],
        kinds: Sequence[str],
        now: int | None,
        allowed: Collection[int] | None = None,
    ) -> tantivy.Query | None:
        terms = tokenize.analyze_query(query)
        should = [self._word(t) for t in terms.matching] + [
            tantivy.Query.boost_query(
                tantivy.Query.term_query(self._schema, "text_cjk2", t, "freq"), BIGRAM_BOOST
            )
            for t in terms.bigrams
        ]
        if not should:
            return None
        filters = [
            # Several keys = one OR filter: one BM25 ranking, with the index-wide statistics
            # every key's scores already share, so they compare.
            self._any_of("index_key", index_keys),
            self._any_of("status", statuses),
            self._any_of("kind", kinds),
        ]
        if now is not None:
            never = tantivy.Query.term_query(self._schema, "expires_at", 0)
            later = tantivy.Query.range_query(
                self._schema,
                "expires_at",
                tantivy.FieldType.Integer,
                lower_bound=int(now),
                include_lower=False,
            )
            filters.append(_should([never, later]))
        if allowed is not None:  # field filters (indexer.retrieval.filters), inside the query
            ids = [check_chunk_id(cid) for cid in sorted(allowed)]
            filters.append(tantivy.Query.term_set_query(self._schema, "chunk_id", ids))
        # Filters must not move BM25 scores: wrap them to score 0.
        clauses = [(tantivy.Occur.Must, tantivy.Query.const_score_query(f, 0.0)) for f in filters]
        clauses.append((tantivy.Occur.Must, _should(should)))
        # Next to Must clauses a Should clause is optional: it only adds to the score of a
        # memory that already matched, so one shared character (点) is not a match by itself.
        clauses.extend((tantivy.Occur.Should, self._word(t)) for t in terms.tiebreak)
        return tantivy.Query.boolean_query(clauses)

    def _word(self, term: str) -> tantivy.Query:
        return tantivy.Query.term_query(self._schema, "text", term, "freq")

    def search(
        self,
        query: str,
        index_key: str | Sequence[str],
        limit: int,
        *,
        statuses: Sequence[str] = DEFAULT_STATUSES,
        kinds: Sequence[str] = DEFAULT_KINDS,
        now: int | None = None,
        allowed: Collection[int] | None = None,
    ) -> list[Hit]:
        keys = scope_keys(index_key)
        if limit <= 0 or not keys or not statuses or not kinds or not query or not query.strip():
            return []
        if allowed is not None and not allowed:
            return []
        q = self._build_query(query, keys, statuses, kinds, now, allowed)
        if q is None:
            return []
        self._refresh_if_stale()
        searcher = self._index.searcher()
        result = searcher.search(q, limit, count=False)
        if not result.hits:
            return []
        ids = searcher.fast_field_values("chunk_id", [addr for _, addr in result.hits])
        return [
            Hit(chunk_id=int(cid), score=float(score))
            for (score, _), cid in zip(result.hits, ids, strict=True)
        ]

    def term_stats(
        self, terms: Iterable[tuple[str, str]]
    ) -> tuple[int, dict[tuple[str, str], int]]:
        """(documents in the index, {(field, term): documents holding it}) for the idf
        weights of indexer.retrieval.relevance (whole index: the same weight in every scope)."""
        self._refresh_if_stale()
        searcher = self._index.searcher()
        return searcher.num_docs, {(f, t): searcher.doc_freq(f, t) for f, t in terms}

    def present(
        self, terms: Iterable[tuple[str, str]], index_keys: Sequence[str]
    ) -> frozenset[tuple[str, str]]:
        """The (field, term)s some memory of these scopes holds (indexer.retrieval.relevance: a word
        the chat has never used is a demand no memory of it meets). One tiny query each."""
        self._refresh_if_stale()
        searcher = self._index.searcher()
        scope = tantivy.Query.const_score_query(self._any_of("index_key", index_keys), 0.0)
        out = set()
        for field, term in terms:
            q = tantivy.Query.boolean_query([
                (tantivy.Occur.Must, scope),
                (tantivy.Occur.Must, tantivy.Query.term_query(self._schema, field, term)),
            ])  # fmt: skip
            if searcher.search(q, 1, count=False).hits:
                out.add((field, term))
        return frozenset(out)

    def ids(self) -> set[int]:
        self._refresh_if_stale()
        searcher = self._index.searcher()
        n = searcher.num_docs
        if n == 0:
            return set()
        result = searcher.search(tantivy.Query.all_query(), n, count=False)
        return {int(c) for c in searcher.fast_field_values("chunk_id", [a for _, a in result.hits])}

    def id_array(self) -> np.ndarray:
        """ids() as one int64 array, listed a window of ids at a time up to the largest: one
        all-docs search made a Python tuple per document (~300 MB at 1M chunks)."""
        self._refresh_if_stale()
        searcher = self._index.searcher()
        top = searcher.search(tantivy.Query.all_query(), 1, count=False, order_by_field="chunk_id")
        if not top.hits:
            return np.zeros(0, dtype=np.int64)
        parts, unsigned = [], tantivy.FieldType.Unsigned
        for low in range(0, int(top.hits[0][0]) + 1, _ID_WINDOW):
            q = tantivy.Query.range_query(
                self._schema, "chunk_id", unsigned, low, low + _ID_WINDOW - 1
            )
            hits = searcher.search(q, _ID_WINDOW, count=False).hits
            got = searcher.fast_field_values("chunk_id", [addr for _, addr in hits])
            parts.append(np.array(got, dtype=np.int64))
        return np.unique(np.concatenate(parts))

    def close(self) -> None:
        writer, self._writer = self._writer, None
        if writer is not None:
            if self._dirty:
                log.warning("event=text_close_uncommitted folder=%s", self._folder)
                writer.rollback()
            # Joins merge threads and drops the writer, releasing tantivy's own lock file.
            writer.wait_merging_threads()
        if self._lock is not None:
            self._lock.release()
            self._lock = None
        if self._shadow is not None:
            self._shadow.close()
            self._shadow = None

    def __enter__(self) -> TextIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
