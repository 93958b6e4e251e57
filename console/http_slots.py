"""Who may hold one of the console server's threads, and for how long (slowloris).

A connection is first *pending*: it has not sent its request line and headers yet, so
nobody knows whether it holds the token. Pending connections are cheap to make: were they
the whole budget, 50 clients trickling a byte every 3 s would keep every slot and the
person with the token would get 503 for as long as they kept at it. So:

- a pending connection has HEAD_SECONDS (http_limits) for its whole head, however it
  trickles in, and at most MAX_PENDING are read at once; one more does not wait and is not
  refused: the oldest pending connection is cut off (503, closed) and the new one read, so a
  client that sends its request in one go is always read, however many dawdle;
- once the head is complete the token is checked at once: a request that presents it is
  admitted into its own budget (MAX_AUTHED), one that does not (the page's files, a
  refusal) into a small other one (MAX_OPEN). Neither can take the other's room; a request
  past its budget gets 503 `busy` at once, without its body being read.

So unauthenticated clients hold at most MAX_PENDING + MAX_OPEN threads, each for seconds,
and can never keep a request with the token from being answered.
"""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from console.errors import ApiError

log = logging.getLogger(__name__)

MAX_PENDING = 32  # connections still sending their request line and headers
MAX_OPEN = 8  # complete requests without the token (the page's files, refusals)
MAX_AUTHED = 16  # complete requests with the token: the page makes a few calls at a time


def busy(what: str) -> ApiError:
    return ApiError("busy", f"{what}: retry in a moment, sending the whole request at once")


class BoundedServer(ThreadingHTTPServer):
    """One thread per connection, within the budgets above (the module says why)."""

    daemon_threads = True
    request_queue_size = 64

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(address, handler)
        self._lock = threading.Lock()
        self._pending: dict[socket.socket, float] = {}  # insertion order = oldest first
        self._admitted: dict[socket.socket, threading.BoundedSemaphore] = {}
        self.authed = threading.BoundedSemaphore(MAX_AUTHED)
        self.open = threading.BoundedSemaphore(MAX_OPEN)

    @property
    def pending(self) -> int:
        return len(self._pending)

    def is_pending(self, conn: socket.socket) -> bool:
        """False once `conn` was cut off for a newer connection (and answered 503)."""
        with self._lock:
            return conn in self._pending

    def process_request(self, request: Any, client_address: Any) -> None:
        """Runs on the accepting thread: never waits on a client."""
        victim = None
        with self._lock:
            if len(self._pending) >= MAX_PENDING:
                victim = next(iter(self._pending))
                del self._pending[victim]
            self._pending[request] = time.monotonic()
        if victim is not None:
            log.debug("console=pending_cut_off pending=%d", MAX_PENDING)
            refuse_now(victim, busy(f"more than {MAX_PENDING} requests are still arriving"))
            with contextlib.suppress(OSError):  # already closed by its own thread
                victim.shutdown(socket.SHUT_RDWR)  # its thread's read returns at once
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._leave(request)  # no thread was started to do it
            raise

    def admit(self, conn: socket.socket, authed: bool) -> bool:
        """The head is complete: move `conn` from pending into its budget. False: it was cut
        off meanwhile (already answered). ApiError `busy`: its budget is full."""
        with self._lock:
            if self._pending.pop(conn, None) is None:
                return False
            budget = self.authed if authed else self.open
            if not budget.acquire(blocking=False):
                size = MAX_AUTHED if authed else MAX_OPEN
                kind = "with the console token" if authed else "without the console token"
                raise busy(f"{size} requests {kind} are being served")
            self._admitted[conn] = budget
        return True

    def _leave(self, conn: socket.socket) -> None:
        with self._lock:
            self._pending.pop(conn, None)
            budget = self._admitted.pop(conn, None)
        if budget is not None:
            budget.release()

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._leave(request)


def refuse_now(sock: socket.socket, exc: ApiError) -> None:
    """A JSON answer sent without waiting: a client that is not reading gets the close."""
    body = json.dumps({"error": exc.message, "code": exc.code}).encode()
    head = (
        f"HTTP/1.1 {exc.status} {HTTPStatus(exc.status).phrase}\r\n"
        "Content-Type: application/json; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n"
    )
    try:
        sock.setblocking(False)
        sock.send(head.encode("ascii") + body)
    except OSError:
        pass
