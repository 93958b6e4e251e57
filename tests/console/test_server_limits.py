"""`memvault console` answers every malformed request with a 4xx JSON error and never reads
more than its limits (issue 10, item 4): raw sockets against the real server."""

from __future__ import annotations

import json
import re
import select
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from console import http_limits
from console.context import ConsoleContext
from console.server import ConsoleServer
from tests.console.test_server import _start
from vault.writes.create import init_vault
from vault.writes.operations import Vault

TOKEN = "t0ken-for-limit-tests"
HEAD = f"Host: 127.0.0.1\r\nX-MemVault-Token: {TOKEN}\r\n"
META = b'{"endpoint": "/meta", "body": {}}'
MB = 1 << 20


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """A real console server over a real vault (no index: /meta needs none)."""
    root = tmp_path_factory.mktemp("limits") / "vault"
    init_vault(root, git=False)
    ctx = ConsoleContext(vault=Vault(root, git=False), engine=None, isolation="session")
    srv = ConsoleServer(ctx, port=0, token=TOKEN)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv.port
    srv.shutdown()


def exchange(port: int, data: bytes, timeout: float = 15.0) -> bytes:
    """Send `data`, then read the answer until the server closes (or `timeout` passes)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        answer = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            answer += chunk
        return answer


def status_and_error(answer: bytes) -> tuple[int, dict[str, str]]:
    match = re.match(rb"HTTP/1\.[01] (\d{3}) ", answer)
    assert match, answer[:200]
    head, _, body = answer.partition(b"\r\n\r\n")
    assert b"application/json" in head
    return int(match[1]), json.loads(body)


def post(length_lines: str, body: bytes = b"") -> bytes:
    return f"POST /api/console HTTP/1.1\r\n{HEAD}{length_lines}\r\n".encode("latin-1") + body


def valid_request_works(port: int) -> None:
    status, out = status_and_error(exchange(port, post(f"Content-Length: {len(META)}\r\n", META)))
    assert status == 200 and "data" in out


# --------------------------------------------------------------------------- each variant

LONG_HEADER = "X-Long: " + "y" * 20_000 + "\r\n"
MANY = "".join(f"X-Header-{i}: v\r\n" for i in range(100))
VARIANTS = {
    "negative": (post("Content-Length: -1\r\n", META), 400, "Content-Length"),
    "non-numeric": (post("Content-Length: abc\r\n"), 400, "Content-Length"),
    "plus sign": (post("Content-Length: +5\r\n", b"{}   "), 400, "Content-Length"),
    "exponent": (post("Content-Length: 1e3\r\n"), 400, "Content-Length"),
    "a list": (post("Content-Length: 5, 5\r\n", b"{}   "), 400, "Content-Length"),
    "huge number": (post(f"Content-Length: {'9' * 30}\r\n"), 413, "larger than"),
    "5,000 digits": (post(f"Content-Length: {'1' * 5000}\r\n"), 413, "larger than"),
    "over the cap": (post(f"Content-Length: {http_limits.MAX_BODY + 1}\r\n", b"x" * 1000), 413, ""),
    "duplicate, conflicting": (post("Content-Length: 5\r\nContent-Length: 6\r\n"), 400, "one"),
    "duplicate, equal": (post("Content-Length: 2\r\nContent-Length: 2\r\n", b"{}"), 400, "one"),
    "chunked": (post("Transfer-Encoding: chunked\r\n", b"2\r\n{}\r\n0\r\n\r\n"), 411, "Transfer"),
    "chunked and length": (
        post("Transfer-Encoding: chunked\r\nContent-Length: 2\r\n", b"{}"),
        411,
        "Transfer",
    ),
    "missing on POST": (post(""), 411, "Content-Length is missing"),
    "10,000-char path": (f"GET /{'a' * 10_000} HTTP/1.1\r\n{HEAD}\r\n".encode(), 414, "path"),
    "5,000-char path": (f"GET /{'a' * 5_000} HTTP/1.1\r\n{HEAD}\r\n".encode(), 404, ""),
    "100 headers": (f"GET / HTTP/1.1\r\n{HEAD}{MANY}\r\n".encode(), 431, "headers"),
    "20,000-char header": (f"GET / HTTP/1.1\r\n{HEAD}{LONG_HEADER}\r\n".encode(), 431, "header"),
    "a body on GET": (f"GET / HTTP/1.1\r\n{HEAD}Content-Length: 2\r\n\r\n{{}}".encode(), 400, ""),
    "garbage line": (b"GARBAGE\r\n\r\n", 400, "POST /api/console HTTP/1.1"),
    "HTTP/0.9": (b"GET /\r\n\r\n", 400, "HTTP/0.9"),
    "blank request line": (b" \r\n\r\n", 400, "empty request line"),
    "HTTP/2.0 line": (b"GET / HTTP/2.0\r\n\r\n", 400, "HTTP"),
    "unknown method": (f"PUT / HTTP/1.1\r\n{HEAD}\r\n".encode(), 405, "POST"),
    "body ends early": (post("Content-Length: 50\r\n", b"{}"), 400, "ended after 2"),
}


@pytest.mark.parametrize("name", list(VARIANTS))
def test_each_malformed_request_gets_a_4xx_json_answer(port, name):
    data, expected, says = VARIANTS[name]
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=15) as sock:
        sock.sendall(data)
        if name == "body ends early":
            sock.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    status, out = status_and_error(answer)
    assert status == expected, out
    assert out["code"] and says in out["error"]
    assert time.monotonic() - started < 5
    valid_request_works(port)


def test_a_request_that_trickles_in_is_cut_off(port, monkeypatch):
    monkeypatch.setattr(http_limits, "IDLE_SECONDS", 0.5)
    monkeypatch.setattr(http_limits, "BODY_SECONDS", 2.0)
    monkeypatch.setattr(http_limits, "HEAD_SECONDS", 1.0)
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=15) as sock:
        sock.sendall(post(f"Content-Length: {len(META)}\r\n"))
        answer = b""
        for byte in META:  # one byte every 0.3 s: each pause is short, the whole is not
            readable, _, _ = select.select([sock], [], [], 0.3)
            if readable:
                break
            sock.sendall(bytes([byte]))
        while chunk := sock.recv(65536):
            answer += chunk
    status, out = status_and_error(answer)
    assert status == 408 and out["code"] == "timeout"
    assert time.monotonic() - started < 5
    with socket.create_connection(("127.0.0.1", port), timeout=15) as sock:
        sock.sendall(b"POST /api/console HTTP/1.1\r\n")  # ... and then nothing
        status, out = status_and_error(sock.recv(65536))
        assert status == 408 and "headers did not arrive within 1 s" in out["error"]
    valid_request_works(port)


# --------------------------------------------------------------------------- bounded reads


def flood(port: int, head: bytes, total: int) -> tuple[bytes, int]:
    """Send `head`, then up to `total` bytes of body as fast as the server takes them, reading
    its answer meanwhile, until the server shuts the connection (a send fails): (the answer,
    bytes of body the kernel accepted)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=15)
    sock.sendall(head)
    sock.setblocking(False)
    chunk, sent, answer, reading = b"x" * 65536, 0, b"", True
    deadline = time.monotonic() + 60
    try:
        while sent < total and time.monotonic() < deadline:
            readable, writable, _ = select.select([sock] if reading else [], [sock], [], 5)
            if readable:
                try:
                    data = sock.recv(65536)
                except ConnectionResetError:
                    data = b""
                answer += data
                reading = bool(data)
            if writable:
                try:
                    sent += sock.send(chunk)
                except (BrokenPipeError, ConnectionResetError):
                    break  # the server closed: it reads no more
            if not readable and not writable:
                break  # neither reading nor answering for 5 s
        while reading and time.monotonic() < deadline:  # an answer still on its way
            select.select([sock], [], [], 5)
            try:
                data = sock.recv(65536)
            except (BlockingIOError, ConnectionResetError):
                data = b""
            answer += data
            reading = bool(data)
    finally:
        sock.close()
    return answer, sent


