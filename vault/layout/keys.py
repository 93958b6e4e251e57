"""Scope keys, derived exactly like the LongTermMemory plugin so memory moves between them.

`session_key` owns L1 profiles, the audit log and injection snapshots; `user_key` is the L2
isolation key. Both are DISPLAYED keys (exports, logs, `!memory`, the console), kept exactly
as upstream joins them, and joined strings collide: bot `a:b` + session `group_1` and bot
`a` + session `b:group_1` both give `a:b:group_1`. So the indexes never filter on them:
`index_key` / `profile_index_key` are the boundary no search may cross, built from the
percent-encoded ids (which never hold `/` or `~`) behind a kind tag, so they are injective.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from vault.errors import BadInput, BadRequestError
from vault.layout.names import percent_encode

Isolation = Literal["session", "bot"]
ISOLATIONS: tuple[str, ...] = ("session", "bot")
GLOBAL_USER_KEY = "global"


class ScopeError(BadInput, ValueError):
    """A scope that cannot be: an empty session, an unknown isolation."""


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
    raise ScopeError(f"isolation must be 'session' or 'bot' (got {isolation!r})")


# "~" is escaped by percent_encode (%7E), so it can only mean "no bot", never a bot id.
_NO_BOT = "~"


def _bot_part(bot_uuid: str | None) -> str:
    return percent_encode(bot_uuid) if bot_uuid else _NO_BOT  # falsy = no bot, as upstream


def index_key(bot_uuid: str | None, session: str, isolation: Isolation = "session") -> str:
    """The L2 scope filter of the indexes: `s/<bot>/<session>` (one chat) or `b/<bot>` (all
    chats of a bot). One key per episodes folder, and two folders never share one."""
    if isolation == "session":
        return f"s/{_bot_part(bot_uuid)}/{percent_encode(session)}"
    if isolation == "bot":
        return bot_index_key(bot_uuid)
    raise ScopeError(f"isolation must be 'session' or 'bot' (got {isolation!r})")


def bot_index_key(bot_uuid: str | None) -> str:
    return f"b/{_bot_part(bot_uuid)}"


def profile_index_key(bot_uuid: str | None, session: str) -> str:
    """The index scope of a session's L1 profiles (session and speakers): `p/<bot>/<session>`,
    a tag of its own so no episode scope can ever match it."""
    return f"p/{_bot_part(bot_uuid)}/{percent_encode(session)}"


@dataclass(frozen=True)
class ScopeId:
    """One chat of one bot, plus how its L2 memory is shared."""

    bot: str | None
    session: str
    isolation: Isolation = "session"

    def __post_init__(self) -> None:
        if self.isolation not in ISOLATIONS:
            raise ScopeError(f"isolation must be 'session' or 'bot' (got {self.isolation!r})")
        if not self.session:
            raise ScopeError("session is empty: pass <launcher_type>_<launcher_id>, e.g. group_123")
        # An empty bot uuid means "no bot", exactly as upstream treats a falsy uuid.
        if self.bot == "":
            object.__setattr__(self, "bot", None)

    @property
    def session_key(self) -> str:
        return session_key(self.bot, self.session)

    @property
    def user_key(self) -> str:
        return user_key(self.bot, self.session, self.isolation)

    @property
    def index_key(self) -> str:
        return index_key(self.bot, self.session, self.isolation)

    @property
    def profile_key(self) -> str:
        return profile_index_key(self.bot, self.session)

    def label(self) -> str:
        return f"{self.session_key} ({self.isolation})"


def checked_scope(value: object) -> ScopeId:
    """`value` when it is a ScopeId; else the refusal every request value gives."""
    if not isinstance(value, ScopeId):
        raise BadRequestError(
            f"scope must be a ScopeId (got {type(value).__name__}): build it with "
            "ScopeId(bot, session)"
        )
    return value
