"""`memvault console`'s local HTTP server: the page's files, a stand-in for LangBot's page
SDK, and `POST /api/console` running the same endpoints as the plugin's Page component.

Safety: binds 127.0.0.1 unless told otherwise; every API call needs the random token printed
at start-up (header X-MemVault-Token; a header, not a cookie, so another site open in the
browser cannot make calls for you); the Host header must name this server (DNS rebinding);
static files come only from console/web/.
"""

from __future__ import annotations

import hmac
import json
import logging
import mimetypes
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from console.api import dispatch
from console.context import ConsoleContext
from console.errors import ApiError

log = logging.getLogger(__name__)

WEB_DIR = Path(__file__).resolve().parent / "web"
SDK_URL = "/api/v1/plugins/_sdk/page-sdk.js"
SDK_FILE = "standalone-sdk.js"
API_URL = "/api/console"
MAX_BODY = 6_000_000
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
        self.httpd = ThreadingHTTPServer((host, port), _handler(self))
        self.httpd.daemon_threads = True
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
        name = urlsplit(f"//{header or ''}").hostname or ""
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
        path = (self.web_dir / rel).resolve()
        if self.web_dir not in path.parents or not path.is_file():
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

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
            log.debug("console=http %s", format % args)

        def _send(self, status: int, body: bytes, ctype: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Referrer-Policy", "no-referrer")
            self.send_header("Content-Security-Policy", CSP)
            self.end_headers()
            self.wfile.write(body)

        def _json(self, status: int, data: Any) -> None:
            body = json.dumps(data, ensure_ascii=False).encode("utf-8")
            self._send(status, body, "application/json; charset=utf-8")

        def _error(self, status: int, code: str, message: str) -> None:
            self._json(status, {"error": message, "code": code})

        def do_GET(self) -> None:  # noqa: N802 - stdlib name
            if not server.allowed_host(self.headers.get("Host")):
                return self._error(403, "forbidden", "unknown Host: open the printed URL")
            path = server.static_file(urlsplit(self.path).path)
            if path is None:
                return self._error(404, "not_found", "no such page")
            ctype = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
            if ctype.startswith("text/") or ctype.endswith(("javascript", "json")):
                ctype += "; charset=utf-8"
            self._send(200, path.read_bytes(), ctype)

        def do_POST(self) -> None:  # noqa: N802 - stdlib name
            if not server.allowed_host(self.headers.get("Host")):
                return self._error(403, "forbidden", "unknown Host: open the printed URL")
            if urlsplit(self.path).path != API_URL:
                return self._error(404, "not_found", f"POST only to {API_URL}")
            if not server.check_token(self.headers.get("X-MemVault-Token")):
                return self._error(
                    401,
                    "unauthorized",
                    "missing or wrong console token: open the URL `memvault console` printed "
                    "(it ends in #token=...)",
                )
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY:
                return self._error(413, "bad_request", "request larger than 6 MB: split it")
            try:
                payload = json.loads(self.rfile.read(length) or b"null")
            except (ValueError, UnicodeDecodeError):
                return self._error(400, "bad_request", "the request body is not valid JSON")
            try:
                data = server.call(payload)
            except ApiError as exc:
                return self._error(exc.status, exc.code, exc.message)
            self._json(HTTPStatus.OK, {"data": data})

    return Handler
