"""The plugin's one handle on MemVault: settings, the vault, the engine, scope keys, health.

Components stay thin adapters: they parse the SDK's objects, call this service (off the
event loop, via `run`), and turn results into text. Everything that touches files or
indexes lives in vault/ and indexer/.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from indexer.backends.backend import IndexLockedError
from indexer.backends.embed_openai import OpenAICompatible
from indexer.backends.embeddings import Embedder, default_embedder
from indexer.backends.vector_open import VectorOpener
from indexer.dedupe import install as install_duplicates
from indexer.engine import Engine
from indexer.injection.settings import TurnSettings
from indexer.jobs.consolidate_preview import Preview
from indexer.jobs.consolidate_select import ConsolidateSettings
from indexer.jobs.llm import LLM
from indexer.retrieval.outcome import relevant  # noqa: F401 - the plugin imports it from here
from indexer.retrieval.relevance import DEFAULT_FLOOR
from indexer.sync.manifest import index_dir
from vault.errors import BadInput, BadRequestError, Unavailable
from vault.events import EventType, EventTypeError, parse_event_types
from vault.format.model import (
    DEFAULT_PROFILE_LIMITS,
    PROFILE_MAX_PREFERENCES,
    PROFILE_MAX_TRAITS,
    ProfileLimits,
)
from vault.git.syncloop import SyncLoop
from vault.layout.keys import ScopeId, session_name
from vault.writes.create import init_vault
from vault.writes.operations import Vault

from . import vault_location
from .host_index.opener import forget_space

log = logging.getLogger(__name__)
T = TypeVar("T")

EMBEDDINGS = ("local", "langbot", "openai")
INDEXES = ("local", "host")  # where the vectors live: FAISS here, or the host's vector DB
RECALL_GATE = ("on", "off")
MAX_CANDIDATES_PER_TURN = 10  # each one is checked against memory with an embedding
MAX_EVENTS_INJECTED = 20  # open key events per prompt (each line is capped: events_block)


def default_vault_path() -> Path:
    """Outside the plugin folder, so reinstalling or upgrading the plugin keeps memory: under
    LangBot's plugin runtime `data/plugins/.memvault/vault` (its persistent volume), else the
    XDG data folder; MEMVAULT_VAULT wins (rules and runtime facts: vault_location)."""
    return vault_location.default_vault_path(os.environ, vault_location.PLUGIN_DIR, Path.home())


class SettingsError(BadInput, ValueError):
    """A plugin setting cannot be used; the message names the setting and the fix."""


class MemoryUnavailableError(Unavailable):
    """The vault or the index did not open (the health warnings say why): memory is off
    until the settings or the disk are fixed and the plugin restarts."""


@dataclass(frozen=True)
class PluginSettings:
    vault_path: Path = field(default_factory=default_vault_path)
    isolation: str = "session"
    embedding: str = "local"
    embedding_model_uuid: str = ""
    openai_url: str = ""
    openai_model: str = ""
    openai_dim: int = 0
    openai_key: str = ""
    index: str = "local"
    index_kb: str = ""  # the host knowledge base whose collection `index: host` uses
    half_life_days: float = 30.0
    top_k: int = 3
    injection_chars: int = 4000
    # Overrides indexer.retrieval.relevance's floor (its one home) for every recall path of the
    # plugin.
    relevance_floor: float = DEFAULT_FLOOR
    # The message gate (indexer.gate.rules) on automatic recall: "on" = a greeting, thanks
    # or an impersonal request ("what's 17 times 23?") gets no episode recalled; "off" =
    # every message goes on to the floor, as before the gate.
    recall_gate: str = "on"
    git_autocommit: bool = True
    # A periodic `memvault sync` with this git remote (vault.git.syncloop); empty: off.
    sync_remote: str = ""
    sync_every: float = 10.0  # minutes
    # Candidate memories after each turn (one host-model call per turn; off by default).
    candidates: bool = False
    candidates_model: str = ""  # the host's LLM uuid; also the model consolidation asks
    candidates_per_turn: int = 3
    candidates_auto_accept: bool = False  # accept at once, as verified: false
    consolidation: ConsolidateSettings = field(default_factory=ConsolidateSettings)
    # Key events (vault.events): the type dictionary (empty = the feature and its tools are
    # off) and how many of the speaker's open events each prompt gets.
    event_types: tuple[EventType, ...] = ()
    events_injected: int = 5
    # One person across chats (vault.persons): off = every sender id is its own person, as
    # before; on = a sender linked (by hand, !memory link, the console) to a person of the
    # bot gets that person's profile, key events and speaker-first recall in every chat.
    linked_people: bool = False
    # LongTermMemory's max_profile_traits / max_profile_preferences, passed to the vault.
    profile_limits: ProfileLimits = DEFAULT_PROFILE_LIMITS

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> PluginSettings:
        def number(
            name: str, default: float, low: float, kind: type = float, high: float | None = None
        ) -> Any:
            raw = config.get(name)
            if raw in (None, ""):
                return kind(default)
            try:
                value = kind(raw)
            except (TypeError, ValueError) as exc:
                raise SettingsError(f"{name} must be a number (got {raw!r})") from exc
            if value < low:
                raise SettingsError(f"{name} must be at least {low} (got {value})")
            if high is not None and value > high:
                raise SettingsError(f"{name} must be from {low} to {high} (got {value})")
            return value

        isolation = str(config.get("isolation") or "session")
        if isolation not in ("session", "bot"):
            raise SettingsError(f"isolation must be session or bot (got {isolation!r})")
        embedding = str(config.get("embedding") or "local")
        if embedding not in EMBEDDINGS:
            raise SettingsError(f"embedding must be one of {', '.join(EMBEDDINGS)}")
        index = str(config.get("index") or "local").strip().lower()
        if index not in INDEXES:
            raise SettingsError(f"index must be local or host (got {config.get('index')!r})")
        floor = number("relevance_floor", DEFAULT_FLOOR, 0.0)
        if not 0.0 <= floor <= 1.0:  # relevance is in [0, 1]: above it nothing is ever recalled
            raise SettingsError(
                f"relevance_floor must be between 0 and 1 (got {floor}); "
                f"the default is {DEFAULT_FLOOR}"
            )

        raw_gate = config.get("recall_gate")
        if isinstance(raw_gate, bool):  # YAML 1.1 reads a bare on/off as a boolean
            raw_gate = "on" if raw_gate else "off"
        recall_gate = str(raw_gate or "on").strip().lower()
        if recall_gate not in RECALL_GATE:
            raise SettingsError(
                f"recall_gate must be on or off (got {config.get('recall_gate')!r}); on skips "
                "episode recall for greetings, thanks and impersonal requests, off recalls "
                "for every message"
            )

        def flag(name: str, default: bool) -> bool:
            raw = config.get(name)
            if raw in (None, ""):
                return default
            if isinstance(raw, str) and raw.strip().lower() in ("true", "false"):
                return raw.strip().lower() == "true"
            if isinstance(raw, bool | int):
                return bool(raw)
            raise SettingsError(f"{name} must be true or false (got {raw!r})")

        per_turn = number("candidates_per_turn", 3, 1, int, MAX_CANDIDATES_PER_TURN)
        try:
            consolidation = ConsolidateSettings(
                older_than_days=number("consolidation_older_than_days", 90, 1, int),
                max_importance=number("consolidation_max_importance", 1, 0, int),
                keep_importance=number("consolidation_keep_importance", 4, 1, int),
                max_episodes=number("consolidation_max_episodes", 40, 2, int),
                apply_profile_updates=flag("consolidation_apply_profile_updates", False),
            )
        except BadRequestError as exc:  # the engine's bounds, named as the plugin setting
            raise SettingsError(f"consolidation_{exc}") from exc
        try:
            event_types = parse_event_types(config.get("event_types"))
        except EventTypeError as exc:
            raise SettingsError(str(exc)) from exc
        events_injected = number("events_injected", 5, 0, int, MAX_EVENTS_INJECTED)
        try:
            profile_limits = ProfileLimits(
                traits=number("max_profile_traits", PROFILE_MAX_TRAITS, 1, int),
                preferences=number("max_profile_preferences", PROFILE_MAX_PREFERENCES, 1, int),
            )
        except ValueError as exc:  # the message names the setting and its range
            raise SettingsError(str(exc)) from exc
        raw_path = str(config.get("vault_path") or "").strip()
        return cls(
            vault_path=Path(raw_path).expanduser() if raw_path else default_vault_path(),
            isolation=isolation,
            embedding=embedding,
            embedding_model_uuid=str(config.get("embedding_model") or ""),
            openai_url=str(config.get("openai_url") or ""),
            openai_model=str(config.get("openai_model") or ""),
            openai_dim=number("openai_dim", 0, 0, int),
            openai_key=str(config.get("openai_key") or ""),
            index=index,
            index_kb=str(config.get("index_kb") or "").strip(),
            half_life_days=number("half_life_days", 30.0, 0.0),
            top_k=number("top_k", 3, 1, int),
            injection_chars=number("injection_chars", 4000, 200, int),
            relevance_floor=floor,
            recall_gate=recall_gate,
            git_autocommit=bool(config.get("git_autocommit", True)),
            sync_remote=str(config.get("sync_remote") or "").strip(),
            sync_every=number("sync_every", 10.0, 1.0),
            candidates=flag("candidates", False),
            candidates_model=str(config.get("candidates_model") or "").strip(),
            candidates_per_turn=per_turn,
            candidates_auto_accept=flag("candidates_auto_accept", False),
            consolidation=consolidation,
            event_types=event_types,
            events_injected=events_injected,
            linked_people=flag("linked_people", False),
            profile_limits=profile_limits,
        )

    @property
    def gate(self) -> bool:
        """Whether automatic recall (injection, the KB's retrieve) runs the message gate."""
        return self.recall_gate == "on"

    def turn(self) -> TurnSettings:
        """What an injection turn reads of these settings (indexer.injection.turn.build)."""
        return TurnSettings(
            top_k=self.top_k,
            half_life_days=self.half_life_days,
            injection_chars=self.injection_chars,
            relevance_floor=self.relevance_floor,
            gate=self.gate,
            event_types=self.event_types,
            events_injected=self.events_injected,
            linked_people=self.linked_people,
        )


class MemoryService:
    """Owns the vault and the engine for one plugin process (the vault's index writer)."""

    def __init__(
        self, settings: PluginSettings, host: vault_location.HostFacts | None = None
    ) -> None:
        self.settings = settings
        self.vault: Vault | None = None
        self.engine: Engine | None = None
        self.warnings: list[str] = []
        self.host = host  # None: read from this machine at start()
        self.location: vault_location.VaultLocation | None = None
        # The host model for candidates and consolidation (main.py wires it; None: unset).
        self.llm: LLM | None = None
        # The last consolidation preview shown per chat: `!memory consolidate run` applies it.
        self.previews: dict[ScopeId, Preview] = {}
        # live_settings.SettingsRecord: the config this service was built from (main.py).
        self.record: Any = None
        self.sync_loop: SyncLoop | None = None
        self._running = 0  # calls of `run` not finished: a settings change waits for them
        # `index: host` once proved (host_index.start); None: the local FAISS folder.
        self.vectors: VectorOpener | None = None

    # -- lifecycle ------------------------------------------------------------------

    def start(self, embedder: Embedder | None = None, *, watch: bool = True) -> None:
        """Open the vault and indexes; never raises: problems become health warnings."""
        root = self.settings.vault_path
        try:
            self.location = (self.host or vault_location.read_host()).locate(root)
        except (OSError, RuntimeError) as exc:  # resolve(): a symlink loop, a vanished cwd
            self._warn(f"cannot tell whether the plugin runtime keeps vault path {root} ({exc})")
        if self.location is not None and self.location.problem is not None:
            log.warning(
                "memvault=vault_not_kept problem=%s vault=%s plugins_dir=%s evidence=%r",
                self.location.problem,
                root,
                self.location.plugins_dir,
                self.location.evidence,
            )
        try:
            if not (root / "bots").is_dir():
                init_vault(root, git=self.settings.git_autocommit)
            self.vault = Vault(
                root,
                git=self.settings.git_autocommit,
                profile_limits=self.settings.profile_limits,
            )
        except OSError as exc:
            self._warn(
                f"vault path {root} cannot be used ({exc}): set vault_path to a writable folder"
            )
            return
        try:
            # Before opening the index: a setting left blank is a settings problem (say which
            # one), not a broken index (reindexing would not help).
            embedder = embedder or self._embedder()
        except SettingsError as exc:
            self._warn(str(exc))
            return
        if self.vectors is None:
            forget_space(index_dir(root))  # the host's rows go stale while FAISS takes edits
        try:
            self.engine = Engine.open(root, embedder=embedder, vectors=self.vectors)
        except IndexLockedError as exc:
            self._warn(f"{exc}; searching read-only, writes are indexed by that process")
            try:
                self.engine = Engine.open(
                    root, embedder=embedder, writer=False, vectors=self.vectors
                )
            except Exception as inner:  # noqa: BLE001 - any failure here is a health warning
                self._warn(f"index cannot be opened read-only either ({inner})")
                return
            install_duplicates(self.vault, self.engine)  # writes look for repeats there too
            return
        except Exception as exc:  # noqa: BLE001
            self._warn(f"index cannot be opened ({exc}): run `memvault reindex --vault {root}`")
            return
        self.engine.attach(self.vault)
        if self.settings.sync_remote:  # after attach: a pull is indexed through on_written
            s = self.settings
            self.sync_loop = SyncLoop(self.vault, s.sync_remote, s.sync_every).start()
        if watch:
            self.engine.watch()  # reconciles the whole vault first, in its own thread
        else:
            self.engine.reconcile()
        log.info("memvault=started vault=%s isolation=%s", root, self.settings.isolation)

    def _embedder(self) -> Embedder:
        s = self.settings
        if s.embedding == "openai":
            given = {"openai_url": s.openai_url, "openai_model": s.openai_model}
            missing = [name for name, value in given.items() if not value]
            if not s.openai_dim:
                missing.append("openai_dim")
            if missing:
                raise SettingsError(
                    f"embedding is openai but {', '.join(missing)} "
                    f"{'is' if len(missing) == 1 else 'are'} not set: fill "
                    f"{'it' if len(missing) == 1 else 'them'} in the MemVault plugin settings "
                    "(openai_url is the server's /v1 URL, openai_dim the model's vector size), "
                    "or set embedding to local"
                )
            return OpenAICompatible(
                s.openai_url, s.openai_model, s.openai_dim, api_key=s.openai_key
            )
        # "langbot" is wired by main.py (it needs the plugin's async API): see HostEmbedder.
        return default_embedder()

    def close(self) -> None:
        if self.sync_loop is not None:
            self.sync_loop.stop()
            self.sync_loop = None
        if self.engine is not None:
            self.engine.close()
            self.engine = None

    def _warn(self, message: str) -> None:
        self.warnings.append(message)
        log.warning("memvault=health_warning message=%r", message)

    # -- scopes ---------------------------------------------------------------------

    def scope(self, session: str, bot_uuid: str | None) -> ScopeId:
        return ScopeId(bot_uuid or None, session, self.settings.isolation)  # type: ignore[arg-type]

    def scope_of_launcher(
        self, launcher_type: Any, launcher_id: Any, bot_uuid: str | None
    ) -> ScopeId:
        return self.scope(session_name(launcher_type, launcher_id), bot_uuid)

    # -- running blocking work off the event loop -------------------------------------

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """File and index work blocks: keep the plugin's event loop free while it runs."""
        self._running += 1
        try:
            return await asyncio.to_thread(fn, *args, **kwargs)
        finally:
            self._running -= 1

    async def drain(self, timeout: float) -> bool:
        """Wait until no `run` is in flight (a write finishes before its service closes)."""
        deadline = asyncio.get_running_loop().time() + timeout
        while self._running and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.05)
        return not self._running

    def require(self) -> tuple[Vault, Engine]:
        if self.vault is None or self.engine is None:
            reason = "; ".join(self.warnings) or "the memory service has not started"
            raise MemoryUnavailableError(f"memory is unavailable: {reason}")
        return self.vault, self.engine