def test_negative_length_stops_the_read_at_once(port):
    answer, sent = flood(port, post("Content-Length: -1\r\n"), 50 * MB)
    status, out = status_and_error(answer)
    assert status == 400 and "Content-Length" in out["error"]
    # Only the socket buffers and the short drain after the answer, never the 50 MB.
    assert sent < 20 * MB, sent
    valid_request_works(port)


def test_memvault_console_does_not_grow_on_an_unbounded_body(ctx):
    """The real `memvault console` process: 50 MB behind `Content-Length: -1` leave its
    resident memory where it was."""
    ctx.engine.close()  # the console process becomes the index writer
    proc, url = _start(ctx.vault.root)
    try:
        port = int(url.split(":")[2].split("/")[0])
        token = url.split("#token=")[1]
        head = (
            f"POST /api/console HTTP/1.1\r\nHost: 127.0.0.1\r\nX-MemVault-Token: {token}\r\n"
            "Content-Length: -1\r\n\r\n"
        ).encode()
        meta = f"POST /api/console HTTP/1.1\r\nHost: 127.0.0.1\r\nX-MemVault-Token: {token}\r\n"
        meta += f"Content-Length: {len(META)}\r\n\r\n"
        assert status_and_error(exchange(port, meta.encode() + META))[0] == 200
        before = rss_kib(proc.pid)
        answer, sent = flood(port, head, 50 * MB)
        grown = rss_kib(proc.pid) - before
        assert sent < 20 * MB and grown < 20 * 1024, (sent, grown)
        assert status_and_error(answer)[0] == 400
        assert status_and_error(exchange(port, meta.encode() + META))[0] == 200
    finally:
        proc.kill()
        proc.wait(timeout=30)


