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

from console import endpoints_episodes, endpoints_health, endpoints_records, endpoints_scopes
from console.context import ConsoleContext
from console.errors import ApiError
from console.requests import Body
from indexer.backend import IndexLockedError
from vault.model import FormatError
from vault.readonly import explain_write_error
from vault.safewrite import ConflictError, LockTimeoutError
from vault.store import BadRequestError, NotFoundError

log = logging.getLogger(__name__)

Handler = Callable[[ConsoleContext, Body], Any]

ROUTES: dict[str, Handler] = {
    **endpoints_scopes.ROUTES,
    **endpoints_episodes.ROUTES,
    **endpoints_records.ROUTES,
    **endpoints_health.ROUTES,
}


def dispatch(ctx: ConsoleContext, endpoint: object, body: object) -> Any:
    """Run one endpoint; raise ApiError (never anything else) on failure."""
    if not isinstance(endpoint, str) or endpoint not in ROUTES:
        known = ", ".join(sorted(ROUTES))
        raise ApiError("not_found", f"unknown endpoint {str(endpoint)[:80]!r}: use one of {known}")
    started = time.perf_counter()
    try:
        data = ROUTES[endpoint](ctx, Body(body))
    except ApiError:
        raise
    except (BadRequestError, FormatError) as exc:
        raise ApiError("bad_request", _message(ctx, exc)) from exc
    except NotFoundError as exc:
        raise ApiError("not_found", _message(ctx, exc)) from exc
    except (ConflictError, LockTimeoutError) as exc:
        raise ApiError("conflict", _message(ctx, exc)) from exc
    except IndexLockedError as exc:
        raise ApiError("unavailable", _message(ctx, exc)) from exc
    except ValueError as exc:  # UnsafeNameError and ScopeId's checks say what is wrong
        raise ApiError("bad_request", _message(ctx, exc)) from exc
    except OSError as exc:
        explained = explain_write_error(exc, ctx.vault.root, endpoint)
        if explained is exc:
            raise _internal(endpoint, exc) from exc
        raise ApiError("unavailable", _message(ctx, explained)) from exc
    except Exception as exc:  # noqa: BLE001 - the page gets a message, the log the trace
        raise _internal(endpoint, exc) from exc
    log.info("console=call endpoint=%s ms=%.1f", endpoint, (time.perf_counter() - started) * 1e3)
    return data


def _internal(endpoint: str, exc: Exception) -> ApiError:
    log.exception("console=endpoint_failed endpoint=%s", endpoint)
    return ApiError(
        "internal",
        f"{endpoint} failed ({type(exc).__name__}: {exc}); the server log has the details",
    )


def _message(ctx: ConsoleContext, exc: BaseException) -> str:
    """The error's text with vault paths made relative, as the page shows every path."""
    text = str(getattr(exc, "message", None) or exc)
    return text.replace(f"{ctx.vault.root}/", "")
