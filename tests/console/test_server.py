"""`memvault console`'s HTTP layer: token, Host check, static files, error mapping, and the
real command starting, serving and stopping."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from console.server import ConsoleServer
from tests.console.conftest import A, scope_body

TOKEN = "t0ken-for-tests"


@pytest.fixture
def server(ctx) -> Iterator[ConsoleServer]:
    srv = ConsoleServer(ctx, port=0, token=TOKEN)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()


def request(
    srv: ConsoleServer,
    method: str,
    path: str,
    payload: object = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
    body = None if payload is None else json.dumps(payload).encode()
    conn.request(method, path, body=body, headers=headers or {})
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data


def api(srv: ConsoleServer, endpoint: str, body: object, token: str | None = TOKEN):
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["X-MemVault-Token"] = token
    status, _, data = request(
        srv, "POST", "/api/console", {"endpoint": endpoint, "body": body}, headers
    )
    return status, json.loads(data)


def test_api_needs_the_token(server):
    for token in (None, "", "wrong", TOKEN + "x"):
        status, out = api(server, "/scopes", {}, token=token)
        assert status == 401 and out["code"] == "unauthorized"
        assert "#token=" in out["error"]
    status, out = api(server, "/scopes", {})
    assert status == 200 and {b["bot"] for b in out["data"]["bots"]} == {"bot-a", "bot-b"}


def test_errors_map_to_statuses_with_the_message(server):
    status, out = api(server, "/episodes", {"scope": {"bot": "x", "session": ".."}})
    assert status == 400 and out["code"] == "bad_request" and "session name" in out["error"]
    status, out = api(server, "/episode", {"scope": scope_body(A), "id": "ep_20990101_abcdef"})
    assert status == 404 and out["code"] == "not_found"
    status, out = api(server, "/nope", {})
    assert status == 404
    status, out = api(server, "/injection", {"scope": scope_body(A)})
    assert status == 200 and out == {"data": None}
    headers = {"X-MemVault-Token": TOKEN, "Content-Type": "application/json"}
    status, _, data = request(server, "POST", "/api/console", None, headers)
    assert status == 400
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request("POST", "/api/console", body=b"{not json", headers=headers)
    assert conn.getresponse().status == 400


def test_a_foreign_host_header_is_refused(server):
    # A web page on evil.example that resolves its name to 127.0.0.1 (DNS rebinding) sends
    # its own Host header: refuse before looking at anything else.
    status, _, _ = request(server, "GET", "/", headers={"Host": f"evil.example:{server.port}"})
    assert status == 403
    status, _ = api(server, "/scopes", {}, token=TOKEN)
    assert status == 200


def test_static_files_only_from_the_web_folder(server):
    status, headers, body = request(server, "GET", "/")
    assert status == 200 and headers["content-type"].startswith("text/html")
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    status, headers, body = request(server, "GET", "/api/v1/plugins/_sdk/page-sdk.js")
    assert status == 200 and "javascript" in headers["content-type"]
    for path in ("/../server.py", "/%2e%2e/server.py", "/.hidden", "/i18n/../../api.py", "/x"):
        status, _, _ = request(server, "GET", path)
        assert status == 404, path


def _start(vault: Path, *args: str) -> tuple[subprocess.Popen[str], str]:
    cmd = [sys.executable, "-m", "memvault_cli", "console", "--vault", str(vault), "--port", "0"]
    proc = subprocess.Popen(
        [*cmd, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    match = re.search(r"http://127\.0\.0\.1:(\d+)/(#token=\S+)?", line)
    assert match, (line, proc.stderr.read() if proc.poll() is not None else "")
    return proc, match.group(0)


def test_memvault_console_prints_a_token_url_serves_and_stops(ctx):
    root = ctx.vault.root
    ctx.engine.close()  # the console process becomes the index writer
    proc, url = _start(root)
    try:
        port = int(url.split(":")[2].split("/")[0])
        token = url.split("#token=")[1]
        assert len(token) >= 24
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        body = json.dumps({"endpoint": "/meta", "body": {}})
        conn.request("POST", "/api/console", body, {"X-MemVault-Token": token})
        meta = json.loads(conn.getresponse().read())["data"]
        assert meta["host"] == "standalone" and meta["vault"] == str(root)
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
        assert time.monotonic() - started < 30
    finally:
        if proc.poll() is None:
            proc.kill()


def test_no_auth_only_on_loopback(ctx, tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "memvault_cli", "console", "--vault", str(ctx.vault.root)]
        + ["--host", "0.0.0.0", "--no-auth", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2 and "--no-auth" in out.stderr
    missing = subprocess.run(
        [sys.executable, "-m", "memvault_cli", "console", "--vault", str(tmp_path / "none")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert missing.returncode == 2 and "memvault init" in missing.stderr
