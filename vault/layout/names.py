"""Folder names from untrusted ids (bot uuids, session names, sender ids from chat).

An id arrives from a chat platform and may hold anything: `../`, `/etc`, NUL, 500 characters.
Names are percent-encoded so the mapping is injective and reversible, then bounded; a name
too long for the cap keeps a readable prefix plus a hash, and the full id is kept beside it
in a dot-file (dot-files are ignored by sync) so listing folders still gives the ids back.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
from pathlib import Path

from vault.errors import BadInput
from vault.files.regular import is_regular_or_missing, open_regular, read_regular

MAX_NAME_BYTES = 120
MAX_ID_CHARS = 1024
_SAFE = re.compile(r"[A-Za-z0-9._@-]")
_ALL_SAFE = re.compile(r"[A-Za-z0-9._@-]*")
# "%h" can never come out of the encoder ("%" itself becomes "%25"), so it marks a hashed name.
HASH_MARK = _HASH_MARK = "%h"
_HASH_LEN = 16
ID_FILE = ".id"
# Names ending so are editor droppings and temp files that sync ignores (vault.layout.layout), and
# so are names starting with "."; an encoded id must never look like one.
IGNORED_SUFFIXES: tuple[str, ...] = ("~", ".swp", ".tmp")


class UnsafeNameError(BadInput, ValueError):
    """An id cannot be used as a folder name; the message says which rule it broke."""


def _check_id(value: str, what: str) -> None:
    if not isinstance(value, str) or value == "":
        raise UnsafeNameError(f"{what} is empty: pass a non-empty id")
    if value in (".", ".."):
        raise UnsafeNameError(f"{what} {value!r} is not allowed: '.' and '..' are path parts")
    if "\x00" in value:
        raise UnsafeNameError(f"{what} contains a NUL character: remove it")
    if len(value) > MAX_ID_CHARS:
        raise UnsafeNameError(f"{what} is {len(value)} characters long: at most {MAX_ID_CHARS}")


@functools.lru_cache(maxsize=4096)  # classify asks once per file; a vault has few scope ids
def percent_encode(value: str) -> str:
    """`value` with every character outside [A-Za-z0-9._@-] as %XX UTF-8 escapes: injective,
    never longer-capped, and never holds `/`, `:`, `~` or a lone `%` (callers join on those)."""
    if _ALL_SAFE.fullmatch(value):
        return value  # the usual id (uuid, group_123): one regex instead of one per character
    return "".join(
        ch if _SAFE.fullmatch(ch) else "".join(f"%{b:02X}" for b in ch.encode("utf-8"))
        for ch in value
    )


def encode_name(value: str, what: str = "id") -> str:
    """The folder name for an id; the same id always gives the same name."""
    _check_id(value, what)
    encoded = percent_encode(value)
    # A leading dot would hide the folder from sync and from `ls`.
    if encoded.startswith("."):
        encoded = "%2E" + encoded[1:]
    # So would an editor-file ending (`group_1.swp`): escape the suffix's first character
    # (`group_1%2Eswp`), as decode_name reads any escape, so folder_id stays consistent.
    for suffix in IGNORED_SUFFIXES:
        if encoded.endswith(suffix):
            encoded = encoded[: -len(suffix)] + f"%{ord(suffix[0]):02X}" + suffix[1:]
    if len(encoded.encode("ascii")) <= MAX_NAME_BYTES:
        return encoded
    digest = hashlib.sha256(value.encode("utf-8")).hexdigest()[:_HASH_LEN]
    prefix = encoded[: MAX_NAME_BYTES - len(_HASH_MARK) - _HASH_LEN]
    # Never cut a %XX escape in half: the prefix must stay decodable on its own.
    cut = prefix.rfind("%", len(prefix) - 2)
    if cut != -1:
        prefix = prefix[:cut]
    return f"{prefix}{_HASH_MARK}{digest}"


def is_hashed(name: str) -> bool:
    return _HASH_MARK in name


def decode_name(name: str) -> str:
    """The id a non-hashed folder name was made from (inverse of encode_name)."""
    if is_hashed(name):
        raise ValueError(f"{name!r} is a hashed name: read the id from its {ID_FILE} file")
    raw = bytearray()
    i = 0
    while i < len(name):
        if name[i] == "%":
            raw += bytes.fromhex(name[i + 1 : i + 3])
            i += 3
        else:
            raw += name[i].encode("ascii")
            i += 1
    return raw.decode("utf-8")


def folder_id(folder: Path) -> str | None:
    """The id a folder stands for, or None if the folder was not made by encode_name."""
    name = folder.name
    if is_hashed(name):
        try:
            # Never through a link (a `.id` -> elsewhere), never blocking on a FIFO; an id
            # file is at most MAX_ID_CHARS characters of at most 4 UTF-8 bytes each.
            value = read_regular(folder / ID_FILE, 4 * MAX_ID_CHARS + 1).decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        return value if encode_name(value) == name else None
    try:
        value = decode_name(name)
    except (ValueError, UnicodeDecodeError):
        return None
    return value if encode_name(value) == name else None


def safe_child(parent: Path, value: str, what: str = "id") -> Path:
    """`parent/<encoded value>`, proven to stay inside `parent` after resolving links."""
    child = parent / encode_name(value, what)
    resolved_parent = Path(os.path.realpath(parent))
    resolved = Path(os.path.realpath(child))
    if resolved.parent != resolved_parent:
        raise UnsafeNameError(f"{what} {value[:40]!r} resolves outside {parent}: refused")
    return child


def ensure_id_file(folder: Path, value: str) -> Path | None:
    """Record the full id next to a hashed folder name; returns the file it wrote, if any."""
    if not is_hashed(folder.name):
        return None
    marker = folder / ID_FILE
    if not is_regular_or_missing(marker):
        # A link (even a dangling one: `exists()` says False) or a FIFO planted there: a
        # write would land outside the vault or hang. Refused, and `check` names the folder.
        raise UnsafeNameError(
            f"{marker} is not a regular file: MemVault keeps the folder's full id there; "
            "delete it (the next write recreates it)"
        )
    try:
        # O_EXCL + O_NOFOLLOW: never over a file that took the name, never through a link.
        fd = open_regular(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    except FileExistsError:
        return None
    with os.fdopen(fd, "wb") as handle:
        handle.write(value.encode("utf-8"))
        handle.flush()
        os.fsync(handle.fileno())
    return marker


def refuse_foreign_owner(folder: Path, wanted: str, shown: str, what: str) -> None:
    """A shortened (hashed) folder whose `.id` names another id than `wanted` is refused, so
    a hash collision can never mix two owners' files; `shown` is its path for the message."""
    if is_hashed(folder.name) and folder.is_dir():
        owner = folder_id(folder)
        if owner is not None and owner != wanted:
            raise UnsafeNameError(
                f"{shown} belongs to another {what} (see its .id file): "
                "refused; rename that folder by hand"
            )
