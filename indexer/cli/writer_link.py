"""The local socket a running index writer answers on, and the CLI's side of it.

A writer (`memvault watch`, `console`, `demo`) already holds the model and the open
indexes; a `memvault search` from a shell that asks it answers in milliseconds instead of
loading its own (README "From a shell"). The socket is a Unix socket, never a TCP port:
`<vault>/.memvault/run/writer.sock` (the folder 0700, the socket 0600), or, when that path
is past AF_UNIX's 108 bytes, `$XDG_RUNTIME_DIR/memvault/<hash of the vault>.sock` (else
`/tmp/memvault-<uid>/`). The writer answers only a peer of its own uid (SO_PEERCRED).

Protocol (PROTOCOL): one JSON object per line each way, one request per connection. The
request is at most MAX_REQUEST bytes: `{"v": 1, "op": "search", "root": ..., "args": {...}}`
or `{"v": 1, "op": "indexed", "root": ..., "paths": [...]}` or `{"v": 1, "op": "duplicate",
"root": ..., "probe": {...}}` (indexer.cli.remember_dup); the answer `{"v": 1, "ok": true,
"stdout": ...}` (or `"behind"`, `"duplicate"`) or `{"v": 1, "ok": false, "kind": ...,
"message": ...}`. Anything else
(no socket, a stale one a killed writer left, a refused connection, another version, a
timeout) makes `ask` return None and the command does the work itself, as without a writer.

This module imports only the standard library and vault.errors: the CLI's search path
must not pay for numpy, the model or the indexes before it knows it needs them.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import socket
import stat
import struct
from pathlib import Path
from typing import Any

from vault.errors import BadInput, Conflict, Internal, MemVaultError, NotFound, Unavailable

log = logging.getLogger(__name__)

PROTOCOL = 1
MAX_REQUEST = 64 * 1024  # a search's options or a few hundred paths; more is refused
MAX_ANSWER = 32 * 1024 * 1024  # a --top-k 10000 --json answer fits
CONNECT_S = 0.5  # a live writer accepts at once; a hung one must not hang the shell
ANSWER_S = 30.0  # a search is milliseconds; indexing a remember waits for a running sync
SUN_PATH_MAX = 107  # sockaddr_un.sun_path is 108 bytes with its terminating NUL
STATE_DIR = ".memvault"  # = vault.layout.layout.STATE_DIR (not imported: it pulls the layout)
_KINDS: dict[str, type[MemVaultError]] = {
    "bad_input": BadInput,
    "not_found": NotFound,
    "conflict": Conflict,
    "unavailable": Unavailable,
    "internal": Internal,
}


def raise_answer_error(answer: dict[str, Any]) -> None:
    """What the writer raised for our request, raised here with its kind and message: the
    exit code and the stderr line are the ones the command gives without a writer."""
    raise _KINDS.get(str(answer.get("kind")), Internal)(str(answer.get("message")))


def socket_path(root: Path) -> Path:
    """Where the writer of the vault at `root` listens (the same for both sides)."""
    root = Path(os.path.realpath(root))  # the same vault by any path: the same socket
    near = root / STATE_DIR / "run" / "writer.sock"
    if len(os.fsencode(near)) <= SUN_PATH_MAX:
        return near
    digest = hashlib.sha256(os.fsencode(root)).hexdigest()[:32]
    runtime = os.environ.get("XDG_RUNTIME_DIR") or ""
    base = Path(runtime) / "memvault" if runtime else Path(f"/tmp/memvault-{os.getuid()}")
    return base / f"{digest}.sock"


def private_dir(folder: Path) -> Path:
    """`folder` created 0700 and checked to be ours: a folder someone else made (in /tmp)
    or a link planted there is refused (OSError), never used."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise PermissionError(f"{folder} is not a folder of this user: remove it")
    if stat.S_IMODE(info.st_mode) != 0o700:
        os.chmod(folder, 0o700)
    return folder


def peer_uid(conn: socket.socket) -> int:
    """The uid of the process at the other end of a Unix socket (SO_PEERCRED: the kernel's
    word, not anything the peer sends)."""
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid


def peer_allowed(uid: int) -> bool:
    """Only the writer's own user may ask it (root included only when it is root)."""
    return uid == os.getuid()


def read_line(conn: socket.socket, limit: int) -> bytes:
    """One line (without its newline) of at most `limit` bytes; ValueError past it."""
    data = bytearray()
    while b"\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
        if len(data) > limit + 1:
            raise ValueError(f"line longer than {limit} bytes")
    line, _, _ = bytes(data).partition(b"\n")
    if len(line) > limit:
        raise ValueError(f"line longer than {limit} bytes")
    return line


def ask(
    root: Path, request: dict[str, Any], *, answer_s: float = ANSWER_S
) -> dict[str, Any] | None:
    """The running writer's answer to `request`, or None when there is no writer to ask
    (then the caller does the work itself). Never hangs past the timeouts, never raises
    for a missing, stale or foreign socket."""
    path = socket_path(root)
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISSOCK(info.st_mode) or info.st_uid != os.getuid():
        log.info("writer_link=skipped path=%s reason=not_our_socket", path)
        return None
    body = json.dumps(
        {"v": PROTOCOL, "root": os.path.realpath(root), **request}, ensure_ascii=False
    ).encode("utf-8")
    if len(body) > MAX_REQUEST:
        return None  # too big to ask: the caller does it itself
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(CONNECT_S)
        conn.connect(os.fspath(path))
        if not peer_allowed(peer_uid(conn)):  # a socket another user bound there
            return None
        conn.settimeout(answer_s)
        conn.sendall(body + b"\n")
        answer = json.loads(read_line(conn, MAX_ANSWER))
    except (OSError, ValueError) as exc:  # refused (stale), timed out, cut off, not JSON
        log.info("writer_link=fallback path=%s reason=%r", path, str(exc))
        return None
    finally:
        conn.close()
    if not isinstance(answer, dict) or answer.get("v") != PROTOCOL:
        return None
    if answer.get("ok") is None:  # the writer could not take it (another vault, busy)
        return None
    return answer
