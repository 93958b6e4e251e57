"""`memvault console`'s local HTTP server: the page's files, a stand-in for LangBot's page
SDK, and `POST /api/console` running the same endpoints as the plugin's Page component.

Safety: binds 127.0.0.1 unless told otherwise; every API call needs the random token printed
at start-up (header X-MemVault-Token; a header, not a cookie, so another site open in the
browser cannot make calls for you); the Host header must name this server (DNS rebinding);
static files come only from console/web/. Every read of a request is bounded (see
http_limits.py), connections are admitted within budgets that keep room for requests with
the token however many clients dawdle (http_slots.py), and every malformed request gets a
4xx JSON answer saying what to fix.
"""

from __future__ import annotations

import hmac
import json
import logging
import mimetypes
import socket
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from io import BytesIO
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from console import http_limits as limits
from console.api import dispatch
from console.context import ConsoleContext
from console.errors import ApiError
from console.http_slots import BoundedServer
from vault.errors import BadRequestError
from vault.format.jsonin import load_json

log = logging.getLogger(__name__)

WEB_DIR = Path(__file__).resolve().parent / "web"
SDK_URL = "/api/v1/plugins/_sdk/page-sdk.js"
SDK_FILE = "standalone-sdk.js"
API_URL = "/api/console"
# After a refusal, what the client is still sending is read and dropped for a moment, so the
# close does not reset the connection before the client has read the answer; not longer.
LINGER_SECONDS = 1.0
LINGER_BYTES = 1 << 20
LOOPBACK = ("127.0.0.1", "localhost", "::1")
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; object-src 'none'"
)


