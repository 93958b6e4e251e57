"""The host's vector API (vector_upsert/search/list/delete) relayed over the page API, so the
real-host suite can run MemVault's index contract against LangBot's own vector database from
outside a plugin (hostsuite/host_vectors.py is the client). Tests only."""

from __future__ import annotations

from langbot_plugin.api.definition.components.page import Page, PageRequest, PageResponse

CALLS = ("vector_upsert", "vector_search", "vector_list", "vector_delete")


class VectorRelay(Page):
    async def handle_api(self, request: PageRequest) -> PageResponse:
        name = request.endpoint.strip("/")
        if name not in CALLS:
            return PageResponse.fail(f"unknown endpoint {request.endpoint!r}")
        try:
            result = await getattr(self.plugin, name)(**(request.body or {}))
        except Exception as exc:  # noqa: BLE001 - relayed to the caller as the answer
            return PageResponse.fail(f"{type(exc).__name__}: {exc}")
        return PageResponse.ok({"result": result})
