"""MemVault for LangBot: long-term memory as plain files, with fast hybrid recall."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from typing import Any, ClassVar

from langbot_plugin.api.definition.plugin import BasePlugin
from memvault_plugin import live_settings
from memvault_plugin.host_embedder import HostEmbedder
from memvault_plugin.host_index.start import open_host_index
from memvault_plugin.host_llm import HostLLM
from memvault_plugin.kb_cache import KbCache
from memvault_plugin.memory_service import MemoryService, PluginSettings, SettingsError
from memvault_plugin.turn_candidates import TurnCandidates
from memvault_plugin.turn_ledger import TurnLedger

from indexer.backends.embeddings import Embedder
from indexer.jobs.llm import DEFAULT_TIMEOUT

log = logging.getLogger(__name__)
# How long a settings change waits for in-flight memory work before it tries again later.
DRAIN_SECONDS = 30.0


class MemVaultPlugin(BasePlugin):
    memory: MemoryService
    # The service of the instance that started last in this process. `lbp run` makes a NEW
    # instance on every reconnect (a config change restarts a debug copy that way) and
    # never tells the old one, whose watcher keeps it alive holding the index's writer lock.
    _last_started: ClassVar[MemoryService | None] = None

    def __init__(self) -> None:
        super().__init__()
        # What the injector recalled per (chat, sender) this turn; retrieve reads it.
        self.turns = TurnLedger()
        # MemVault's and the pipeline's KB lists, kept between turns (kb_cache.py).
        self.kb_cache = KbCache()
        # Candidate memories after each reply (the injector's NormalMessageResponded handler).
        self.candidates = TurnCandidates(self)
        self._settling = asyncio.Lock()
        self.watch = True  # the vault watcher thread (tests run without it)

    async def initialize(self) -> None:
        """Start the vault, indexes and watcher; a problem is a health warning, not a crash.
        The config comes from the instance, not get_config(): see live_settings."""
        await self._apply(live_settings.config_at_start(self))

    async def settled(self) -> MemoryService:
        """The memory service, built from the settings LangBot holds NOW: every entry point
        (tools, commands, events, knowledge engine, page) takes it from here, so a change
        LangBot pushes into this process applies at the next call."""
        memory: MemoryService | None = getattr(self, "memory", None)
        if memory is None or memory.record is None or not live_settings.in_invocation(self):
            # None: initialize() never ran (callers answer "did not start"); no record: a
            # service not built from a config (tests). Never start one from nothing here.
            return memory  # type: ignore[return-value]
        held = live_settings.held_config(self)
        if memory.record.current(held):
            return memory
        async with self._settling:  # one rebuild at a time; later calls wait for it
            memory = self.memory
            record = memory.record
            if not record.current(held):
                try:
                    await self._apply(held)
                except Exception as exc:  # noqa: BLE001 - keep serving with what is in effect
                    log.exception("memvault=settings_apply_failed error=%r", str(exc))
                    memory.record = replace(record, held=held, refused=f"failed: {exc}")
        return self.memory

    async def _apply(self, config: dict[str, Any]) -> None:
        """Build a service for `config` and swap it in. A running service is replaced only
        once its in-flight work is done (no write is cut off), and keeps running when the
        new config cannot be used (health says why)."""
        old: MemoryService | None = getattr(self, "memory", None)
        record = live_settings.SettingsRecord(applied=config, held=config)
        try:
            settings = PluginSettings.from_config(config)
        except SettingsError as exc:
            if old is not None:
                base = old.record or live_settings.SettingsRecord(applied={}, held={})
                old.record = replace(base, held=config, refused=f"refused: {exc}")
                log.warning("memvault=settings_refused error=%r", str(exc))
                return
            settings = PluginSettings()
            record = replace(record, refused=f"defaults used: {exc}")
        if old is not None and settings == old.settings:
            old.record = record  # keys that change nothing (or a value spelled otherwise)
            return
        memory = MemoryService(settings)
        memory.record = record
        if record.refused:
            memory.warnings.append(f"setting ignored, {record.refused}")
        embedder = await self._host_embedder(memory)
        embedder = await open_host_index(self, memory, embedder)
        if old is not None:
            if not await old.drain(DRAIN_SECONDS):
                base = old.record or live_settings.SettingsRecord(applied={}, held={})
                old.record = replace(base, held=config)
                log.warning("memvault=settings_postponed reason=busy seconds=%d", DRAIN_SECONDS)
                return  # the next call tries again; health shows the difference meanwhile
            changed = live_settings.drift(config, old.settings)
            old.close()  # before the new one opens: the index has one writer
            if old.settings.vault_path == settings.vault_path:
                memory.previews = old.previews  # `!memory consolidate run` still applies it
        elif (previous := MemVaultPlugin._last_started) is not None:
            await previous.drain(DRAIN_SECONDS)
            previous.close()  # an abandoned instance's service: this one takes over
        await asyncio.to_thread(memory.start, embedder, watch=self.watch)
        self.memory = MemVaultPlugin._last_started = memory
        await self.wire_llm()
        if old is None:
            log.info(
                "memvault=initialized vault=%s warnings=%d settings=%r",
                settings.vault_path,
                len(memory.warnings),
                live_settings.summary(settings),
            )
        else:
            log.info("memvault=settings_applied changed=%r", [c.split(" ")[0] for c in changed])

    async def _host_embedder(self, memory: MemoryService) -> Embedder | None:
        settings = memory.settings
        if settings.embedding != "langbot":
            return None
        try:
            return await HostEmbedder.probe(self.invoke_embedding, settings.embedding_model_uuid)
        except Exception as exc:  # noqa: BLE001 - the host's errors vary by provider
            memory.warnings.append(
                f"LangBot embedding model unavailable ({exc}); using the embedded model"
            )
            return None

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
