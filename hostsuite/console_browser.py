"""The Memory Console in LangBot's own web UI, in Debian's chromium driven by Playwright:
log in, open the page from the sidebar (LangBot shows it in a sandboxed iframe loaded from a
blob: URL and relays the page's `langbot:api` postMessages to /page-api), read what the page
shows, search, switch LangBot's language and theme. Screenshots go to test-artifacts/hostsuite/.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from typing import TYPE_CHECKING, Any

from hostsuite.console_page import ARTIFACTS, PAGE_ID, PAGE_LABEL, UI_NOISE, PageError
from hostsuite.framework import phase
from tests.helpers.browser import CHROMIUM, CHROMIUM_ARGS, browser_missing

if TYPE_CHECKING:
    from hostsuite.framework import SuiteContext
    from hostsuite.host import Host

BROWSER_CHECKS = (
    "LangBot's web UI lists the Memory Console and shows it in its sandboxed iframe",
    "the page in LangBot's UI shows chats A and B and A's memories (fetched via /page-api)",
    "a search typed into the page in LangBot's UI finds A's memory, never B's",
    "switching LangBot's language and theme reaches the page",
)


@phase("console in the browser", order=40)
def check_page_in_browser(suite: SuiteContext, host: Host, ids: dict[str, str]) -> None:
    """Log into LangBot's own web UI with chromium and use the page like a person would."""
    missing = browser_missing()
    if missing:
        for name in BROWSER_CHECKS:
            suite.check(name, False, missing)
        return
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    from playwright.sync_api import sync_playwright

    done: list[str] = []
    run: BrowserRun | None = None

    def failed(exc: Exception) -> None:
        if len(done) >= len(BROWSER_CHECKS):
            return
        name = BROWSER_CHECKS[len(done)]
        tail = run.console_tail() if run is not None else ""
        suite.check(name, False, f"{type(exc).__name__}: {str(exc)[:900]}{tail}")
        done.append(name)

    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            try:
                run = BrowserRun(suite, host, ids, browser)
                for name, step in zip(BROWSER_CHECKS, run.steps(), strict=True):
                    ok, detail = step()
                    suite.check(name, ok, detail)
                    done.append(name)
                    if not ok:
                        run.shot("langbot-ui-failure")
                        break
            except Exception as exc:  # noqa: BLE001 - this step's failure, with the console
                if run is not None:
                    run.shot("langbot-ui-failure")
                failed(exc)
            finally:
                browser.close()
    except Exception as exc:  # noqa: BLE001 - the browser did not start
        failed(exc)
    for name in BROWSER_CHECKS[len(done) :]:
        suite.check(name, False, "not reached: an earlier browser step failed")
    suite.facts["browser"] = run.facts if run is not None else {}


