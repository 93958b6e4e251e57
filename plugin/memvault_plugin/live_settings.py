"""Which settings MemVault runs with, and keeping them equal to the ones LangBot holds.

Measured on LangBot 4.11.2 (langbot-plugin 0.7.16) with the installed .lbpkg: a config PUT
makes the runtime start a new plugin process and hand it the new config, yet `get_config()`
inside `initialize()` answers `{}`. The runtime binds the INITIALIZE_PLUGIN invocation to the
container's config BEFORE it stores the config it was sent (cli/run/handler.py
`action_invocation_scope`, cli/run/controller.py `_initialize_container`), and
`BasePlugin.config` prefers that empty invocation snapshot over the instance's own config,
which holds what was sent. Every later invocation carries the config LangBot holds (a shared
runtime slot would show it only there). So: start from the instance's own config, and at every
entry point compare what LangBot holds with what is in effect (`MemVaultPlugin.settled`),
applying a change there."""

from __future__ import annotations

import contextvars
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from langbot_plugin.api.proxies.invocation import current_invocation

from .memory_service import PluginSettings, SettingsError

# Shown as set / not set, never as their value (health lines are read aloud in chats).
SECRETS = frozenset({"openai_key"})


def plain(value: Any) -> Any:
    """A JSON-like copy: the SDK hands an invocation's config over as read-only mappings
    and tuples, the instance's own as dicts and lists; both must compare equal."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [plain(v) for v in value]
    return value


def config_at_start(plugin: Any) -> dict[str, Any]:
    """The config the runtime handed this instance (`BasePlugin.config` read outside any
    invocation, in an empty context); the invocation's when the instance has none (a
    shared runtime slot starts with `{}` and gets its config with each invocation)."""
    own = contextvars.Context().run(lambda: plain(plugin.config))
    return own or held_config(plugin)


def in_invocation(plugin: Any) -> bool:
    """Inside a call from the runtime, the only place LangBot's config is known for sure
    (outside one, a shared slot's instance reads `{}`; a task left behind by a handler
    whose invocation ended must not rebuild anything)."""
    try:
        return current_invocation(getattr(plugin, "plugin_runtime_handler", None)) is not None
    except RuntimeError:  # "Plugin invocation has ended"
        return False


def held_config(plugin: Any) -> dict[str, Any]:
    """What LangBot holds for this plugin now (the current invocation's config)."""
    return plain(plugin.get_config() or {})


@dataclass(frozen=True)
class SettingsRecord:
    """Where the settings in effect came from, and what LangBot held when last asked."""

    applied: Mapping[str, Any]  # the config the service was built from
    held: Mapping[str, Any]  # LangBot's config at the last entry point
    refused: str = ""  # why `held` is not in effect ("" = nothing refused)

    def current(self, held: Mapping[str, Any]) -> bool:
        """Nothing to apply: `held` is in effect, or was refused already (say it once)."""
        return held == self.applied or (held == self.held and bool(self.refused))


def _shown(name: str, value: Any) -> str:
    if name in SECRETS:
        return "set" if value else "not set"
    if isinstance(value, tuple):  # event types
        return ",".join(getattr(v, "name", str(v)) for v in value) or "none"
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def summary(settings: PluginSettings) -> str:
    """The settings users change most, as in effect (every one is compared by `drift`)."""
    s = settings
    return (
        f"isolation={s.isolation}, event_types={_shown('event_types', s.event_types)}, "
        f"top_k={s.top_k}, relevance_floor={s.relevance_floor}, recall_gate={s.recall_gate}, "
        f"injection_chars={s.injection_chars}, embedding={s.embedding}, index={s.index}, "
        f"openai_key={_shown('openai_key', s.openai_key)}, "
        f"candidates={_shown('candidates', s.candidates)}, "
        f"git_autocommit={_shown('git_autocommit', s.git_autocommit)}"
    )


def drift(held: Mapping[str, Any], in_effect: PluginSettings) -> list[str]:
    """Each setting whose value in LangBot differs from the one in effect, as
    `name (LangBot: x, in effect: y)`; a config that cannot be used is one line."""
    try:
        wanted = PluginSettings.from_config(held)
    except SettingsError as exc:
        return [f"LangBot's settings cannot be used ({exc})"]
    return [
        f"{f.name} (LangBot: {_shown(f.name, getattr(wanted, f.name))}, "
        f"in effect: {_shown(f.name, getattr(in_effect, f.name))})"
        for f in fields(PluginSettings)
        if getattr(wanted, f.name) != getattr(in_effect, f.name)
    ]


def check(record: SettingsRecord | None, in_effect: PluginSettings) -> tuple[str, str]:
    """The health line: the settings in effect, or what LangBot holds that is not."""
    if record is None:  # a service not started by the plugin (tests): nothing to compare
        return ("OK", f"settings in effect: {summary(in_effect)}")
    differ = drift(record.held, in_effect)
    if not differ:
        return ("OK", f"settings in effect match LangBot's: {summary(in_effect)}")
    why = f" ({record.refused})" if record.refused else ""
    return (
        "WARN",
        f"LangBot's settings are not in effect{why}: {'; '.join(differ)}. Fix them in the "
        "plugin settings (a change applies at the next message); in effect: " + summary(in_effect),
    )