class ConsoleServer:
    def __init__(
        self,
        ctx: ConsoleContext,
        *,
        host: str = "127.0.0.1",
        port: int = 8765,
        token: str | None,
        web_dir: Path = WEB_DIR,
    ) -> None:
        self.ctx = ctx
        self.token = token
        self.web_dir = web_dir.resolve()
        # One call at a time: the console has one person behind it, and serialising keeps
        # a health probe or an import from interleaving with an edit of the same files.
        self.calls = threading.Lock()
        self.httpd = BoundedServer((host, port), _handler(self))
        self.host = host

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    @property
    def url(self) -> str:
        shown = f"[{self.host}]" if ":" in self.host else self.host
        base = f"http://{shown}:{self.port}/"
        return f"{base}#token={self.token}" if self.token else base

    def serve_forever(self) -> None:
        self.httpd.serve_forever(poll_interval=0.2)

    def shutdown(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def allowed_host(self, header: str | None) -> bool:
        if self.host not in LOOPBACK:
            return True  # bound on purpose to another address: the token is the guard
        try:
            name = urlsplit(f"//{header or ''}").hostname or ""
        except ValueError:  # `Host: [` (an unclosed IPv6 bracket): no name, not ours
            return False
        return name in LOOPBACK

    def check_token(self, given: str | None) -> bool:
        if self.token is None:
            return True
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def static_file(self, url_path: str) -> Path | None:
        if url_path == SDK_URL:
            return self.web_dir / SDK_FILE
        rel = url_path.lstrip("/") or "index.html"
        parts = rel.split("/")
        if any(p in ("", ".", "..") or p.startswith(".") or "\\" in p for p in parts):
            return None
        try:
            path = (self.web_dir / rel).resolve()
            if self.web_dir not in path.parents or not path.is_file():
                return None
        except (OSError, ValueError):  # a name too long for the file system, a NUL byte
            return None
        return path

    def call(self, payload: Any) -> Any:
        if not isinstance(payload, dict):
            raise ApiError("bad_request", 'send {"endpoint": "/...", "body": {...}}')
        with self.calls:
            return dispatch(self.ctx, payload.get("endpoint"), payload.get("body"))


def _handler(server: ConsoleServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "MemVaultConsole/1"
        sys_version = ""
        timeout = limits.IDLE_SECONDS
        # Buffered (flushed at the end of _send): the status line, headers and a small body
        # leave in one write, so a client's first read gets the whole answer, not the head.
        wbufsize = -1
        length = 0  # the request body's size, checked before the method runs
        body_read = False  # nothing of the request is left unread on the connection
        answered = False

        def setup(self) -> None:
            super().setup()
            self.rfile.close()  # replaced by a reader with the head's deadline, then the body's
            self.rfile, self.reader = limits.bounded_reader(self.connection)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
            log.debug("console=http %s", format % args)

        def handle_one_request(self) -> None:
            """One request per connection: the request line, the headers and the body each
            read within its limit; any refusal is answered by `_fail`."""
            self.close_connection = True
            self.command, self.request_version, self.requestline = "", "HTTP/1.0", ""
            self.body_read = self.answered = in_body = False
            slots: BoundedServer = self.server  # type: ignore[assignment]
            try:
                line = limits.read_request_line(self.rfile)
                if not line:
                    return
                head = limits.read_head(self.rfile)
                if not slots.is_pending(self.connection):
                    return  # cut off for a newer connection while it dawdled: answered 503
                if not self._parse(line, head):
                    return  # parse_request answered through send_error
                # The token is checked as soon as the head is complete: with it, the request
                # has room of its own, however many others are arriving (http_slots).
                authed = server.check_token(self.headers.get("X-MemVault-Token"))
                if not slots.admit(self.connection, authed):
                    return
                self.reader.deadline = time.monotonic() + limits.BODY_SECONDS
                in_body = True
                method = getattr(self, f"do_{self.command}", None)
                if method is None:
                    raise ApiError(
                        "method_not_allowed", "use GET for the page and POST for /api/console"
                    )
                self.length = limits.body_length(self.headers, self.command)
                self.body_read = self.length == 0
                method()
            except ApiError as exc:
                self._fail(exc)
            except TimeoutError:
                self._fail(limits.timed_out(in_body))
            except OSError as exc:  # the client went away: nobody to answer
                log.debug("console=http_dropped error=%s", exc)

        def _parse(self, line: bytes, head: bytes) -> bool:
            """The stdlib's request-line and header parsing, over the bytes already read."""
            self.raw_requestline = line
            connection, self.rfile = self.rfile, BytesIO(head)
            try:
                parsed = self.parse_request()
            finally:
                self.rfile = connection
            self.close_connection = True
            if not parsed and not self.answered:  # a blank request line: stdlib says nothing
                raise limits.protocol_error(400, "an empty request line")
            if parsed and self.request_version == "HTTP/0.9":
                raise limits.protocol_error(400, "an HTTP/0.9 request line")
            return parsed

        def send_error(self, code: int, message: str | None = None, explain: Any = None) -> None:
            # The stdlib's own checks (bad request line, unknown version) answer as JSON too.
            reason = message or self.responses.get(code, ("bad request",))[0]
            self._fail(limits.protocol_error(code, reason))

        def _fail(self, exc: ApiError) -> None:
            self.close_connection = self.answered = True
            if self.request_version in ("", "HTTP/0.9"):
                self.request_version = "HTTP/1.0"  # else no status line is written at all
            log.debug("console=refused status=%d code=%s", exc.status, exc.code)
            try:
                self._json(exc.status, {"error": exc.message, "code": exc.code})
                if self.body_read:
                    return
                self.connection.shutdown(socket.SHUT_WR)
                deadline, left = time.monotonic() + LINGER_SECONDS, LINGER_BYTES
                while left > 0 and (wait := deadline - time.monotonic()) > 0:
                    self.connection.settimeout(wait)
                    chunk = self.connection.recv(min(left, 65536))
                    if not chunk:
                        break
                    left -= len(chunk)
            except OSError:
                pass  # timed out, reset or gone: the answer was sent or cannot be

        def _send(self, status: int, body: bytes, ctype: str) -> None:
            self.connection.settimeout(limits.IDLE_SECONDS)  # a client that never reads
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Referrer-Policy", "no-referrer")
            self.send_header("Content-Security-Policy", CSP)
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()

        def _json(self, status: int, data: Any) -> None:
            body = json.dumps(data, ensure_ascii=False).encode("utf-8")
            self._send(status, body, "application/json; charset=utf-8")

        def do_GET(self) -> None:  # noqa: N802 - stdlib name
            if not server.allowed_host(self.headers.get("Host")):
                raise ApiError("forbidden", "unknown Host: open the printed URL")
            path = server.static_file(urlsplit(self.path).path)
            if path is None:
                raise ApiError("not_found", "no such page")
            ctype = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
            if ctype.startswith("text/") or ctype.endswith(("javascript", "json")):
                ctype += "; charset=utf-8"
            self._send(200, path.read_bytes(), ctype)

        def do_POST(self) -> None:  # noqa: N802 - stdlib name
            if not server.allowed_host(self.headers.get("Host")):
                raise ApiError("forbidden", "unknown Host: open the printed URL")
            if urlsplit(self.path).path != API_URL:
                raise ApiError("not_found", f"POST only to {API_URL}")
            if not server.check_token(self.headers.get("X-MemVault-Token")):
                raise ApiError(
                    "unauthorized",
                    "missing or wrong console token: open the URL `memvault console` printed "
                    "(it ends in #token=...)",
                )
            raw = limits.read_body(self.rfile, self.length)
            self.body_read = True
            try:
                # Decoded as json.loads decodes bytes (UTF-8, -16 or -32 by the first bytes).
                text = raw.decode(json.detect_encoding(raw), "surrogatepass") if raw else "null"
                payload = load_json(text, "the request body")
            except (json.JSONDecodeError, UnicodeDecodeError):
                raise ApiError("bad_request", "the request body is not valid JSON") from None
            except BadRequestError as exc:  # too deep, a number out of range (vault.format.jsonin)
                raise ApiError("bad_request", str(exc)) from None
            self._json(HTTPStatus.OK, {"data": server.call(payload)})

    return Handler
