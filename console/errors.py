"""The one error type endpoints raise, with a code each host maps (HTTP status, fail text)."""

from __future__ import annotations

from console.context import ConsoleContext
from indexer.engine import Engine

STATUS = {
    "bad_request": 400,
    "unauthorized": 401,
    "forbidden": 403,
    "not_found": 404,
    "method_not_allowed": 405,
    "timeout": 408,
    "conflict": 409,
    "length_required": 411,
    "too_large": 413,
    "uri_too_long": 414,
    "headers_too_large": 431,
    "unavailable": 503,
    "internal": 500,
}


class ApiError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    @property
    def status(self) -> int:
        return STATUS.get(self.code, 500)

    @classmethod
    def for_status(cls, status: int, message: str) -> ApiError:
        """An error the HTTP layer of the standard library reports by status alone; anything
        it calls a server error (505 for an unknown HTTP version) is the client's: 400."""
        code = next((c for c, s in STATUS.items() if s == status and s < 500), "bad_request")
        return cls(code, message)


def require_engine(ctx: ConsoleContext) -> Engine:
    if ctx.engine is None:
        raise ApiError("unavailable", "search is unavailable: the index could not be opened")
    return ctx.engine
