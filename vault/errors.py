"""MemVault's one error hierarchy, and the one table that maps it to exit codes and HTTP.

Every error a person can act on is one of five kinds; each concrete error (BadRequestError,
ConflictError, DiskFullError, IndexLockedError, ...) inherits its kind here and keeps its
built-in base (ValueError, OSError, ...) for the code that already catches those. The CLI
(memvault_cli), the console (console.errors) and the plugin's replies (memvault_plugin.
error_reply) all read the kinds and OUTCOMES, so `memvault`, the HTTP API and the chat can
never disagree about what an error is. This module imports nothing of MemVault:
every layer may raise these (a message's redaction imports vault.redaction.redact when it is read).

A built-in exception that is none of these is classified by what it means, not by its type
name alone: an OSError is the disk, the permissions or the network refusing (unavailable,
never "bad input"); anything else is a MemVault bug (internal).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

Kind = Literal["bad_input", "not_found", "conflict", "unavailable", "internal"]


class MemVaultError(Exception):
    """Base of every error MemVault raises on purpose; `kind` picks its outcome.

    Its text is redacted (vault.redaction.redact): a message often quotes the input it refuses, and
    it is shown, logged, sent back to a model as a tool's answer, saved in a transcript."""

    kind: ClassVar[Kind] = "internal"

    def __str__(self) -> str:
        from vault.redaction.redact import redact  # here: this module imports nothing at load time

        # Blind to case: the value echoed may be a key or a name, lower-cased or not.
        return redact(super().__str__(), folded=True).text


class BadInput(MemVaultError):
    """Input from a person, a file they wrote or a model cannot be used: the message says
    what to fix. Retrying the same input fails the same way."""

    kind: ClassVar[Kind] = "bad_input"


class BadRequestError(BadInput, ValueError):
    """Input from a person or a model that cannot be used; the message says how to fix it."""


class NotFound(MemVaultError):
    """The id, chat or file asked for does not exist (the message names the closest ones)."""

    kind: ClassVar[Kind] = "not_found"


class NotFoundError(NotFound, LookupError):
    pass


class Conflict(MemVaultError):
    """Someone else changed the file or holds its lock meanwhile: look again, then retry.
    "Busy" (another process holds the vault's write lock: LockTimeoutError) is this kind,
    not one of its own: the same exit code and HTTP status, and its message says whose."""

    kind: ClassVar[Kind] = "conflict"


class Unavailable(MemVaultError):
    """The input is fine, but the disk, the permissions, another process or a provider
    refused: fix that (the message says what), then retry the same command."""

    kind: ClassVar[Kind] = "unavailable"


class Internal(MemVaultError):
    """An invariant of MemVault broke: a bug to report, with the log."""

    kind: ClassVar[Kind] = "internal"


@dataclass(frozen=True)
class Outcome:
    exit_code: int
    http_status: int
    meaning: str


# The table README.md ("Exit codes") documents. Exit 1 is not here on purpose: it means the
# command ran and found problems (`check`, `status`, `reindex`, a write saved but not
# committed or not indexed), which is a result, not an error.
OUTCOMES: dict[Kind, Outcome] = {
    "bad_input": Outcome(2, 400, "bad usage or bad input: the message says what to fix"),
    "not_found": Outcome(2, 404, "no such memory, chat or file: the message names what exists"),
    "conflict": Outcome(3, 409, "changed or locked by someone else meanwhile: look, retry"),
    "unavailable": Outcome(4, 503, "disk, permissions, another process or a provider refused"),
    "internal": Outcome(5, 500, "a MemVault bug: please report it with the log"),
}
FOUND_PROBLEMS = 1  # exit code: ran, and found problems to show (not an error)


def kind_of(exc: BaseException) -> Kind:
    """The kind of any exception: ours by class, built-in ones by what they mean."""
    if isinstance(exc, MemVaultError):
        return exc.kind
    if isinstance(exc, OSError):
        return "unavailable"
    return "internal"


def outcome_of(exc: BaseException) -> Outcome:
    return OUTCOMES[kind_of(exc)]


def os_message(exc: OSError) -> str:
    """An OSError in words, with its file and what to do (never `[Errno 5] ...`)."""
    what = exc.strerror or str(exc) or type(exc).__name__
    where = f" ({exc.filename})" if exc.filename else ""
    return f"{what}{where}: fix that (free space, permissions, the disk), then retry"
