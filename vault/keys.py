"""Scope keys, derived exactly like the LongTermMemory plugin so memory moves between them.

`session_key` owns L1 profiles, the audit log and injection snapshots; `user_key` is the L2
isolation key: the boundary no search may cross.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Isolation = Literal["session", "bot"]
ISOLATIONS: tuple[str, ...] = ("session", "bot")
GLOBAL_USER_KEY = "global"


def session_name(launcher_type: str, launcher_id: str | int) -> str:
    """What LangBot sends as `session_name`: `<launcher_type>_<launcher_id>`."""
    kind = getattr(launcher_type, "value", launcher_type)
    return f"{kind}_{launcher_id}"


def session_key(bot_uuid: str | None, session: str) -> str:
    return f"{bot_uuid}:{session}" if bot_uuid else session


def user_key(bot_uuid: str | None, session: str, isolation: Isolation = "session") -> str:
    if isolation == "session":
        return session_key(bot_uuid, session)
    if isolation == "bot":
        return f"bot:{bot_uuid}" if bot_uuid else GLOBAL_USER_KEY
    raise ValueError(f"isolation must be 'session' or 'bot' (got {isolation!r})")


@dataclass(frozen=True)
class ScopeId:
    """One chat of one bot, plus how its L2 memory is shared."""

    bot: str | None
    session: str
    isolation: Isolation = "session"

    def __post_init__(self) -> None:
        if self.isolation not in ISOLATIONS:
            raise ValueError(f"isolation must be 'session' or 'bot' (got {self.isolation!r})")
        if not self.session:
            raise ValueError("session is empty: pass <launcher_type>_<launcher_id>, e.g. group_123")
        # An empty bot uuid means "no bot", exactly as upstream treats a falsy uuid.
        if self.bot == "":
            object.__setattr__(self, "bot", None)

    @property
    def session_key(self) -> str:
        return session_key(self.bot, self.session)

    @property
    def user_key(self) -> str:
        return user_key(self.bot, self.session, self.isolation)

    def label(self) -> str:
        return f"{self.session_key} ({self.isolation})"
