"""The index writer's side of indexer.cli.writer_link: answer `memvault search`, look for a
`remember`'s duplicate and confirm a `remember` is indexed, for the CLI processes of the
same user.

`WriterServer(engine).start()` in `memvault watch`, `console` and `demo` (the processes that
hold the model and the index writer lock). It binds the socket (replacing one a killed
writer left: we hold the writer lock, so no live writer owns it), answers one request per
connection on a thread of its own, one request at a time on the engine, and removes the
socket on stop. A request is answered by the same code the command runs without a writer
(indexer.cli.search_cmd.search_output), so the output and exit code are the same.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import socket
import threading
from pathlib import Path
from typing import Any

from indexer.cli import search_cmd
from indexer.cli.writer_link import (
    MAX_REQUEST,
    PROTOCOL,
    peer_allowed,
    peer_uid,
    private_dir,
    read_line,
    socket_path,
)
from indexer.engine import Engine
from vault.errors import BadInput, BadRequestError, kind_of, os_message

log = logging.getLogger(__name__)

READ_S = 2.0  # a peer that connects and sends nothing is dropped after this
MAX_PATHS = 1000
INDEX_WAIT_S = 20.0  # a remember's paths wait this long for a running sync


class Unanswerable(BadInput):
    """A request this writer cannot take (a newer CLI's option or choice): `ok: null`, the
    CLI then does the work itself, as without a writer. Bad input of the one hierarchy, were
    it ever to escape the handler that answers it."""


class WriterServer:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.root = Path(os.path.realpath(engine.root))
        self.path = socket_path(self.root)
        self._sock: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._busy = threading.Lock()  # one request at a time on the engine

    def start(self) -> WriterServer:
        """Listen; an OSError (a foreign folder, a read-only disk) only logs: the CLI then
        works as without a writer, slower."""
        try:
            private_dir(self.path.parent)
            if self.path.is_socket() or self.path.is_symlink():
                self.path.unlink()  # a dead writer's: we hold the writer lock now
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            old = os.umask(0o177)  # the socket is born 0600, never briefly wider
            try:
                sock.bind(os.fspath(self.path))
            finally:
                os.umask(old)
            os.chmod(self.path, 0o600)
            sock.listen(16)
            sock.settimeout(0.5)  # the accept loop looks at the stop flag this often
        except OSError as exc:
            log.warning("writer_socket=unavailable path=%s error=%s", self.path, os_message(exc))
            return self
        self._sock = sock
        self._thread = threading.Thread(target=self._serve, name="memvault-socket", daemon=True)
        self._thread.start()
        log.info("writer_socket=listening path=%s", self.path)
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
        if self._sock is not None:
            self._sock.close()
            self._sock = None
            with contextlib.suppress(OSError):
                self.path.unlink()

    def __enter__(self) -> WriterServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _serve(self) -> None:
        assert self._sock is not None
        with self._busy:  # the first search must not pay for loading the model (~0.3-1.4 s)
            self._warm()
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return  # closed by stop()
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _warm(self) -> None:
        try:
            self.engine.embedder.embed_query("warm up")
            self.engine.calibrated()
        except Exception as exc:  # noqa: BLE001 - a provider down now may answer later
            log.info("writer_socket=warm_failed error=%r", str(exc))

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            try:
                if not peer_allowed(peer_uid(conn)):
                    log.warning("writer_socket=refused reason=other_user")
                    return
                conn.settimeout(READ_S)
                raw = read_line(conn, MAX_REQUEST)
                answer = self.answer(raw)
                conn.settimeout(None)
                conn.sendall(json.dumps(answer, ensure_ascii=False).encode("utf-8") + b"\n")
            except (OSError, ValueError) as exc:  # the peer left, sent too much, timed out
                log.info("writer_socket=dropped reason=%r", str(exc))

    def answer(self, raw: bytes) -> dict[str, Any]:
        """The answer to one request line; `ok: null` tells the client to do it itself."""
        try:
            request = json.loads(raw)
        except ValueError:
            return {"v": PROTOCOL, "ok": None, "why": "not JSON"}
        if not isinstance(request, dict) or request.get("v") != PROTOCOL:
            return {"v": PROTOCOL, "ok": None, "why": f"protocol {PROTOCOL} only"}
        if request.get("root") != str(self.root):
            return {"v": PROTOCOL, "ok": None, "why": "another vault"}
        op = request.get("op")
        try:
            with self._busy:
                if op == "search":
                    args = search_args_of(request.get("args"), self.root)
                    return {"v": PROTOCOL, "ok": True, "stdout": self._search(args)}
                if op == "indexed":
                    return {"v": PROTOCOL, "ok": True, "behind": self._index(request)}
                if op == "duplicate":  # `memvault remember`'s check (indexer.cli.remember_dup)
                    from indexer.cli.remember_dup import answer

                    found = answer(self.engine, request.get("probe"))
                    return {"v": PROTOCOL, "ok": True, "duplicate": found}
        except Unanswerable as exc:
            return {"v": PROTOCOL, "ok": None, "why": str(exc)}
        except Exception as exc:  # noqa: BLE001 - every error goes back as its kind and words
            message = os_message(exc) if isinstance(exc, OSError) else str(exc)
            if kind_of(exc) == "internal":
                log.warning("writer_socket=internal_error op=%s", op, exc_info=exc)
            return {"v": PROTOCOL, "ok": False, "kind": kind_of(exc), "message": message}
        return {"v": PROTOCOL, "ok": None, "why": "unknown op"}

    def _search(self, args: argparse.Namespace) -> str:
        return search_cmd.search_output(self.engine, args)

    def _index(self, request: dict[str, Any]) -> list[str]:
        """Index the paths a `remember` wrote now (not after the watcher's quiet period);
        the ones still behind (a long sync held the writer past INDEX_WAIT_S)."""
        paths = request.get("paths")
        if not isinstance(paths, list) or len(paths) > MAX_PATHS:
            raise BadRequestError("paths: a list of at most 1000 vault paths")
        if not all(_relative(p) for p in paths):
            raise BadRequestError("paths: relative paths inside the vault")
        syncer = self.engine.syncer
        if syncer is None:
            return list(paths)
        # The syncer refuses paths outside the vault (indexer.sync.documents.role_of).
        report = syncer.try_sync_paths(list(paths), INDEX_WAIT_S)
        return [] if report is not None else list(paths)


def _relative(path: object) -> bool:
    """A vault-relative path (never the whole vault: that would be a full reconcile)."""
    if not isinstance(path, str) or not 0 < len(path) < 4096 or "\0" in path:
        return False
    parts = Path(path).parts
    return not Path(path).is_absolute() and ".." not in parts and parts not in ((), (".",))


def search_args_of(raw: object, root: Path) -> argparse.Namespace:
    """The client's parsed `memvault search` options, checked against the options the
    search parser defines here (names, value types, choices): hostile input is refused as
    bad input, never passed on. The vault is always this writer's own."""
    if not isinstance(raw, dict):
        raise BadRequestError("args: an object")
    defaults = search_cmd.search_defaults()
    choices = search_cmd.option_choices()
    wanted: dict[str, Any] = {}
    for name, value in raw.items():
        if name not in defaults:  # a newer CLI's option: it searches by itself
            raise Unanswerable(f"args: unknown option {name!r}")
        default = defaults[name]
        if default is argparse.SUPPRESS:  # --vault, --json: given or absent
            default = False if name == "json" else None
        if not _same_shape(value, default):
            raise BadRequestError(f"args: {name} has the wrong type")
        if name in choices and value not in choices[name]:
            raise Unanswerable(f"args: {name} is not one of {sorted(choices[name])}")
        wanted[name] = value
    base = {k: v for k, v in defaults.items() if v is not argparse.SUPPRESS}
    args = argparse.Namespace(**{**base, **wanted})
    args.vault = str(root)
    return args


def _same_shape(value: object, default: object) -> bool:
    if default is None:
        return value is None or isinstance(value, str)
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, int):
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(default, list):
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    return isinstance(value, type(default))