class BrowserRun:
    def __init__(self, suite: SuiteContext, host: Host, ids: dict[str, str], browser: Any) -> None:
        self.suite, self.host, self.ids = suite, host, ids
        self.sessions = suite.facts["sessions"]
        self.context = browser.new_context(viewport={"width": 1400, "height": 900})
        self.context.set_default_timeout(30_000)
        self.page = self.context.new_page()
        self.console: list[str] = []
        self.page_api: list[str] = []  # endpoints the UI relayed to /page-api for the page
        self.facts: dict[str, Any] = {"screenshots": []}
        self.page.on("console", self._on_console)
        self.page.on("request", self._on_request)

    def _on_console(self, message: Any) -> None:
        text = f"{message.type}: {message.text}"
        if message.type in ("error", "warning") and not any(n in text for n in UI_NOISE):
            self.console.append(text[:300])

    def _on_request(self, request: Any) -> None:
        if request.url.endswith(f"/api/v1/plugins/{self.suite.memvault_id}/page-api"):
            try:
                self.page_api.append(json.loads(request.post_data or "{}").get("endpoint", "?"))
            except ValueError:
                self.page_api.append("?")

    def console_tail(self) -> str:
        return f"; browser console: {self.console[-4:]}" if self.console else ""

    def shot(self, name: str) -> None:
        path = ARTIFACTS / f"{name}.png"
        try:
            self.page.screenshot(path=str(path))
            self.facts["screenshots"].append(str(path))
        except Exception:  # noqa: BLE001, S110 - a screenshot is a by-product
            pass

    def frame(self) -> Any:
        """The page's frame: the iframe LangBot made for it."""
        handle = self.page.locator("iframe[sandbox]").first.element_handle(timeout=30_000)
        frame = handle.content_frame() if handle else None
        if frame is None:
            raise PageError("LangBot's plugin page has no iframe")
        return frame

    def wait(self, what: str, check: Any, timeout: float = 30) -> Any:
        deadline = time.monotonic() + timeout
        last: Any = None
        while time.monotonic() < deadline:
            try:
                last = check()
                if last:
                    return last
            except Exception as exc:  # noqa: BLE001 - retried until the deadline
                last = exc
            self.page.wait_for_timeout(300)
        raise PageError(f"timed out after {timeout:.0f}s waiting for {what} (last: {last!r})")

    def steps(self) -> list[Any]:
        return [self.open_page, self.chat_a, self.search, self.language_and_theme]

    # -- steps -------------------------------------------------------------------------------

    def open_page(self) -> tuple[bool, str]:
        page, host = self.page, self.host
        # A person skips LangBot's first-run wizard once; the UI otherwise redirects to it.
        host.call("POST", "/api/v1/system/wizard/completed", json={"status": "skipped"})
        page.goto(f"{host.base}/login")
        page.locator("input[name=email]").fill(self._admin()["user"])
        page.locator("input[name=password]").fill(self._admin()["password"])
        page.get_by_role("button", name=re.compile("login with password", re.I)).click()
        page.wait_for_url(re.compile(r"/home"), timeout=30_000)
        # UI preferences only: the sidebar tour would cover the sidebar, the assistant panel
        # the page (both are per-browser settings of LangBot's UI).
        page.evaluate(
            "localStorage.setItem('langbot_sidebar_guide_v1', 'completed');"
            "localStorage.setItem('langbot-assistant-panel-open', 'false')"
        )
        page.reload()
        entry = page.get_by_text(PAGE_LABEL, exact=True).first
        entry.wait_for(state="visible", timeout=30_000)
        self._skip_tour()
        entry.click()
        page_key = f"{self.suite.memvault_id}/{PAGE_ID}"
        page.wait_for_url(re.compile(r"/home/plugin-pages\?id="), timeout=30_000)
        iframe = page.locator("iframe[sandbox]").first
        iframe.wait_for(state="attached", timeout=30_000)
        sandbox = iframe.get_attribute("sandbox") or ""
        src = iframe.get_attribute("src") or ""
        frame = self.frame()
        probe = """() => {
          const sheets = [...document.querySelectorAll('link[rel=stylesheet]')];
          return {base: document.baseURI, sheets: sheets.length,
                  sheetsLoaded: sheets.filter((l) => l.sheet !== null).length,
                  mv: typeof window.MV, sdk: typeof window.langbot};
        }"""

        def ready() -> str:
            state = frame.evaluate(probe)
            complete = state["sheets"] and state["sheetsLoaded"] == state["sheets"]
            return state["base"] if complete and state["mv"] == state["sdk"] == "object" else ""

        try:
            loaded = self.wait("the page's CSS and JS to load inside the iframe", ready, 20)
        except PageError as exc:
            state = frame.evaluate(probe)
            raise PageError(
                f"the page did not load its CSS/JS inside LangBot's iframe: base URI "
                f"{state['base'][:60]}, stylesheets loaded {state['sheetsLoaded']}/"
                f"{state['sheets']}, window.MV {state['mv']}, window.langbot {state['sdk']} "
                "(relative URLs cannot resolve against a blob: URL)"
            ) from exc
        self.facts.update(iframe_src=src[:80], sandbox=sandbox, base_uri=loaded)
        ok = (
            "allow-same-origin" not in sandbox
            and "allow-scripts" in sandbox
            and page_key in page.url.replace("%2F", "/")
            and bool(loaded)
        )
        return ok, f"iframe sandbox={sandbox!r} src={src[:45]}...; page base {loaded}"

    def chat_a(self) -> tuple[bool, str]:
        frame = self.frame()
        a, b = self.sessions["A"], self.sessions["B"]
        item_a = frame.locator(f'[data-testid=scope-item][data-session="{a}"]')
        item_a.wait_for(state="visible", timeout=30_000)
        has_b = frame.locator(f'[data-testid=scope-item][data-session="{b}"]').count() == 1
        self.shot("langbot-ui-console")
        item_a.click()
        listing = frame.locator("[data-testid=episode-list]")
        text = self.wait(
            "chat A's memories in the page", lambda: _has(listing.inner_text(), "17 April")
        )
        self.shot("langbot-ui-console-chat-a")
        relayed = sorted(set(self.page_api))
        ok = has_b and "9 May" not in text and {"/meta", "/scopes", "/episodes"} <= set(relayed)
        return ok, f"chat B listed: {has_b}; endpoints relayed by the UI: {relayed}"

    def search(self) -> tuple[bool, str]:
        frame = self.frame()
        before = len(self.page_api)
        frame.locator("[data-testid=search-input]").fill("Project Falcon launch")
        frame.locator("[data-testid=search-button]").click()
        self.wait("the page's /search call", lambda: "/search" in self.page_api[before:])
        listing = frame.locator("[data-testid=episode-list]")
        text = self.wait(
            "search results in the page",
            lambda: (
                _has(listing.inner_text(), "17 April")
                if frame.locator("[data-testid=episode-score]").count()
                else ""
            ),
        )
        self.shot("langbot-ui-console-search")
        ok = "9 May" not in text
        return ok, _squash(text)[:160]

    def language_and_theme(self) -> tuple[bool, str]:
        from scripts.build_plugin import PAGE_DIR

        page = self.page
        served = self.suite.work / "plugins" / "memvault" / PAGE_DIR / "i18n"
        zh_title = json.loads((served / "zh_Hans.json").read_text("utf-8"))["app_title"]
        # LangBot's own controls: the account menu's language select and theme button.
        src = page.locator("iframe[sandbox]").first.get_attribute("src")
        self._open_account_menu()
        page.get_by_role("menu").get_by_role("combobox").click()
        page.get_by_role("option", name="简体中文").click()
        title = self.wait(
            "the page's title in Chinese",
            lambda: _is(self.frame().locator("[data-i18n=app_title]").first.inner_text(), zh_title),
        )
        theme = ""
        for _ in range(4):  # the button cycles system -> light -> dark
            self._open_account_menu()
            page.get_by_role("menu").locator("button").last.click()
            page.wait_for_timeout(500)
            theme = page.evaluate("document.documentElement.className")
            if "dark" in theme.split():
                break
        frame_theme = self.wait(
            "the page's dark theme",
            lambda: _has(self.frame().evaluate("document.documentElement.className"), "dark"),
            15,
        )
        page.keyboard.press("Escape")
        self.shot("langbot-ui-console-zh-dark")
        # LangBot 4.11 reloads the iframe (a new blob:) on a language change; a theme change
        # only posts `langbot:context` to the running page.
        reloaded = page.locator("iframe[sandbox]").first.get_attribute("src") != src
        ok = "dark" in theme.split() and "dark" in frame_theme.split()
        return ok, (
            f"page title {title!r} (iframe reloaded by LangBot: {reloaded}); LangBot <html> "
            f"{theme!r}, page <html> {frame_theme!r}"
        )

    # -- helpers -----------------------------------------------------------------------------

    def _admin(self) -> dict[str, str]:
        from hostsuite.host import ADMIN

        return ADMIN

    def _skip_tour(self) -> None:
        tour = self.page.locator("[data-testid=sidebar-guide]")
        if tour.count():
            with contextlib.suppress(Exception):  # the tour may have gone by itself
                tour.get_by_role("button", name=re.compile("skip", re.I)).click(timeout=5_000)

    def _open_account_menu(self) -> None:
        if not self.page.get_by_role("menu").is_visible():
            self.page.get_by_text(self._admin()["user"], exact=True).last.click()
            self.page.get_by_role("menu").wait_for(state="visible", timeout=10_000)


def _has(text: str, want: str) -> str:
    return text if want in text else ""


def _is(text: str, want: str) -> str:
    return text if text.strip() == want else ""


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text)
