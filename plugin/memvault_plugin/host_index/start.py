"""`index: host` at plugin start: pick the collection, prove isolation, or fall back to local.

A refusal never stops the plugin: the vectors stay in the local FAISS folder and the health
warning (`!memory status`, the console's Health) says why and that local is in use.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from indexer.backends.embeddings import Embedder

from ..pipeline_memory import memory_kb_configs
from .calls import HostCalls, HostVectorError
from .opener import HostOpener
from .probe import IsolationProofError, prove_isolation

log = logging.getLogger(__name__)


def _warn(memory: Any, message: str) -> None:
    memory.warnings.append(message)
    log.warning("memvault=health_warning message=%r", message)


async def open_host_index(plugin: Any, memory: Any, embedder: Embedder | None) -> Embedder | None:
    """Set `memory.vectors` to the host opener once the host passed the probe. Returns the
    embedder to start with (the one whose dimension was probed)."""
    settings = memory.settings
    if settings.index != "host":
        return embedder
    fallback = "; using local vectors (FAISS) instead"
    kb = settings.index_kb or next(iter(sorted(await memory_kb_configs(plugin))), "")
    if not kb:
        _warn(
            memory,
            "index is host but no knowledge base holds the vectors: create a knowledge base "
            "with the MemVault engine in LangBot, or set index_kb to a knowledge base's uuid"
            + fallback,
        )
        return embedder
    try:
        embedder = embedder or memory._embedder()
    except Exception:  # noqa: BLE001 - start() reports a settings problem itself
        return embedder
    calls = HostCalls(plugin, kb, asyncio.get_running_loop())
    try:
        metric = await asyncio.to_thread(prove_isolation, calls, embedder.identity.dim)
    except (IsolationProofError, HostVectorError) as exc:
        _warn(memory, f"index: host refused for knowledge base {kb}: {exc}{fallback}")
        return embedder
    memory.vectors = HostOpener(calls, metric)
    log.info("memvault=host_index kb=%s metric=%s", kb, metric.name)
    return embedder
