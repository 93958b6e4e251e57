"""The LangBot host's embedding model as an Embedder (the `embedding-model-selector` setting).

The SDK call is async and lives on the plugin's event loop; MemVault's engine runs in
worker threads (MemoryService.run), so each call hops back onto that loop and waits.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

import numpy as np

from indexer.backends.embeddings import (
    EmbedderIdentity,
    EmbeddingError,
    checked_rows,
    in_batches,
)

from .host_loop import refuse_on_loop

Invoke = Callable[[str, list[str]], Awaitable[list[list[float]]]]


class HostEmbedder:
    def __init__(
        self,
        invoke: Invoke,
        model_uuid: str,
        loop: asyncio.AbstractEventLoop,
        dim: int,
        timeout: float = 60.0,
    ) -> None:
        self._invoke = invoke
        self._model = model_uuid
        self._loop = loop
        self._timeout = timeout
        self.identity = EmbedderIdentity(f"langbot:{model_uuid}", "host", dim)

    @classmethod
    async def probe(cls, invoke: Invoke, model_uuid: str) -> HostEmbedder:
        """Ask the host once to learn the model's dimension (it is not advertised)."""
        if not model_uuid:
            raise EmbeddingError("embedding is langbot but no embedding model is selected")
        vectors = await invoke(model_uuid, ["dimension probe"])
        if not vectors or not vectors[0]:
            raise EmbeddingError(f"the host returned no vector for model {model_uuid}")
        return cls(invoke, model_uuid, asyncio.get_running_loop(), len(vectors[0]))

    def _call(self, texts: list[str]) -> np.ndarray:
        refuse_on_loop(
            self._loop, EmbeddingError("HostEmbedder must be called from a worker thread")
        )
        future = asyncio.run_coroutine_threadsafe(self._invoke(self._model, texts), self._loop)
        try:
            vectors = future.result(self._timeout)
        except Exception as exc:  # noqa: BLE001 - the host's errors vary by provider
            raise EmbeddingError(f"the host's embedding model {self._model} failed: {exc}") from exc
        return checked_rows(vectors, len(texts), self.identity.dim, f"host model {self._model}")

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return in_batches(self._call, texts, 64, self.identity.dim)

    def embed_query(self, text: str) -> np.ndarray:
        return self._call([text or " "])[0]
