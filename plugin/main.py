"""MemVault for LangBot: long-term memory as plain files, with fast hybrid recall."""

from __future__ import annotations

import asyncio
import logging

from host_embedder import HostEmbedder
from langbot_plugin.api.definition.plugin import BasePlugin
from memory_service import MemoryService, PluginSettings, SettingsError

log = logging.getLogger(__name__)


class MemVaultPlugin(BasePlugin):
    memory: MemoryService

    async def initialize(self) -> None:
        """Start the vault, indexes and watcher; a problem is a health warning, not a crash."""
        try:
            settings = PluginSettings.from_config(self.get_config() or {})
        except SettingsError as exc:
            settings = PluginSettings()
            self.memory = MemoryService(settings)
            self.memory.warnings.append(f"setting ignored, defaults used: {exc}")
        else:
            self.memory = MemoryService(settings)
        embedder = None
        if settings.embedding == "langbot":
            try:
                embedder = await HostEmbedder.probe(
                    self.invoke_embedding, settings.embedding_model_uuid
                )
            except Exception as exc:  # noqa: BLE001 - the host's errors vary by provider
                self.memory.warnings.append(
                    f"LangBot embedding model unavailable ({exc}); using the embedded model"
                )
        await asyncio.to_thread(self.memory.start, embedder)
        log.info(
            "memvault=initialized vault=%s warnings=%d",
            settings.vault_path,
            len(self.memory.warnings),
        )

    def __del__(self) -> None:
        memory = getattr(self, "memory", None)
        if memory is not None:
            memory.close()
