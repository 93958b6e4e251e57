"""Helpers for the Memory Console browser tests (imported by test_browser.py; not a conftest
pytest loads by itself): Debian's chromium, a real vault made with the real `memvault`
commands, and `memvault console` as a subprocess."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.helpers.browser import browser_missing
from tests.helpers.paths import REPO
from vault.writes.new_episode import NewEpisode
from vault.writes.profile_edit import ProfileEdit

ARTIFACTS = REPO / "test-artifacts" / "console"
BIN = Path(sys.executable).parent
MEMVAULT = str(BIN / "memvault")
URL_RE = re.compile(r"http://127\.0\.0\.1:\d+/\S*")

BOT = "b1"
CHAT = "group_123"
OTHER = "group_456"


def require_chromium() -> None:
    """Fail (never skip) when the browser or the driver is missing, saying how to get them."""
    missing = browser_missing()
    if missing:
        pytest.fail(f"{missing}, then run the tests again", pytrace=False)


def memvault(vault: Path, *args: str) -> str:
    """Run the real `memvault` command on `vault`; its stdout."""
    done = subprocess.run(
        [MEMVAULT, *args, "--vault", str(vault)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if done.returncode != 0:
        raise AssertionError(f"memvault {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout.strip()


@dataclass
class Seeded:
    root: Path
    ids: dict[str, str] = field(default_factory=dict)

    def chat_dir(self, session: str = CHAT) -> Path:
        return self.root / "bots" / BOT / "sessions" / session

    def episode_file(self, name: str, session: str = CHAT) -> Path:
        found = list((self.chat_dir(session) / "episodes").rglob(f"{self.ids[name]}.md"))
        assert len(found) == 1, f"episode {name} ({self.ids[name]}) not found once: {found}"
        return found[0]


# Where build_vault keeps the vault it made with the real commands, to copy for each module
# (tests/console/conftest.py points it into the session's tmp folder; None: build each time).
TEMPLATE_DIR: Path | None = None
_template: Seeded | None = None


def build_vault(root: Path) -> Seeded:
    """The browser suite's seeded vault at `root`: a copy of the one `make_seeded` made once
    per test process (three `memvault` starts cost seconds; the copy is byte-equal, ids too)."""
    global _template
    if TEMPLATE_DIR is None:
        return make_seeded(root)
    if _template is None:
        _template = make_seeded(TEMPLATE_DIR / "vault")
    shutil.copytree(_template.root, root, symlinks=True)
    return Seeded(root, dict(_template.ids))


def make_seeded(root: Path) -> Seeded:
    """`memvault init`, `memvault remember` and `memvault profile` (the real commands), then
    more memories through the same operations in-process (vault.writes.operations.Vault: each CLI
    start costs half a second)."""
    from vault.format.model import Speaker
    from vault.layout.keys import ScopeId
    from vault.writes.operations import Vault

    subprocess.run([MEMVAULT, "init", str(root)], capture_output=True, check=True, timeout=60)
    seeded = Seeded(root)
    chat = ("--bot", BOT, "--session", CHAT)
    seeded.ids["trip"] = memvault(
        root, "remember", "Alice is going to Beijing next week for a conference", *chat,
        "--speaker", "u42", "--speaker-name", "Alice", "--tag", "travel", "--key", "trip",
    )  # fmt: skip
    memvault(root, "profile", "set", "name", "Alice", *chat, "--speaker", "u42")

    vault = Vault(root, git=True)
    scope = ScopeId(BOT, CHAT)
    memories = {
        "coffee": ("Bob prefers oat flat white coffee at 8", Speaker("u7", "Bob"), ["coffee"]),
        "standup": ("The team standup moved to 10:30 on Tuesdays", None, ["work"]),
        "wedding": ("小明下个月要去上海参加婚礼", Speaker("u9", "小明"), []),
        "doomed": ("Temporary note that will be deleted", None, []),
        "xss": ('Markup stays text: <img src=x onerror="window.__xss=1"> <b>bold</b>', None, []),
    }  # fmt: skip
    for name, (text, speaker, tags) in memories.items():
        seeded.ids[name] = vault.remember(
            NewEpisode(scope, text, speaker=speaker, tags=tags, source="user")
        ).id
    other = ScopeId(BOT, OTHER)
    seeded.ids["secret"] = vault.remember(
        NewEpisode(other, "Other chat secret: the launch code is 4242")
    ).id
    vault.update_profile(
        ProfileEdit(scope, "preferences", "add", "coffee: oat flat white", speaker="u42")
    )
    vault.update_profile(ProfileEdit(scope, "traits", "add", "friendly chat"))
    return seeded


class Console:
    """`memvault console --port 0` on a vault; `url` is the printed start-up URL."""

    def __init__(self, vault: Path, log: Path, *extra: str) -> None:
        self.log = log
        self.proc = subprocess.Popen(
            [MEMVAULT, "console", "--vault", str(vault), "--port", "0", *extra],
            stdout=subprocess.PIPE,
            stderr=log.open("w"),
            text=True,
        )
        self.url = self._wait_for_url(timeout=60)
        self.base = self.url.split("#", 1)[0]
        self.token = self.url.split("#token=", 1)[1] if "#token=" in self.url else None

    def call(self, endpoint: str, body: dict[str, object]) -> object:
        """One API call as the page's shim makes it; the answer's `data`."""
        request = urllib.request.Request(
            self.base + "api/console",
            data=json.dumps({"endpoint": endpoint, "body": body}).encode(),
            headers={"X-MemVault-Token": self.token or "", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.load(answer)["data"]

    def wait_until_searchable(self, session: str, query: str, timeout: float = 30.0) -> None:
        """The server prints its URL before its start-up sync has indexed the vault."""
        scope = {"bot": BOT, "session": session}

        def found() -> bool:
            answer = self.call("/search", {"scope": scope, "query": query, "mode": "text"})
            return bool(answer["items"])  # type: ignore[index]

        eventually(found, f"{query!r} searchable in {session}", timeout)

    def _wait_for_url(self, timeout: float) -> str:
        found: list[str] = []

        def read() -> None:
            assert self.proc.stdout is not None
            for line in self.proc.stdout:
                match = URL_RE.search(line)
                if match:
                    found.append(match.group(0))
                    return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(timeout)
        if not found:
            self.stop()
            raise AssertionError(
                f"`memvault console` printed no http://127.0.0.1:PORT/ URL within {timeout:.0f} s;"
                f" its log:\n{self.log.read_text(errors='replace')[-3000:]}"
            )
        return found[0]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


class InProcessConsole(Console):
    """What `memvault console --port 0` serves (console.cli.open_context, then ConsoleServer
    with a token), in this process's thread: the embedded model is loaded once per test
    process, not once per module. The command itself, its URL line and its terminal are
    tested as a subprocess (test_server.py, test_console_terminal_quiet.py)."""

    def __init__(self, vault: Path, log: Path) -> None:  # noqa: D107 - no super(): no process
        import argparse
        import secrets

        from console.cli import open_context
        from console.server import ConsoleServer

        self.log = log
        args = argparse.Namespace(vault=str(vault), isolation="session", no_git=False)
        self.ctx = open_context(args)
        self.server = ConsoleServer(self.ctx, port=0, token=secrets.token_urlsafe(24))
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = self.server.url
        self.base = self.url.split("#", 1)[0]
        self.token = self.url.split("#token=", 1)[1] if "#token=" in self.url else None

    def stop(self) -> None:
        self.server.shutdown()
        self.thread.join(10)
        if self.ctx.engine is not None:
            self.ctx.engine.close()


@contextmanager
def running_console(seeded: Seeded) -> Iterator[Console]:
    """The console on the seeded vault (in this process), once chat A's memories are
    searchable."""
    server = InProcessConsole(seeded.root, seeded.root.parent / "console.log")
    server.wait_until_searchable(CHAT, "Beijing")
    try:
        yield server
    finally:
        server.stop()


def disk_text(path: Path) -> str:
    """The file's text, "" while it is absent: a rewrite is a compare-and-swap that moves the
    old file aside for an instant (vault.files.safewrite), so a poll can land in that gap."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""


