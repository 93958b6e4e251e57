"""A vector index opened on the embedded model, as the engine opens it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from indexer.backends.vector_index import VectorIndex


def open_index(folder: Path, model: Any, writer: bool = True) -> VectorIndex:
    return VectorIndex.open(
        folder,
        embed=model.embed_documents,
        embed_query=model.embed_query,
        dim=model.identity.dim,
        identity=model.identity.key,
        writer=writer,
    )
