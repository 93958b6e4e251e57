"""The endpoint table and the one dispatcher both hosts call (see API.md).

Handlers are plain synchronous functions `(ctx, body) -> JSON data`; errors become an
ApiError with a code the standalone server maps to an HTTP status and a message the page
shows as it is.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from console import (
    endpoints_candidates,
    endpoints_episodes,
    endpoints_events,
    endpoints_fields,
    endpoints_health,
    endpoints_persons,
    endpoints_recall,
    endpoints_records,
    endpoints_scopes,
)
from console.context import ConsoleContext
from console.errors import ApiError
from console.requests import Body
from vault.errors import MemVaultError, kind_of, os_message
from vault.format.jsonin import check_data
from vault.layout.readonly import explain_write_error

log = logging.getLogger(__name__)

Handler = Callable[[ConsoleContext, Body], Any]

ROUTES: dict[str, Handler] = {
    **endpoints_scopes.ROUTES,
    **endpoints_episodes.ROUTES,
    **endpoints_fields.ROUTES,
    **endpoints_candidates.ROUTES,
    **endpoints_events.ROUTES,
    **endpoints_persons.ROUTES,
    **endpoints_records.ROUTES,
    **endpoints_recall.ROUTES,
    **endpoints_health.ROUTES,
}


def dispatch(ctx: ConsoleContext, endpoint: object, body: object) -> Any:
    """Run one endpoint; raise ApiError (never anything else) on failure."""
    if not isinstance(endpoint, str) or endpoint not in ROUTES:
        known = ", ".join(sorted(ROUTES))
        raise ApiError("not_found", f"unknown endpoint {str(endpoint)[:80]!r}: use one of {known}")
    started = time.perf_counter()
    try:
        # Both hosts come through here: LangBot's page SDK hands a body it parsed itself,
        # so the limits the standalone server applied while parsing are applied again.
        check_data(body, "the request body")
        data = ROUTES[endpoint](ctx, Body(body))
    except ApiError:
        raise
    except Exception as exc:  # noqa: BLE001 - one table (vault.errors) says what it is
        raise api_error(ctx, endpoint, exc) from exc
    log.info("console=call endpoint=%s ms=%.1f", endpoint, (time.perf_counter() - started) * 1e3)
    return data


def api_error(ctx: ConsoleContext, endpoint: str, exc: Exception) -> ApiError:
    """The ApiError of any exception, by its kind in vault.errors (the CLI's exit codes come
    from the same table): bad input 400, not found 404, conflict 409, unavailable 503 (a
    read-only vault, a full disk, another index writer), anything else a bug (500)."""
    if isinstance(exc, OSError) and not isinstance(exc, MemVaultError):
        explained = explain_write_error(exc, ctx.vault.root, endpoint)
        if explained is exc:  # the disk or the system refused, not the request: said so
            log.warning("console=os_error endpoint=%s error=%r", endpoint, exc)
            return ApiError.of(exc, _message(ctx, os_message(exc)))
        return ApiError.of(explained, _message(ctx, explained))
    if kind_of(exc) == "internal":
        return _internal(endpoint, exc)
    return ApiError.of(exc, _message(ctx, exc))


def _internal(endpoint: str, exc: Exception) -> ApiError:
    log.exception("console=endpoint_failed endpoint=%s", endpoint)
    return ApiError(
        "internal",
        f"{endpoint} failed ({type(exc).__name__}: {exc}); the server log has the details",
    )


def _message(ctx: ConsoleContext, exc: BaseException | str) -> str:
    """The error's text with vault paths made relative, as the page shows every path."""
    text = exc if isinstance(exc, str) else str(getattr(exc, "message", None) or exc)
    return text.replace(f"{ctx.vault.root}/", "")