def eventually(check: Callable[[], bool], what: str, timeout: float = 5.0) -> None:
    """Poll `check` until it is true (files on disk after a page action)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for: {what}")


def screenshot(page: object, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)  # type: ignore[attr-defined]
    return path


# ---------------------------------------------------------------------------- LangBot host
# A stand-in for LangBot 4.11's web UI, served by Playwright on a fake origin: it fetches the
# page's HTML, points the page SDK's <script src> at the host (as LangBot does), shows it from
# a blob: URL in an iframe sandboxed with "allow-scripts allow-forms" (opaque origin: no
# storage, no clipboard, no downloads), sends `langbot:context` and answers `langbot:api`
# messages through the plugin's page API (here: the standalone server's endpoints).
LANGBOT = "http://langbot.test"
PLUGIN_ASSETS = "/api/v1/plugins/memvault/MemVault/assets/components/pages/console/"
PLUGIN_HTML = "/api/v1/plugins/memvault/MemVault/authenticated-assets/components/pages/console/"
SDK_PATH = "/api/v1/plugins/_sdk/page-sdk.js"
HOST_CSP = (  # LangBot's CSP for plugin pages, plus the blob: frame of the host page itself
    f"default-src {LANGBOT}; script-src {LANGBOT} 'unsafe-inline'; "
    f"style-src {LANGBOT} 'unsafe-inline'; img-src {LANGBOT} data:; connect-src {LANGBOT}; "
    "frame-src blob:; object-src 'none'"
)
HOST_HTML = r"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>LangBot</title></head>
<body style="margin:0">
<iframe id="page" title="MemVault/console" sandbox="allow-scripts allow-forms"
        style="display:block;width:100vw;height:100vh;border:0"></iframe>
<script>
const host = { theme: 'light', language: 'en-US' };
const frame = document.getElementById('page');
function sendContext() {
  frame.contentWindow.postMessage(
    { type: 'langbot:context', theme: host.theme, language: host.language }, '*');
}
window.setHost = (theme, language) => {
  host.theme = theme;
  host.language = language;
  sendContext();
};
window.addEventListener('message', async (event) => {
  const m = event.data;
  if (event.source !== frame.contentWindow || !m || m.type !== 'langbot:api') return;
  const resp = await fetch('/page-api', { method: 'POST', body: JSON.stringify(
    { endpoint: m.endpoint, method: m.method, body: m.body }) });
  const out = await resp.json();
  frame.contentWindow.postMessage({ type: 'langbot:api:response', requestId: m.requestId,
    data: out.data, error: out.error }, '*');
});
(async () => {
  const html = await (await fetch('PLUGIN_HTMLindex.html')).text();
  const sdk = location.origin + 'SDK_PATH';
  const sdkTag = /(<script\b[^>]*\bsrc\s*=\s*)(["'])\/api\/v1\/plugins\/_sdk\/page-sdk\.js\2/gi;
  const fixed = html.replace(sdkTag, `$1$2${sdk}$2`);
  frame.onload = sendContext;
  frame.src = URL.createObjectURL(new Blob([fixed], { type: 'text/html' }));
})();
</script>
</body></html>
""".replace("PLUGIN_HTML", PLUGIN_HTML).replace("SDK_PATH", SDK_PATH)
TYPES = {
    ".html": "text/html",
    ".js": "text/javascript",
    ".css": "text/css",
    ".json": "application/json",
}


