"""The one error type endpoints raise, with a code each host maps (HTTP status, fail text)."""

from __future__ import annotations

from console.context import ConsoleContext
from indexer.engine import Engine

STATUS = {
    "bad_request": 400,
    "unauthorized": 401,
    "not_found": 404,
    "conflict": 409,
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


def require_engine(ctx: ConsoleContext) -> Engine:
    if ctx.engine is None:
        raise ApiError("unavailable", "search is unavailable: the index could not be opened")
    return ctx.engine
