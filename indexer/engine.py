"""One vault's search engine: indexes, embedder, syncer and watcher wired together.

`Engine.open(root)` is what the CLI, the plugin and the benchmarks call. The process that
opens it as writer (the default) is the vault's one index writer; another process opens
with `writer=False` and only reads, or gets IndexLockedError saying who writes.
"""

from __future__ import annotations

import logging
import shutil
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from indexer.backends.backend import IndexLockedError, IndexMismatchError, SearchBackend
from indexer.backends.calibration import calibrate
from indexer.backends.embed_cache import CachedEmbedder
from indexer.backends.embeddings import Embedder, default_embedder
from indexer.backends.heap import trim, tune
from indexer.backends.milvus_open import vault_opener
from indexer.backends.providers import embedder_from_settings
from indexer.backends.readonly import index_error
from indexer.backends.records import ChunkDoc
from indexer.backends.text_index import TextIndex
from indexer.backends.vector_open import VectorOpener
from indexer.retrieval.filters import Filters, allowed_chunks
from indexer.retrieval.ranking import RANK_VERSION, RankWeights
from indexer.retrieval.relevance import VectorScale
from indexer.retrieval.relevance_judge import Calibrated
from indexer.retrieval.search import Judged, SearchRequest, SearchResult, judged_search
from indexer.retrieval.search_query import SearchQuery
from indexer.sync.manifest import Manifest, index_dir
from indexer.sync.rebuild import VectorRebuild, open_vectors, vectors_dir
from indexer.sync.report import SyncReport
from vault.layout.keys import ScopeId
from vault.layout.layout import STATE_DIR
from vault.layout.readonly import can_write

if TYPE_CHECKING:
    # Annotations only. Importing them here would load, for every search from a cold shell,
    # watchdog, dulwich and the write path, which a reader never runs (issue 23 item 4);
    # Syncer and VaultWatcher are imported where a writer makes one.
    from indexer.sync.syncer import Syncer
    from indexer.sync.watcher import VaultWatcher
    from vault.writes.operations import Vault

log = logging.getLogger(__name__)

__all__ = ["Engine", "IndexLockedError"]

WRITE_WAIT_S = 10.0  # a write waits this long for a running sync (the model loading), no more