def packaged_page(folder: Path) -> Path:
    """console/web/ as scripts/build_plugin.py puts it into the LangBot package."""
    import importlib.util
    import shutil

    spec = importlib.util.spec_from_file_location(
        "build_plugin", REPO / "scripts" / "build_plugin.py"
    )
    assert spec and spec.loader
    build_plugin = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build_plugin)
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "plugin" / "manifest.yaml", folder / "manifest.yaml")
    build_plugin.add_page_files(folder)
    return folder / build_plugin.PAGE_DIR


def langbot_sdk() -> Path:
    import langbot_plugin.assets

    return Path(langbot_plugin.assets.__file__).parent / "langbot-page-sdk.js"


def serve_langbot(context: object, console: Console, page_dir: Path) -> None:
    """Route the fake LangBot origin of a Playwright browser context."""
    sdk = langbot_sdk().read_bytes()

    def handle(route: object) -> None:
        request = route.request  # type: ignore[attr-defined]
        path = request.url[len(LANGBOT) :].split("?", 1)[0]
        cors = {"Access-Control-Allow-Origin": "*"}
        if path == "/host.html":
            headers = {"Content-Security-Policy": HOST_CSP}
            return route.fulfill(body=HOST_HTML, content_type="text/html", headers=headers)
        if path == SDK_PATH:
            return route.fulfill(body=sdk, content_type="text/javascript", headers=cors)
        if path == "/page-api":
            call = json.loads(request.post_data or "{}")
            try:
                answer = {"data": console.call(call["endpoint"], call.get("body") or {})}
            except urllib.error.HTTPError as exc:  # PageResponse.fail(msg)
                answer = {"error": json.loads(exc.read())["error"]}
            return route.fulfill(body=json.dumps(answer), content_type="application/json")
        for prefix in (PLUGIN_ASSETS, PLUGIN_HTML):
            if path.startswith(prefix):
                file = (page_dir / path[len(prefix) :]).resolve()
                if page_dir.resolve() in file.parents and file.is_file():
                    kind = TYPES.get(file.suffix, "application/octet-stream")
                    return route.fulfill(body=file.read_bytes(), content_type=kind, headers=cors)
        return route.fulfill(status=404, body="not found", headers=cors)

    context.route(f"{LANGBOT}/**", handle)  # type: ignore[attr-defined]
