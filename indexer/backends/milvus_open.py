"""The engine's vector opener (indexer.backends.vector_open) for a vault whose `index:`
setting (vault.layout.index_setting) names Milvus; None keeps the local FAISS folder."""

from __future__ import annotations

from pathlib import Path

from indexer.backends.embed_cache import CachedEmbedder
from indexer.backends.milvus_index import MilvusVectors
from vault.layout.index_setting import IndexChoice, read_index


class MilvusOpener:
    """indexer.backends.vector_open.VectorOpener for a Milvus target: one collection per
    model identity; this node's local state in `<index>/milvus/`."""

    def __init__(self, target: IndexChoice) -> None:
        self.target = target

    def __call__(
        self, index_folder: Path, embedder: CachedEmbedder, *, writer: bool
    ) -> MilvusVectors:
        return MilvusVectors.open(
            self.target,
            Path(index_folder) / "milvus",
            embed=embedder.embed_documents,
            embed_query=embedder.embed_query,
            dim=embedder.identity.dim,
            identity=embedder.identity.key,
            writer=writer,
        )


def opener_for(choice: IndexChoice) -> MilvusOpener | None:
    """The vector opener a vault's setting asks for; None = the local FAISS default."""
    return None if choice.kind == "local" else MilvusOpener(choice)


def vault_opener(root: Path) -> MilvusOpener | None:
    """The opener of the vault at `root` (MEMVAULT_INDEX, else its memvault.yaml)."""
    return opener_for(read_index(root))
