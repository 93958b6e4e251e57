"""The host's vector API as plain calls for the engine's worker threads.

The SDK's vector_* coroutines live on the plugin's event loop; the engine (sync, search,
the watcher) runs in worker threads, so each call hops onto that loop and waits there, as
host_embedder does. A call made on the loop itself is refused: it would deadlock.
"""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from vault.errors import Unavailable

from ..host_loop import refuse_on_loop


class HostVectorError(Unavailable, RuntimeError):
    """The host's vector database did not answer; the message says which call and why."""


class VectorAPI(Protocol):
    """What BasePlugin offers (langbot_plugin.api.proxies.langbot_api)."""

    async def vector_upsert(
        self,
        collection_id: str,
        vectors: list[list[float]],
        ids: list[str],
        metadata: list[dict[str, Any]] | None = None,
        documents: list[str] | None = None,
    ) -> None: ...

    async def vector_search(
        self,
        collection_id: str,
        query_vector: list[float],
        top_k: int = 5,
        filters: dict[str, Any] | None = None,
    ) -> list[dict[str, Any]]: ...

    async def vector_list(
        self,
        collection_id: str,
        filters: dict[str, Any] | None = None,
        limit: int = 20,
        offset: int = 0,
    ) -> dict[str, Any]: ...

    async def vector_delete(
        self,
        collection_id: str,
        file_ids: list[str] | None = None,
        filters: dict[str, Any] | None = None,
    ) -> int: ...


class HostCalls:
    """One collection of the host (a LangBot knowledge base's), called from worker threads."""

    def __init__(
        self,
        api: VectorAPI,
        collection_id: str,
        loop: asyncio.AbstractEventLoop,
        timeout: float = 60.0,
    ) -> None:
        self.api = api
        self.collection = collection_id
        self._loop = loop
        self._timeout = timeout

    def _run(self, what: str, coro: Any) -> Any:
        try:
            refuse_on_loop(
                self._loop, HostVectorError("the host index must be called from a worker thread")
            )
        except HostVectorError:
            coro.close()
            raise
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            return future.result(self._timeout)
        except Exception as exc:  # noqa: BLE001 - the host's errors vary by vector database
            raise HostVectorError(
                f"the host's vector database failed on {what} in collection {self.collection} "
                f"({type(exc).__name__}: {exc}); check LangBot's vdb setting and its log, or set "
                "index: local"
            ) from exc

    def upsert(self, vectors: list[list[float]], ids: list[str], metadata: list[dict]) -> None:
        self._run("upsert", self.api.vector_upsert(self.collection, vectors, ids, metadata))

    def search(self, vector: list[float], top_k: int, filters: dict) -> list[dict[str, Any]]:
        found = self._run("search", self.api.vector_search(self.collection, vector, top_k, filters))
        return list(found or [])

    def list(self, limit: int, offset: int, filters: dict | None = None) -> list[dict[str, Any]]:
        page = self._run("list", self.api.vector_list(self.collection, filters, limit, offset))
        return list((page or {}).get("items") or [])

    def delete_files(self, file_ids: list[str]) -> None:
        self._run("delete", self.api.vector_delete(self.collection, file_ids=file_ids))

    def delete_where(self, filters: dict) -> None:
        self._run("delete", self.api.vector_delete(self.collection, filters=filters))
