"""How the engine opens its vector backend: one seam for every place vectors can live.

The local FAISS folder is the default (indexer.sync.rebuild.open_vectors). Another backend (a
Milvus URI, the LangBot host's vector database through the SDK) is a `VectorOpener` passed to
`Engine.open(vectors=...)`: the engine, the syncer and a model-change rebuild then call it the
same way, so every backend keeps the same plan, manifest and crash rules.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from indexer.backends.backend import SearchBackend
from indexer.backends.embed_cache import CachedEmbedder


class VectorOpener(Protocol):
    def __call__(
        self, index_folder: Path, embedder: CachedEmbedder, *, writer: bool
    ) -> SearchBackend:
        """The vectors of `embedder`'s model (one collection / folder per model identity:
        `embedder.identity.key`, `embedder.identity.dim`; documents are embedded with
        `embedder.embed_documents`, queries with `embedder.embed_query`). `index_folder` is the
        vault's local index folder (a remote backend may keep nothing there). A writer may
        change the index; a reader only searches."""
        ...
