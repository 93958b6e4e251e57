"""Bounded reading of one HTTP request for `memvault console`'s server.

The standard library's http.server reads a request line of up to 64 KiB and 100 header lines
of 64 KiB each, leaves Content-Length to the handler (`int("-1")` reads to the end of the
stream, `int("abc")` kills the connection with no answer) and answers a line too long in HTML
or not at all. Here each limit is small and checked before anything past it is read, the
whole request has a deadline, and every refusal is an ApiError the server answers once, as
JSON, before it closes the connection. Who may hold a connection at all: console.http_slots.
"""

from __future__ import annotations

import io
import re
import socket
import time
from email.message import Message
from typing import BinaryIO

from console.errors import ApiError

MAX_REQUEST_LINE = 8 * 1024  # bytes with CRLF: the console's paths are short -> 414
MAX_HEADER_LINE = 16 * 1024  # a browser's Cookie for localhost can be a few KiB -> 431
MAX_HEADERS = 64  # browsers send about 20
MAX_HEAD_BYTES = 64 * 1024  # all header lines together
MAX_BODY = 6_000_000  # an import of a few thousand episodes fits
# Deadlines (read when used, so tests can shorten them). The head gets a short one for the
# whole of it, not a pause limit that a byte every few seconds resets: until it is complete
# nobody knows whether the client holds the token (console.http_slots). Browsers send their
# head in one packet.
HEAD_SECONDS = 5.0  # the request line and headers, from the connection's start -> 408
BODY_SECONDS = 60.0  # the body, however it trickles in (6 MB on loopback: well under 1 s)
IDLE_SECONDS = 10.0  # no byte of the body for this long, or an answer nobody reads -> 408
# RFC 9110: Content-Length = 1*DIGIT. No sign, no exponent, no list, ASCII digits only.
_DIGITS = re.compile(r"[0-9]+")
# A field name is an RFC 9110 token, then the colon at once.
_FIELD_LINE = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+:")
_HINT = "send a request like `POST /api/console HTTP/1.1` with one Content-Length header"


class DeadlineReader(io.RawIOBase):
    """The connection's bytes, each read waiting at most IDLE_SECONDS and never past
    `deadline` (the head's, then the body's: the server moves it once the head is read): a
    client that sends one byte every few seconds still runs out."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        super().__init__()
        self.sock = sock
        self.deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("request deadline passed")
        self.sock.settimeout(min(IDLE_SECONDS, left))
        return self.sock.recv_into(buffer)


def bounded_reader(sock: socket.socket) -> tuple[io.BufferedReader, DeadlineReader]:
    """A buffered reader of `sock` and its raw reader, whose deadline is the head's."""
    raw = DeadlineReader(sock, time.monotonic() + HEAD_SECONDS)
    return io.BufferedReader(raw), raw


def timed_out(body: bool) -> ApiError:
    if not body:
        return ApiError(
            "timeout",
            f"the request line and headers did not arrive within {HEAD_SECONDS:g} s: "
            "send them in one go",
        )
    return ApiError(
        "timeout",
        f"the body did not arrive within {BODY_SECONDS:g} s (or paused for "
        f"{IDLE_SECONDS:g} s): send it in one go",
    )


def read_request_line(rfile: BinaryIO) -> bytes:
    """The request line with its CRLF; b"" when the client closed without sending one."""
    line = rfile.readline(MAX_REQUEST_LINE + 1)
    if len(line) > MAX_REQUEST_LINE:
        raise ApiError(
            "uri_too_long",
            f"the request line is longer than {MAX_REQUEST_LINE} bytes: shorten the path",
        )
    return line


def read_head(rfile: BinaryIO) -> bytes:
    """The header lines up to and including the blank line, within the limits above."""
    lines: list[bytes] = []
    total = 0
    while True:
        line = rfile.readline(MAX_HEADER_LINE + 1)
        if len(line) > MAX_HEADER_LINE:
            raise ApiError(
                "headers_too_large",
                f"a header line is longer than {MAX_HEADER_LINE} bytes: shorten it",
            )
        total += len(line)
        if total > MAX_HEAD_BYTES:
            raise ApiError(
                "headers_too_large",
                f"the headers are larger than {MAX_HEAD_BYTES} bytes: send fewer or shorter ones",
            )
        if line in (b"\r\n", b"\n", b""):
            lines.append(line)
            return b"".join(lines)
        _check_field_line(line, lines)
        lines.append(line)
        if len(lines) > MAX_HEADERS:
            raise ApiError(
                "headers_too_large", f"more than {MAX_HEADERS} headers: send fewer headers"
            )


def _check_field_line(line: bytes, before: list[bytes]) -> None:
    """RFC 9112 5.1 and 3.2: no space before the colon, no folded line, one Host. A parser
    that reads `Transfer-Encoding : chunked` as some other header (Python's does) while a
    proxy in front reads it as chunked is how requests get smuggled: refused, not guessed."""
    if not _FIELD_LINE.match(line):
        raise ApiError(
            "bad_request",
            f"header line {line[:40]!r} is not `Name: value`: no space before the colon, "
            "no line folded onto the one before",
        )
    if line[:5].lower() == b"host:" and any(b[:5].lower() == b"host:" for b in before):
        raise ApiError("bad_request", "more than one Host header: send exactly one")


def body_length(headers: Message, method: str) -> int:
    """The body's size from the request's one Content-Length header, checked before a byte of
    the body is read. Chunked or other transfer codings are refused, not decoded: the page
    always knows its body's size."""
    if headers.get_all("Transfer-Encoding"):
        raise ApiError(
            "length_required",
            "Transfer-Encoding is not accepted: send the body with one Content-Length header",
        )
    values = headers.get_all("Content-Length") or []
    if not values:
        if method == "POST":
            raise ApiError(
                "length_required",
                "Content-Length is missing: send the body's size in bytes in a Content-Length "
                "header",
            )
        return 0
    if len(values) > 1:
        raise ApiError("bad_request", f"{len(values)} Content-Length headers: send exactly one")
    text = values[0].strip(" \t")
    if not _DIGITS.fullmatch(text):
        raise ApiError(
            "bad_request",
            f"Content-Length {values[0][:40]!r} is not a size: send the body's size in bytes, "
            "digits 0-9 only",
        )
    # Compare the digits before int(): a 100,000-digit value must not cost a conversion.
    if len(text.lstrip("0")) > len(str(MAX_BODY)) or int(text) > MAX_BODY:
        raise ApiError("too_large", f"the request is larger than {MAX_BODY:,} bytes: split it")
    length = int(text)
    if length and method != "POST":
        raise ApiError("bad_request", f"a {method} request has no body: send it without one")
    return length


def read_body(rfile: BinaryIO, length: int) -> bytes:
    """Exactly `length` bytes (at most MAX_BODY, checked by body_length)."""
    data = rfile.read(length) if length else b""
    if len(data) != length:
        raise ApiError(
            "bad_request",
            f"the body ended after {len(data)} of the {length} bytes Content-Length announced: "
            "send the whole body",
        )
    return data


def protocol_error(status: int, message: str) -> ApiError:
    """A refusal of the standard library's own request-line checks, with what to send."""
    return ApiError.for_status(status, f"{message}: {_HINT}")
