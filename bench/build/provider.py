"""A provider change on an indexed vault, in THIS process (run as a child):

    python -m bench.build.provider VAULT

The "new provider" is the SAME embedded model behind a tiny wrapper with another identity
(RenamedModel, named as such): the engine sees a provider change, keeps answering with the
old vectors and rebuilds the new ones in the background. Prints a JSON record: open time,
time until the rebuild swapped, search latency while it ran.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bench.scale.index import peak_rss_mb
from indexer.backends.embeddings import Embedder, EmbedderIdentity
from indexer.retrieval.search_query import SearchQuery


class RenamedModel:
    """The embedded default model under another identity: a second local 'provider'."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        base = inner.identity
        self.identity = EmbedderIdentity(f"{base.name}-renamed-bench", base.version, base.dim)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self.inner.embed_query(text)


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    root = Path(args[0])
    logging.basicConfig(level=logging.WARNING)
    from bench.inject.__main__ import BOT, SESSION, questions
    from indexer.backends.embeddings import default_embedder
    from indexer.engine import Engine
    from vault.layout.keys import ScopeId

    model = RenamedModel(default_embedder())
    began = time.perf_counter()
    engine = Engine.open(root, embedder=model)
    opened = time.perf_counter()
    rebuild = engine.rebuild
    assert rebuild is not None, "no rebuild started: the vault was not indexed with the default"
    scope = ScopeId(BOT, SESSION)
    during: list[float] = []
    import itertools
    import random

    texts = itertools.cycle(questions(random.Random(3), 1500))
    while not rebuild.finished.wait(0.5):
        t0 = time.perf_counter()
        engine.search(SearchQuery(next(texts), scope, top_k=5))
        during.append((time.perf_counter() - t0) * 1000)
    swapped = time.perf_counter()
    identity = engine.embedder.identity.key
    engine.close()
    during.sort()
    record = {
        "new_provider": f"{model.identity.key} (RenamedModel: the default model renamed)",
        "open_s": round(opened - began, 3),
        "rebuild_to_swap_s": round(swapped - opened, 2),
        "chunks": rebuild.total,
        "chunks_per_s": round(rebuild.total / max(swapped - opened, 1e-9), 1),
        "error": repr(rebuild.error) if rebuild.error else None,
        "identity_after": identity,
        "searches_during_rebuild": len(during),
        "search_during_rebuild_p50_ms": round(during[len(during) // 2], 1) if during else None,
        "search_during_rebuild_max_ms": round(during[-1], 1) if during else None,
        "peak_rss_mb": peak_rss_mb(),
    }
    print(json.dumps(record))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