def rss_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    match = re.search(r"^VmRSS:\s+(\d+) kB", status, re.M)
    assert match
    return int(match[1])


# --------------------------------------------------------------------------- the class

header_values = st.one_of(
    st.integers(-(10**30), 10**30).map(str),
    st.integers(0, 400).map(str),
    st.from_regex(r"\A[ \t]{0,2}0{0,3}[0-9]{1,3}[ \t]{0,2}\Z"),
    st.text(alphabet="0123456789+-eE.,x_ \t\u0663\u00b2\u0000", max_size=12),
    st.text(max_size=10).filter(lambda v: "\r" not in v and "\n" not in v),
)


def oracle(value: str) -> int | None:
    """RFC 9110: 1*DIGIT (around it only spaces and tabs); None when the value is a size."""
    digits = value.strip(" \t")
    if not re.fullmatch(r"[0-9]+", digits, re.ASCII):
        return 400
    return 413 if int(digits) > http_limits.MAX_BODY else None


@settings(max_examples=150, deadline=None)
@given(value=header_values)
def test_any_content_length_value_is_answered_by_the_rule(port, value):
    expected = oracle(value)
    body = b""
    if expected is None:
        size = int(value.strip(" \t"))
        body = META.ljust(size) if size >= len(META) else b" " * size
        expected = 200 if size >= len(META) else 400
    data = f"POST /api/console HTTP/1.1\r\n{HEAD}Content-Length: {value}\r\n\r\n"
    status, out = status_and_error(exchange(port, data.encode("utf-8") + body))
    assert status == expected, (value, out)
    if status != 200:
        assert out["code"] in ("bad_request", "too_large") and out["error"]


@settings(max_examples=150, deadline=None)
@given(line=st.binary(max_size=300).filter(lambda b: b"\n" not in b and b"HTTP/1." not in b))
def test_any_garbage_request_line_gets_a_4xx_json_answer(port, line):
    status, out = status_and_error(exchange(port, line + b"\r\n\r\n"))
    assert 400 <= status < 500 and out["error"], (line, out)
