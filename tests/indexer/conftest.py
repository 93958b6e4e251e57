"""The embedded model, loaded once per module."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def model():
    from indexer.backends.embeddings import default_embedder

    return default_embedder()
