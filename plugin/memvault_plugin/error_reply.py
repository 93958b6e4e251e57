"""How any MemVaultError becomes the plugin's answer, by its kind (vault.errors).

The hierarchy's rule is that an error's message says what to do next, so the answer is the
message, for every kind: a tool gives the model `Error: <message>`, `!memory` gives the chat
`[Memory] <message>` (plus, for the kinds a person fixes outside the chat, where to look).
The kind, not the class, picks the log line and the `outcome=` the command logs, so the
plugin, the CLI's exit codes and the console's HTTP statuses read one table (OUTCOMES).
"Busy" is no kind of its own: a held write lock is a Conflict (exit 3, HTTP 409), like a
file changed meanwhile; its message says whose lock and what to do.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from vault.errors import Kind, MemVaultError

log = logging.getLogger(__name__)
T = TypeVar("T")

# What `!memory` adds after the message, by kind: the input's own kinds need nothing more;
# for the others the person looks elsewhere (the health report, the plugin log).
COMMAND_NEXT: dict[Kind, str] = {
    "bad_input": "",
    "not_found": "",
    "conflict": "",
    "unavailable": ". Run !memory health for details.",
    "internal": " (a MemVault bug: the details are in the plugin log; please report it).",
}


def _logged(exc: MemVaultError, event: str, query_id: Any, sub: str = "") -> None:
    """`memvault=<event>_refused` (or `_failed` for a bug, with its traceback: the log gets
    it, the reply never does)."""
    where = f" sub={sub}" if sub else ""
    if exc.kind == "internal":
        log.exception("memvault=%s_failed%s query_id=%s kind=internal", event, where, query_id)
    else:
        log.info(
            "memvault=%s_refused%s query_id=%s kind=%s reason=%r",
            event,
            where,
            query_id,
            exc.kind,
            str(exc),
        )


def tool_reply(exc: MemVaultError, tool: str, query_id: Any) -> str:
    """The answer a tool gives the model for `exc`: `Error: <what to do>`."""
    _logged(exc, tool, query_id)
    return f"Error: {exc}"


def command_reply(exc: MemVaultError, sub: str, query_id: Any) -> str:
    """The one line `!memory <sub>` answers for `exc`."""
    _logged(exc, "command", query_id, sub)
    text = " ".join(str(exc).split())
    tail = COMMAND_NEXT[exc.kind]
    return f"[Memory] {text.rstrip('.') if tail else text}{tail}"


ToolCall = Callable[..., Awaitable[str]]


def replies_errors(tool: str) -> Callable[[ToolCall], ToolCall]:
    """Decorate a Tool's `call`: any MemVaultError raised anywhere inside it (parsing, the
    vault, the index, a provider) becomes `Error: <what to do>` for the model, so no kind
    escapes to the host as a traceback. Refusals a tool words itself stay its own."""

    def wrap(call: ToolCall) -> ToolCall:
        @functools.wraps(call)
        async def guarded(self: Any, params: Any, session: Any, query_id: int) -> str:
            try:
                return await call(self, params, session, query_id)
            except MemVaultError as exc:
                return tool_reply(exc, tool, query_id)

        return guarded

    return wrap
