"""The one error type endpoints raise, with a code each host maps (HTTP status, fail text)."""

from __future__ import annotations

from console.context import ConsoleContext
from indexer.engine import Engine
from vault.errors import OUTCOMES, Kind, kind_of
from vault.redaction.redact import redact

# MemVault's error kinds (vault.errors) as this API names them. Their statuses come from
# the one table the CLI's exit codes come from (OUTCOMES), never from a second list here.
API_CODES: dict[Kind, str] = {
    "bad_input": "bad_request",
    "not_found": "not_found",
    "conflict": "conflict",
    "unavailable": "unavailable",
    "internal": "internal",
}
STATUS = {
    **{API_CODES[kind]: outcome.http_status for kind, outcome in OUTCOMES.items()},
    # What only HTTP has: the request itself (auth, method, size, headers).
    "unauthorized": 401,
    "forbidden": 403,
    "method_not_allowed": 405,
    "timeout": 408,
    "busy": 503,  # too many connections at once (console.http_slots)
    "length_required": 411,
    "too_large": 413,
    "uri_too_long": 414,
    "headers_too_large": 431,
}


class ApiError(Exception):
    def __init__(self, code: str, message: str) -> None:
        # A message may quote the request (an unknown endpoint, a bad value); it is shown,
        # and logged by the plugin's page: redacted like MemVault's own errors (vault.errors).
        message = redact(message, folded=True).text
        super().__init__(message)
        self.code = code
        self.message = message

    @property
    def status(self) -> int:
        return STATUS.get(self.code, 500)

    @classmethod
    def of(cls, exc: BaseException, message: str) -> ApiError:
        """Any exception, by its kind (vault.errors.kind_of), with the text to show."""
        return cls(API_CODES[kind_of(exc)], message)

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
