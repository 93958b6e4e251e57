"""The Memory Console (MemVault's Page component) on the real LangBot host, over HTTP.

- the host serves the page's files from the plugin (`/assets/...`, with LangBot's CSP on the
  HTML) and forwards `POST /page-api` to the plugin's `handle_api` (user token);
- the installed .lbpkg: the same page served by the package the host installed.
The same page in LangBot's web UI in a browser: hostsuite/console_browser.py.

Called by hostsuite/suite.py after the chats have created their scopes; every check is one
line of the suite's table.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hostsuite.framework import phase
from hostsuite.host import SuiteError, wait_for

if TYPE_CHECKING:
    from hostsuite.framework import SuiteContext
    from hostsuite.host import Host

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "test-artifacts" / "hostsuite"
PAGE_ID = "console"
PAGE_LABEL = "Memory Console"  # the Page component's en_US label (sidebar entry)
SEARCH = "When does Project Falcon launch?"
TOOL_MEMORY = "blue door code is 4711"
# What LangBot's web UI logs by itself on a machine without internet (not the page's doing).
UI_NOISE = ("space.langbot.app", "Failed to fetch releases", "ERR_NAME_NOT_RESOLVED", "401")


class PageError(SuiteError):
    pass


# -- HTTP ------------------------------------------------------------------------------------


def page_api(
    suite: SuiteContext, host: Host, endpoint: str, body: dict[str, Any]
) -> tuple[int, Any]:
    """POST /page-api as LangBot's web UI does: (HTTP status, the host's JSON answer)."""
    response = host.http.post(
        f"/api/v1/plugins/{suite.memvault_id}/page-api",
        headers={"Authorization": f"Bearer {host.token}", "X-Workspace-Id": host.workspace},
        json={"page_id": PAGE_ID, "endpoint": endpoint, "method": "POST", "body": body},
    )
    try:
        return response.status_code, response.json()
    except ValueError:
        return response.status_code, {"code": None, "msg": response.text[:300]}


def page_data(suite: SuiteContext, host: Host, endpoint: str, body: dict[str, Any]) -> Any:
    status, answer = page_api(suite, host, endpoint, body)
    if status != 200 or answer.get("code") != 0:
        raise PageError(f"page-api {endpoint} -> {status} {json.dumps(answer)[:400]}")
    return answer.get("data")


def wait_page_ready(suite: SuiteContext, host: Host) -> dict[str, Any]:
    """/meta once MemVault has started (its status is "initialized" before its Page is)."""

    def meta() -> Any:
        status, answer = page_api(suite, host, "/meta", {})
        return answer.get("data") if status == 200 and answer.get("code") == 0 else None

    return wait_for("MemVault's page to answer /meta", meta, 180, every=1)


def asset_url(suite: SuiteContext, rel: str) -> str:
    from scripts.build_plugin import PAGE_DIR

    return f"/api/v1/plugins/{suite.memvault_id}/assets/{PAGE_DIR}/{rel}"


def _contents(items: list[dict[str, Any]]) -> str:
    return " | ".join(str(i.get("content", "")) for i in items)


def _guarded(suite: SuiteContext, name: str, run: Any) -> None:
    """One check: `run()` returns (ok, detail); an error is that check's FAIL, not the suite's."""
    try:
        ok, detail = run()
    except Exception as exc:  # noqa: BLE001 - reported as this check's failure
        ok, detail = False, f"{type(exc).__name__}: {exc}"[:1500]
    suite.check(name, ok, detail)


@phase("console over HTTP", order=30)
def check_page_http(suite: SuiteContext, host: Host, ids: dict[str, str]) -> None:
    """The page's files and its /page-api endpoints, through the host's HTTP API."""
    from scripts.build_plugin import PAGE_DIR

    served_dir = suite.work / "plugins" / "memvault" / PAGE_DIR  # what `lbp run` serves
    sessions = suite.facts["sessions"]
    scope_a = {"bot": ids["bot"], "session": sessions["A"]}
    scope_b = {"bot": ids["bot"], "session": sessions["B"]}

    def html() -> tuple[bool, str]:
        response = host.http.get(asset_url(suite, "index.html"))
        csp = response.headers.get("content-security-policy", "")
        text = response.text
        ok = (
            response.status_code == 200
            and response.headers.get("content-type", "").startswith("text/html")
            and f"default-src {host.base}" in csp
            and "frame-src 'none'" in csp
            and "/api/v1/plugins/_sdk/page-sdk.js" in text
            and 'data-testid="scope-list"' in text
            and response.content == (served_dir / "index.html").read_bytes()
        )
        return ok, (
            f"{response.status_code} {response.headers.get('content-type')}; CSP: {csp[:120]}..."
        )

    _guarded(suite, "the host serves the page's HTML (text/html with LangBot's CSP)", html)

    def files() -> tuple[bool, str]:
        index = (served_dir / "index.html").read_text("utf-8")
        referenced = sorted(set(re.findall(r'(?:src|href)="\./([^"]+)"', index)))
        wanted = sorted(set(referenced) | {"i18n/en_US.json", "i18n/zh_Hans.json"})
        bad: list[str] = []
        for rel in wanted:
            response = host.http.get(asset_url(suite, rel))
            kind = response.headers.get("content-type", "")
            expect = {"js": "javascript", "css": "text/css", "json": "json"}[rel.rsplit(".", 1)[1]]
            if (
                response.status_code != 200
                or expect not in kind
                or response.content != (served_dir / rel).read_bytes()
            ):
                bad.append(f"{rel}: {response.status_code} {kind}")
            if rel.endswith(".json"):
                json.loads(response.content)
        sdk = host.http.get("/api/v1/plugins/_sdk/page-sdk.js")
        if sdk.status_code != 200 or "langbot:api" not in sdk.text:
            bad.append(f"page-sdk.js: {sdk.status_code}")
        detail = f"{len(wanted)} files ({', '.join(wanted)}) + LangBot's page-sdk.js"
        return not bad and bool(referenced), "; ".join(bad) or detail

    _guarded(suite, "the host serves the page's JS, CSS and i18n files and its page SDK", files)

    def meta() -> tuple[bool, str]:
        data = page_data(suite, host, "/meta", {})
        ok = data.get("host") == "langbot" and data.get("vault") == str(suite.vault_root)
        return ok, json.dumps({k: data.get(k) for k in ("host", "vault", "isolation", "git")})

    _guarded(suite, 'page-api /meta answers host "langbot" (the suite\'s vault)', meta)

    folders: dict[str, str] = {}

    def scopes() -> tuple[bool, str]:
        data = page_data(suite, host, "/scopes", {})
        bot = next((b for b in data.get("bots", []) if b.get("bot") == ids["bot"]), None)
        chats = {c["session"]: c for c in (bot or {}).get("chats", [])}
        for key, session in sessions.items():
            if session in chats:
                folders[key] = chats[session]["folder"]
        ok = sessions["A"] in chats and sessions["B"] in chats
        shown = {s: c.get("episodes") for s, c in chats.items()}
        return ok, f"bot {ids['bot'][:8]}...: chats (episode files) {shown}"

    _guarded(suite, "page-api /scopes lists the chats A and B the suite's messages made", scopes)

    def search(scope: dict[str, Any], own: str, other: tuple[str, ...], key: str) -> Any:
        def run() -> tuple[bool, str]:
            items = page_data(
                suite, host, "/search", {"scope": scope, "query": SEARCH, "top_k": 20}
            )["items"]
            text = _contents(items)
            folder = folders.get(key, "?")
            outside = [
                i["path"] for i in items if not str(i.get("path", "")).startswith(folder + "/")
            ]
            ok = own in text and not any(o in text for o in other) and not outside
            return ok, f"{len(items)} hits, outside {folder}: {outside[:2]}; {text[:160]}"

        return run

    _guarded(
        suite,
        "page-api /search in chat A finds A's memory, never B's",
        search(scope_a, "17 April", ("9 May",), "A"),
    )
    _guarded(
        suite,
        "page-api /search in chat B finds B's memory, never A's",
        search(scope_b, "9 May", ("17 April", "3 March"), "B"),
    )

    def bad_scope() -> tuple[bool, str]:
        status, answer = page_api(
            suite,
            host,
            "/search",
            {"scope": {"bot": ids["bot"], "session": ".."}, "query": SEARCH},
        )
        message = str(answer.get("msg") or "")
        ok = status == 400 and answer.get("code") != 0 and "'..'" in message
        return ok, f"{status} {message[:160]}"

    _guarded(suite, "page-api refuses a bad scope (session '..') with the message", bad_scope)

    edit: dict[str, Any] = {}

    def archive() -> tuple[bool, str]:
        items = page_data(
            suite,
            host,
            "/episodes",
            {"scope": scope_a, "status": "active", "page": 1, "page_size": 100},
        )["items"]
        item = next((i for i in items if TOOL_MEMORY in i.get("content", "")), None) or next(
            (i for i in items if "Falcon" not in i.get("content", "")), None
        )
        if item is None:
            return False, f"no episode to archive in chat A besides the Falcon one: {len(items)}"
        path = suite.vault_root / item["path"]
        before = path.read_bytes()
        edit.update(item=item, path=path, before=before)
        sha_ok = hashlib.sha256(before).hexdigest() == item["sha256"]
        done = page_data(
            suite,
            host,
            "/episode/archive",
            {"scope": scope_a, "id": item["id"], "expected_sha256": item["sha256"]},
        )
        after = path.read_bytes()
        edit["after"] = after
        ok = (
            sha_ok
            and done.get("status") == "archived"
            and after != before
            and re.search(rb"(?m)^status:\s*archived\s*$", after) is not None
            and done.get("sha256") == hashlib.sha256(after).hexdigest()
        )
        return ok, (
            f"{item['path']}: sha256 shown = file's: {sha_ok}; answer status "
            f"{done.get('status')}; on disk 'status: archived': {b'archived' in after}"
        )

    _guarded(suite, "page-api /episode/archive (expected_sha256) changes the file on disk", archive)

    def stale() -> tuple[bool, str]:
        if "after" not in edit:
            return False, "the archive check did not run"
        item, path = edit["item"], edit["path"]
        status, answer = page_api(
            suite,
            host,
            "/episode/restore",
            {"scope": scope_a, "id": item["id"], "expected_sha256": item["sha256"]},
        )
        unchanged = path.read_bytes() == edit["after"]
        message = str(answer.get("msg") or "")
        ok = status == 400 and answer.get("code") != 0 and unchanged and "changed" in message
        # Put it back (with the sha256 of what is on disk now) so later checks see chat A as
        # the chats left it.
        page_data(
            suite,
            host,
            "/episode/restore",
            {
                "scope": scope_a,
                "id": item["id"],
                "expected_sha256": hashlib.sha256(edit["after"]).hexdigest(),
            },
        )
        return ok, f"{status} {message[:160]}; file unchanged: {unchanged}"

    _guarded(suite, "page-api refuses a stale expected_sha256 (file left as it was)", stale)


# -- the installed package ---------------------------------------------------------------------


def check_installed_page(suite: SuiteContext, host: Host, ids: dict[str, str], want: str) -> None:
    """After the .lbpkg replaced the debug copy: its page asset and one page-api call that
    finds `want` (a memory of chat A in the installed plugin's vault)."""

    def run() -> tuple[bool, str]:
        response = host.http.get(asset_url(suite, "index.html"))
        asset_ok = (
            response.status_code == 200
            and response.headers.get("content-type", "").startswith("text/html")
            and "content-security-policy" in response.headers
            and "page-sdk.js" in response.text
        )
        script = host.http.get(asset_url(suite, "app.js"))
        scope = {"bot": ids["bot"], "session": suite.facts["sessions"]["A"]}
        items = page_data(suite, host, "/search", {"scope": scope, "query": want})["items"]
        text = _contents(items)
        ok = asset_ok and script.status_code == 200 and want in text
        return ok, (
            f"index.html {response.status_code}, app.js {script.status_code}; "
            f"/search in chat A: {len(items)} hits {text[:100]}"
        )

    _guarded(suite, "the installed .lbpkg serves the page (asset + page-api /search)", run)
