"""Parse a request body once, at the edge: every field is checked and turned into a value
the vault accepts, or the request is refused with a message that says what to send."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from console.context import ConsoleContext
from vault.errors import BadRequestError
from vault.layout.keys import ISOLATIONS, ScopeId
from vault.layout.layout import NOBOT
from vault.layout.names import MAX_ID_CHARS, encode_name
from vault.layout.store import page_count

MAX_TEXT = 20_000
MAX_PAYLOAD_ITEMS = 10_000


class Body:
    """A request body (a JSON object), read field by field."""

    def __init__(self, raw: object) -> None:
        if raw is None:
            raw = {}
        if not isinstance(raw, Mapping):
            raise BadRequestError("the request body must be a JSON object")
        self.raw: Mapping[str, Any] = raw

    def text(self, name: str, *, required: bool = True, limit: int = MAX_TEXT) -> str | None:
        value = self.raw.get(name)
        if value is None or value == "":
            if required:
                raise BadRequestError(f"`{name}` is missing: send it as a string")
            return None
        if not isinstance(value, str):
            raise BadRequestError(f"`{name}` must be a string (got {type(value).__name__})")
        if "\x00" in value:
            raise BadRequestError(f"`{name}` contains a NUL character: remove it")
        if len(value) > limit:
            raise BadRequestError(f"`{name}` is {len(value)} characters: at most {limit}")
        return value

    def need(self, name: str, *, limit: int = MAX_TEXT) -> str:
        value = self.text(name, limit=limit)
        assert value is not None  # required=True never returns None
        return value

    def integer(self, name: str, default: int, low: int, high: int) -> int:
        value = self.raw.get(name, default)
        if value is None:
            value = default
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise BadRequestError(f"`{name}` must be an integer from {low} to {high}")
        return value

    def choice(self, name: str, options: tuple[str, ...], default: str) -> str:
        value = self.raw.get(name) or default
        if value not in options:
            raise BadRequestError(f"`{name}` must be one of {', '.join(options)}")
        return str(value)

    def flag(self, name: str, default: bool = False) -> bool:
        value = self.raw.get(name, default)
        if not isinstance(value, bool):
            raise BadRequestError(f"`{name}` must be true or false")
        return value

    def strings(self, name: str) -> list[str] | None:
        value = self.raw.get(name)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise BadRequestError(f'`{name}` must be a list of strings, e.g. ["a", "b"]')
        return value

    def sha(self, name: str = "expected_sha256") -> str | None:
        value = self.raw.get(name)
        if value is None:
            return None
        if not isinstance(value, str) or len(value) != 64 or not _is_hex(value):
            raise BadRequestError(
                f"`{name}` must be the 64-hex sha256 the console showed (reload the item)"
            )
        return value

    def sub(self, name: str) -> Body:
        value = self.raw.get(name)
        if not isinstance(value, Mapping):
            raise BadRequestError(f"`{name}` is missing: send it as a JSON object")
        return Body(value)

    def scope(self, ctx: ConsoleContext) -> ScopeId:
        return parse_scope(self.sub("scope"), ctx)


def _is_hex(value: str) -> bool:
    return all(c in "0123456789abcdef" for c in value)


def checked_id(value: str | None, what: str) -> str | None:
    """An id from the page is untrusted: it must make a valid folder name (not empty, `.` or
    `..`, no NUL, at most MAX_ID_CHARS; other characters are percent-encoded)."""
    if value is None:
        return None
    encode_name(value, what)  # raises UnsafeNameError (a ValueError) with the reason
    return value


def parse_scope(body: Body, ctx: ConsoleContext) -> ScopeId:
    bot = checked_id(body.text("bot", required=False, limit=MAX_ID_CHARS), "bot id")
    if bot == NOBOT:
        bot = None  # the folder of memory without a bot, as /scopes lists it
    session = checked_id(body.need("session", limit=MAX_ID_CHARS), "session name")
    isolation = body.choice("isolation", ISOLATIONS, ctx.isolation)
    return ScopeId(bot, session or "", isolation)  # type: ignore[arg-type]


def page_fields(total: int, page: int, size: int) -> dict[str, int]:
    """The paging fields of every listing the console answers (the page asks for the next
    one with them)."""
    return {"total": total, "page": page, "pages": page_count(total, size), "page_size": size}
