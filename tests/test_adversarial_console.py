"""`memvault console`'s server against hostile clients, beyond the request limits of
tests/console/test_server_limits.py: Host headers the URL parser itself rejects, and many
connections held open at once (one thread each, 60 s each: without a cap, a machine's worth).
Raw sockets against the real server over a real vault."""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from console import http_limits
from console.context import ConsoleContext
from console.server import ConsoleServer
from tests.console.test_server_limits import META, TOKEN, exchange, post, valid_request_works
from vault.create import init_vault
from vault.operations import Vault


def _serve(root: Path) -> ConsoleServer:
    init_vault(root, git=False)
    ctx = ConsoleContext(vault=Vault(root, git=False), engine=None, isolation="session")
    srv = ConsoleServer(ctx, port=0, token=TOKEN)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    srv = _serve(tmp_path_factory.mktemp("adv") / "vault")
    yield srv.port
    srv.shutdown()


def status_of(answer: bytes) -> int:
    match = re.match(rb"HTTP/1\.[01] (\d{3}) ", answer)
    assert match, f"no HTTP answer at all: {answer[:200]!r}"
    return int(match[1])


HOST_CHARS = st.characters(min_codepoint=0x21, max_codepoint=0x7E)


@settings(max_examples=150, deadline=None)
@given(host=st.text(HOST_CHARS, min_size=0, max_size=40))
@example(host="[")  # urlsplit raises "Invalid IPv6 URL": the old server dropped the connection
@example(host="[::1")
@example(host="]")
@example(host="[127.0.0.1]")
@example(host="127.0.0.1.evil.com")
@example(host="localhost@evil.com")
@example(host="localhost:80@evil.com")
@example(host="127.0.0.1:99999999")
def test_every_host_header_gets_an_answer_and_only_loopback_is_served(port, host):
    token = f"X-MemVault-Token: {TOKEN}\r\nContent-Length: {len(META)}\r\n"
    for method, request in (
        ("GET", f"GET / HTTP/1.1\r\nHost: {host}\r\n\r\n".encode("latin-1")),
        ("POST", f"POST /api/console HTTP/1.1\r\nHost: {host}\r\n{token}\r\n".encode() + META),
    ):
        status = status_of(exchange(port, request))
        assert status in (200, 400, 403), (host, status)
        # A name that is not loopback at all is never served (DNS rebinding).
        if not any(name in host for name in ("127.0.0.1", "localhost", "::1")):
            assert status in (400, 403), (host, method, status)


def _handler_threads() -> int:
    return sum("process_request_thread" in t.name for t in threading.enumerate())


def test_connections_held_open_are_capped_and_the_server_recovers(tmp_path, monkeypatch):
    # raising=False: the old server had no cap, and must fail on the thread count, not here
    monkeypatch.setattr(http_limits, "MAX_CONNECTIONS", 4, raising=False)
    srv = _serve(tmp_path / "vault")
    idle: list[socket.socket] = []
    try:
        for _ in range(40):  # each sends half a request line, then waits (up to 60 s)
            sock = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
            sock.sendall(b"GET / HT")
            idle.append(sock)
        deadline = time.monotonic() + 10
        while _handler_threads() < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # let the accept loop take every connection it is going to
        assert _handler_threads() <= 4

        started = time.monotonic()
        answer = exchange(srv.port, post(f"Content-Length: {len(META)}\r\n", META), timeout=10)
        assert status_of(answer) == 503
        body = json.loads(answer.partition(b"\r\n\r\n")[2])
        assert body["code"] == "busy" and "retry" in body["error"]
        assert time.monotonic() - started < 3  # answered at once, not after the 60 s
    finally:
        for sock in idle:
            sock.close()
    deadline = time.monotonic() + 10
    while _handler_threads() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _handler_threads() == 0  # every slot came back
    valid_request_works(srv.port)
    srv.shutdown()


BODY = f"X-MemVault-Token: {TOKEN}\r\nContent-Length: {len(META)}\r\n"
MALFORMED_HEADS = {
    # Python's parser reads these as other headers and would answer 200 from Content-Length;
    # a proxy in front may read them as chunked: the RFC 9112 answer is 400.
    "space before the colon, TE": f"Host: 127.0.0.1\r\n{BODY}Transfer-Encoding : chunked\r\n",
    "tab before the colon, CL": f"Host: 127.0.0.1\r\nX-MemVault-Token: {TOKEN}\r\n"
    f"Content-Length\t: {len(META)}\r\n",
    "first header folded": f" Host: 127.0.0.1\r\n{BODY}",
    "folded line": f"Host: 127.0.0.1\r\n{BODY}X-Note: a\r\n  folded\r\n",
    "no colon": f"Host: 127.0.0.1\r\n{BODY}JustAName\r\n",
    "two Host headers": f"Host: 127.0.0.1\r\nHost: evil.example\r\n{BODY}",
    "two Host headers, cases": f"Host: 127.0.0.1\r\n{BODY}hOsT: 127.0.0.1\r\n",
}


@pytest.mark.parametrize("name", sorted(MALFORMED_HEADS))
def test_header_lines_that_parsers_read_differently_are_refused(port, name):
    request = f"POST /api/console HTTP/1.1\r\n{MALFORMED_HEADS[name]}\r\n".encode() + META
    answer = exchange(port, request)
    assert status_of(answer) == 400, answer[:300]
    assert json.loads(answer.partition(b"\r\n\r\n")[2])["code"] == "bad_request"
    valid_request_works(port)