class Engine:
    def __init__(
        self,
        root: Path,
        embedder: CachedEmbedder,
        text: TextIndex,
        vector: SearchBackend,
        manifest: Manifest,
        syncer: Syncer | None,
        opener: VectorOpener | None = None,
    ) -> None:
        self.root = root
        self.embedder = embedder
        self.text = text
        self.vector = vector
        self.opener = opener
        self.manifest = manifest
        self.syncer = syncer
        self.watcher: VaultWatcher | None = None
        self.rebuild: VectorRebuild | None = None
        # The model whose vectors a writer opened with rebuild=False did not start building.
        self.rebuild_skipped: str | None = None

    @classmethod
    def open(
        cls,
        root: Path,
        *,
        embedder: Embedder | None = None,
        writer: bool = True,
        cache_path: Path | None = None,
        rebuild: bool = True,
        vectors: VectorOpener | None = None,
    ) -> Engine:
        """Open (or create) the indexes. If the vault was indexed with another embedding
        model that can still run here (the embedded default), that model keeps answering
        while the new one's vectors are built in the background (`rebuild`; False: not
        started, for a command that must not wait for it on close, e.g. a search). `vectors`
        opens the vector backend (indexer.backends.vector_open; default: the vault's `index:`
        setting, indexer.backends.milvus_open, which is local FAISS unless it names Milvus)."""
        root = Path(root)
        # Here, not in each command: the CLI, the console, the plugin and the benchmarks all
        # open the index the vault's settings (or MEMVAULT_INDEX) name.
        vectors = vectors or vault_opener(root)
        tune()  # before the vectors load: their buffers then give their pages back on free
        folder = index_dir(root)
        if can_write(folder):
            folder.mkdir(parents=True, exist_ok=True)
        elif writer:
            # Before anything is opened: callers catch IndexLockedError and open read-only.
            raise index_error(folder)
        cache = cache_path or root / STATE_DIR / "cache" / "embeddings.sqlite"
        cached = CachedEmbedder(embedder or embedder_from_settings(), cache)
        try:
            manifest = Manifest.for_vault(root)
        except BaseException:
            cached.close()
            raise
        stored = manifest.embedding_identity
        active = cached
        if stored not in (None, cached.identity.key):
            old = default_embedder()
            if stored == old.identity.key and vectors_dir(folder, stored).exists():
                active = CachedEmbedder(old, cache)
            elif not writer:
                manifest.close()
                cached.close()
                raise IndexMismatchError(
                    f"the index was built with {stored}, not {cached.identity.key}: set "
                    "MEMVAULT_EMBEDDING to that provider, or let the index writer rebuild it"
                )
        if writer and stored not in (None, active.identity.key) and vectors is None:
            # Vectors of a model that cannot run here are no use: re-embed with the new one.
            shutil.rmtree(vectors_dir(folder, stored), ignore_errors=True)
        opened: list[TextIndex | SearchBackend] = []
        try:
            opened.append(_open_text(folder / "text", writer))
            opened.append((vectors or open_vectors)(folder, active, writer=writer))
            text, vector = opened  # type: ignore[misc]
            syncer = None
            if writer:
                from indexer.sync.syncer import Syncer  # a writer's only: see the imports

                syncer = Syncer(
                    root, text, vector, manifest, embedding_identity=active.identity.key
                )
        except BaseException:
            for index in opened:
                index.close()
            manifest.close()
            cached.close()
            raise
        trim()  # what loading the vectors freed (a log read whole, rows before float16)
        engine = cls(root, active, text, vector, manifest, syncer, vectors)
        if writer and active is not cached and rebuild:
            engine.start_rebuild(cached)
        elif active is not cached:
            if writer:
                engine.rebuild_skipped = cached.identity.key
            cached.close()
        return engine

    def start_rebuild(self, new: CachedEmbedder) -> VectorRebuild:
        assert self.syncer is not None

        def swap(index: SearchBackend, embedder: CachedEmbedder) -> None:
            old = self.embedder
            self.vector, self.embedder = index, embedder
            old.close()

        self.rebuild = VectorRebuild(self.syncer, index_dir(self.root), new, swap, self.opener)
        log.warning(
            "vectors=rebuild from=%s to=%s reason=provider_changed",
            self.embedder.identity.key,
            new.identity.key,
        )
        self.rebuild.start()
        return self.rebuild

    # -- sync -----------------------------------------------------------------------

    def reconcile(self, *, limit: int | None = None) -> SyncReport:
        """`limit`: see Syncer.reconcile (indexer.cli.catch_up is what commands call)."""
        if self.syncer is None:
            raise IndexLockedError("this engine was opened read-only: it cannot write the index")
        return self.syncer.reconcile(limit=limit)

    def sync_paths(self, paths: list[str]) -> SyncReport:
        if self.syncer is None:
            raise IndexLockedError("this engine was opened read-only: it cannot write the index")
        return self.syncer.sync_paths(paths)

    def attach(self, vault: Vault) -> None:
        """Make every operation of `vault` searchable as soon as it returns; while the
        watcher runs a long sync (a start-up catch-up of thousands of files), a write (the
        plugin's `remember`, a console edit) waits WRITE_WAIT_S at most: the watcher saw its
        events and indexes it next. Its writes look for duplicates in this index too."""

        def written(paths: list[str]) -> None:
            if self.watcher is None or self.syncer is None:
                self.sync_paths(paths)
            elif self.syncer.try_sync_paths(paths, WRITE_WAIT_S) is None:
                log.info("index=write_deferred paths=%d reason=sync_running", len(paths))

        vault.on_written = written
        # Here, not at the top: a cold search must not load the write path (vault.writes).
        from indexer.dedupe import install

        install(vault, self)  # duplicates are looked for in this index (vault.writes.duplicates)

    def watch(self, on_batch: Callable[[SyncReport, float], None] | None = None) -> VaultWatcher:
        """Start watching (once); `on_batch` sees every applied batch, the first included."""
        if self.syncer is None:
            raise IndexLockedError("this engine was opened read-only: it cannot watch")
        if self.watcher is None:
            from indexer.sync.watcher import VaultWatcher  # watchdog: a writer's only

            self.watcher = VaultWatcher(self.root, self.syncer, on_batch=on_batch)
            self.watcher.start()
        return self.watcher

    # -- search ---------------------------------------------------------------------

    def search(self, ask: SearchQuery) -> list[SearchResult]:
        """Search inside the scope's index_key only (plus its session profiles if asked,
        and the episodes of the KB libraries attached to the chat's pipeline: one ranking of
        all of them, see indexer.retrieval.search); the fields: indexer.retrieval.search_query."""
        return self.run(self.request(ask))

    def request(self, ask: SearchQuery) -> SearchRequest:
        """The ranker's request for `ask`: index keys, filters as chunk ids, pinned ids."""
        clock = ask.now if ask.now is not None else int(time.time())
        scope, libraries, statuses = ask.scope, ask.libraries, ask.statuses
        keys = (scope.index_key, *(library.index_key for library in libraries))
        allowed = allowed_chunks(self.manifest, keys, ask.filters or Filters(), clock)
        return SearchRequest(
            query=ask.query,
            index_key=scope.index_key,
            library_keys=tuple(library.index_key for library in libraries),
            top_k=ask.top_k,
            mode=ask.mode,
            profile_key=scope.profile_key if ask.include_profiles else None,
            speaker_id=ask.speaker_id,
            linked_speakers=tuple(s for s in ask.linked_speakers if s),
            statuses=statuses,
            now=clock if ask.decay else None,
            weights=ask.weights or RankWeights(),
            floor=ask.floor,
            allowed=allowed,
            pinned=self._by_id(ask.query, keys, statuses, clock, allowed),
            gate=ask.gate,
        )

    def _by_id(
        self,
        query: str,
        keys: Sequence[str],
        statuses: Sequence[str],
        now: int,
        allowed: frozenset[int] | None,
    ) -> tuple[int, ...]:
        """First chunks of the scope's episodes whose id is the whole query, with a status
        asked for, not expired, passing the filters: indexer.retrieval.exact_match's id rule."""
        wanted = query.strip()
        if not wanted or not statuses or any(c.isspace() for c in wanted):
            return ()  # an id has no spaces: a normal question costs no lookup
        where = (
            "json_extract(doc, '$.kind') = 'episode' AND json_extract(doc, '$.episode_id') = ? "
            f"AND json_extract(doc, '$.status') IN ({','.join('?' * len(statuses))}) AND "
            "(json_extract(doc, '$.expires_at') = 0 OR json_extract(doc, '$.expires_at') > ?)"
        )
        docs = self.manifest.scope_docs(keys, where, [wanted, *statuses, now])
        return tuple(d.chunk_id for d in docs if allowed is None or d.chunk_id in allowed)

    def critical(self, scope: ScopeId, now: int | None = None) -> list[SearchResult]:
        """The chat's `priority: critical` memories that are active and not expired at `now`
        (unix seconds; default: the clock), newest first: the injector puts them into every
        turn whatever the message. Isolation as search: the scope's own index_key only,
        never a library's or another chat's. Read from the manifest, not ranked."""
        clock = now if now is not None else int(time.time())
        where = (
            "json_extract(doc, '$.kind') = 'episode' AND json_extract(doc, '$.status') = "
            "'active' AND json_extract(doc, '$.priority') = 'critical' AND (json_extract(doc, "
            "'$.expires_at') = 0 OR json_extract(doc, '$.expires_at') > ?)"
        )
        docs = self.manifest.scope_docs([scope.index_key], where, [clock])
        docs.sort(key=lambda d: (-max(d.updated_at, d.created_at), d.episode_id, d.path))
        explain = {"versions": {"rank": RANK_VERSION}, "critical": True}
        return [SearchResult(d, 1.0, (d.chunk_id,), explain) for d in docs]

    def run(self, request: SearchRequest) -> list[SearchResult]:
        return self.judged(request).results

    def judged(self, request: SearchRequest) -> Judged:
        """The one place a search of this engine runs: its results and the message gate's
        decision (indexer.recall.find turns them into why nothing passed)."""
        backends = {"text": self.text, "vector": self.vector}
        return judged_search(request, backends, self.lookup, calibrated=self.calibrated())

    def calibrated(self) -> Calibrated:
        """Term statistics and the active model's cosine scale for indexer.retrieval.relevance."""
        scale = VectorScale.of(calibrate(self.embedder))
        return Calibrated(self.text.term_stats, scale, self.text.present)

    def lookup(self, chunk_ids: Iterable[int]) -> dict[int, ChunkDoc]:
        """Docs of many chunks in one batched read; removed ones are left out."""
        return self.manifest.docs(chunk_ids)

    def close(self) -> None:
        if self.rebuild is not None:
            self.rebuild.join()  # a half-built index is useless; finishing is cheaper
        if self.watcher is not None:
            self.watcher.stop()
            self.watcher = None
        if self.syncer is not None:
            self.syncer.close()
        else:
            self.text.close()
            self.vector.close()
            self.manifest.close()
        self.embedder.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _open_text(folder: Path, writer: bool) -> TextIndex:
    try:
        return TextIndex.open(folder, writer=writer)
    except IndexMismatchError as exc:
        if not writer:
            raise
        # Derived state of another schema (an older MemVault's fields): the writer starts it
        # afresh, and reconcile's self-heal re-sends every chunk the manifest holds.
        log.warning("index=text_rebuild folder=%s reason=%r", folder, str(exc))
        shutil.rmtree(folder)
        return TextIndex.open(folder, writer=writer)
