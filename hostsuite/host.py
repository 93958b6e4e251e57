"""The real LangBot host's plumbing for the suites: child processes in their own process
groups, LangBot's HTTP API as the web UI uses it, bounded waits. Shared by hostsuite/suite.py
and the host benchmarks under bench/.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

ADMIN = {"user": "suite@example.com", "password": "hostsuite-Pass-1"}
READY = ("initialized", "running", "mounted")


class SuiteError(RuntimeError):
    pass


class ProcessExited(SuiteError):
    """A child of the suite died: waiting longer for anything cannot help."""


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what: str, check: Callable[[], Any], timeout: float, every: float = 0.5) -> Any:
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            value = check()
            if value:
                return value
        except ProcessExited:
            raise
        except Exception as exc:  # noqa: BLE001 - retried until the deadline
            last = exc
        time.sleep(every)
    raise SuiteError(
        f"timed out after {timeout:.0f}s waiting for {what}" + (f": {last}" if last else "")
    )


class Processes:
    """Children in their own process groups, stopped by id, newest first."""

    def __init__(self, logs: Path) -> None:
        self.logs = logs
        self.items: list[tuple[str, subprocess.Popen[bytes]]] = []

    def start(
        self, name: str, argv: list[str], cwd: Path, env: dict[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        # Appended: a restarted child (MemVault after a settings change) keeps the log of
        # the run before it, which is often the one that says what went wrong.
        out = (self.logs / f"{name}.log").open("ab")
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env={**os.environ, **(env or {})},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.items.append((name, proc))
        log(f"started {name} pid={proc.pid}")
        return proc

    def stop(self, name: str) -> None:
        for item in [i for i in self.items if i[0] == name]:
            proc = item[1]
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)
            self.items.remove(item)
            log(f"stopped {name} pid={proc.pid}")

    def check_alive(self) -> None:
        for name, proc in self.items:
            if proc.poll() is not None:
                tail = (self.logs / f"{name}.log").read_text("utf-8", "replace")[-2000:]
                raise ProcessExited(f"{name} exited with {proc.returncode}:\n{tail}")

    def stop_all(self) -> None:
        for _, proc in reversed(self.items):
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 15
        for name, proc in reversed(self.items):
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                log(f"{name} did not stop on SIGTERM: SIGKILL pid={proc.pid}")
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)
        self.items.clear()


class Host:
    """LangBot's HTTP API as the web UI uses it."""

    def __init__(self, port: int) -> None:
        self.base = f"http://127.0.0.1:{port}"
        self.http = httpx.Client(base_url=self.base, timeout=60)
        self.token = ""
        self.workspace = ""

    def call(self, method: str, path: str, **kw: Any) -> Any:
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        if self.workspace:
            headers["X-Workspace-Id"] = self.workspace
        response = self.http.request(method, path, headers=headers, **kw)
        try:
            body = response.json()
        except ValueError as exc:
            raise SuiteError(
                f"{method} {path} -> {response.status_code} {response.text[:300]}"
            ) from exc
        if response.status_code >= 400 or body.get("code") not in (0, None):
            raise SuiteError(f"{method} {path} -> {response.status_code} {json.dumps(body)[:600]}")
        return body.get("data")

    def bootstrap(self) -> None:
        self.call("POST", "/api/v1/user/init", json=ADMIN)
        self.token = self.call("POST", "/api/v1/user/auth", json=ADMIN)["token"]
        self.workspace = self.call("GET", "/api/v1/workspaces")["workspaces"][0]["uuid"]

    def plugins(self) -> list[dict[str, Any]]:
        return self.call("GET", "/api/v1/plugins")["plugins"]

    def plugin_status(self, ident: str, *, debug: bool | None = None) -> str | None:
        """The status of plugin `author/name` (the debug-attached or the installed copy)."""
        for plugin in self.plugins():
            manifest = plugin.get("manifest", {})
            manifest = manifest.get("manifest", manifest) if isinstance(manifest, dict) else {}
            meta = manifest.get("metadata", {})
            if f"{meta.get('author')}/{meta.get('name')}" != ident:
                continue
            if debug is None or bool(plugin.get("debug")) == debug:
                return str(plugin.get("status", "")).lower()
        return None


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0
