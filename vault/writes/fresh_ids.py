"""Creating a new file (an episode, a candidate, an event) under a fresh random id.

The id is chosen before the file exists, so two writers may pick the same one: the file is
created only where no file holds the name (vault.files.safewrite.create_new), and another id
is drawn when one does. An id the caller gave is tried once: taken, the caller is told to
pick another. Used by every "new file" write of the vault, inside the operation's Txn.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from vault.errors import BadRequestError, Internal
from vault.files.safewrite import create_new
from vault.writes.transaction import Txn

ATTEMPTS = 20  # six hex digits a day: a clash is rare, twenty in a row is a broken clock
T = TypeVar("T")


def dated_id(prefix: str, at: datetime) -> str:
    """`<prefix>_YYYYMMDD_<6 hex>`: the form of every MemVault file id."""
    return f"{prefix}_{at:%Y%m%d}_{secrets.token_hex(3)}"


def create_under_fresh_id(
    txn: Txn,
    noun: str,
    given: str | None,
    fresh: Callable[[], str],
    draft: Callable[[str], tuple[T, Path, bytes]],
) -> tuple[T, Path, bytes]:
    """Create the file `draft(id)` returns (value, path, bytes) inside `txn`, under `given` or
    else an id from `fresh` that no file holds yet; the value, path and bytes written."""
    for _ in range(ATTEMPTS):
        ident = given or fresh()
        value, path, data = draft(ident)
        if create_new(path, data):
            txn.written.append(path)
            return value, path, data
        if given:
            article = "an" if noun[0] in "aeiou" else "a"
            raise BadRequestError(f"{article} {noun} file {ident} already exists: pick another id")
    raise Internal(f"could not find a free {noun} id after {ATTEMPTS} tries")


def rendered(render: Callable[[T], str], value: T, saving: str) -> bytes:
    """`render(value)` as UTF-8; its ValueError (the value would not read back) as the
    BadRequestError `cannot save this <saving>`."""
    try:
        return render(value).encode("utf-8")
    except ValueError as exc:
        raise BadRequestError(f"cannot save this {saving}: {exc}") from exc


def free_id(noun: str, fresh: Callable[[], str], taken: Callable[[str], bool]) -> str:
    """An id from `fresh` that `taken` says no file holds yet (chosen before the file is
    created elsewhere, e.g. to name it in another file first)."""
    for _ in range(ATTEMPTS):
        ident = fresh()
        if not taken(ident):
            return ident
    raise Internal(f"could not find a free {noun} id after {ATTEMPTS} tries")
