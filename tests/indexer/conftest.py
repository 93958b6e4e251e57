"""The indexer tests' embedders, chosen in one place.

`embedder` (module scope) is the tiny deterministic TEST FAKE (tests/helpers/embedder.py)
unless the module's subject is what the model finds (retrieval quality, relevance,
cross-language, the watcher's real-model path) and it says `EMBEDDER = "model"`: then the
embedded model, loaded once per process. `model` is always the embedded model.
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def model():
    from indexer.backends.embeddings import default_embedder

    return default_embedder()


@pytest.fixture(scope="module")
def embedder(request: pytest.FixtureRequest, tiny_embedder):
    choice = getattr(request.module, "EMBEDDER", "tiny")
    assert choice in ("tiny", "model"), f"EMBEDDER must be 'tiny' or 'model', not {choice!r}"
    if choice == "model":
        from indexer.backends.embeddings import default_embedder

        return default_embedder()
    return tiny_embedder
