"""MemVault for LangBot: long-term memory as plain files, with fast hybrid recall."""

from __future__ import annotations

import asyncio
import logging

from langbot_plugin.api.definition.plugin import BasePlugin
from memvault_plugin.host_embedder import HostEmbedder
from memvault_plugin.host_llm import HostLLM
from memvault_plugin.kb_cache import KbCache
from memvault_plugin.memory_service import MemoryService, PluginSettings, SettingsError
from memvault_plugin.turn_candidates import TurnCandidates
from memvault_plugin.turn_ledger import TurnLedger

from indexer.llm import DEFAULT_TIMEOUT

log = logging.getLogger(__name__)


class MemVaultPlugin(BasePlugin):
    memory: MemoryService

    def __init__(self) -> None:
        super().__init__()
        # What the injector recalled per (chat, sender) this turn; retrieve reads it.
        self.turns = TurnLedger()
        # MemVault's and the pipeline's KB lists, kept between turns (kb_cache.py).
        self.kb_cache = KbCache()
        # Candidate memories after each reply (the injector's NormalMessageResponded handler).
        self.candidates = TurnCandidates(self)

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
        await self.wire_llm()
        log.info(
            "memvault=initialized vault=%s warnings=%d",
            settings.vault_path,
            len(self.memory.warnings),
        )

    async def wire_llm(self) -> None:
        """The host model for candidates and consolidation, called on this plugin's loop."""
        settings = self.memory.settings
        model = settings.candidates_model
        if not model:
            if settings.candidates:
                self.memory.warnings.append(
                    "candidates is on but no model is chosen: choose one in the plugin "
                    "setting candidates_model (no candidates are proposed until then)"
                )
            return
        try:
            known = await self.get_llm_models()
        except Exception as exc:  # noqa: BLE001 - an older host: the first call will tell
            log.info("memvault=llm_models_unavailable error=%r", str(exc))
        else:
            if model not in known:
                self.memory.warnings.append(
                    f"candidates_model {model} is not one of LangBot's models any more: "
                    "choose another in the plugin settings"
                )
        loop = asyncio.get_running_loop()
        self.memory.llm = HostLLM(self.invoke_llm, model, loop, DEFAULT_TIMEOUT)

    def __del__(self) -> None:
        memory = getattr(self, "memory", None)
        if memory is not None:
            memory.close()
