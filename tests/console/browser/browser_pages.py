"""What every Memory Console browser test module sets up the same way: the module's seeded
vault, `memvault console` on it, one chromium, and a fresh page that fails its test on a
JavaScript error. Not a test file pytest collects by itself."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.console.browser.conftest_browser import (
    LANGBOT,
    Console,
    Seeded,
    build_vault,
    packaged_page,
    running_console,
    serve_langbot,
)
from tests.console.browser.person_view_browser import WIDE, Browser, Page, expect


def console_fixtures(name: str, make: Callable[[Path], Seeded] = build_vault) -> tuple[Any, ...]:
    """The module fixtures `seeded` (`make` on a fresh folder named `name`), `console` and
    `browser`; a module takes them as `seeded, console, browser = console_fixtures(...)`
    (pytest finds fixtures by the module's names, so they are defined here once)."""

    @pytest.fixture(scope="module")
    def seeded(tmp_path_factory: pytest.TempPathFactory) -> Seeded:
        return make(tmp_path_factory.mktemp(name) / "vault")

    @pytest.fixture(scope="module")
    def console(seeded: Seeded) -> Iterator[Console]:
        with running_console(seeded) as server:
            yield server

    @pytest.fixture(scope="module")
    def browser(chromium_browser: Browser) -> Browser:
        return chromium_browser  # tests/console/conftest.py: one for the package

    return seeded, console, browser


def open_page(browser: Browser, url: str, viewport: dict[str, int] = WIDE) -> Page:
    """A fresh context (own sessionStorage / localStorage) on `url`; `page.js_errors` lists
    the page's uncaught errors."""
    context = browser.new_context(viewport=viewport, color_scheme="light", locale="en-US")
    context.set_default_timeout(10_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.js_errors = errors  # type: ignore[attr-defined]
    page.goto(url)
    return page


@contextmanager
def checked_page(
    browser: Browser, url: str, viewport: dict[str, int] = WIDE, *, loaded: bool = True
) -> Iterator[Page]:
    """`open_page`, once the chat list shows (`loaded`); closed afterwards, and the test
    fails if the page had a JavaScript error."""
    page = open_page(browser, url, viewport)
    if loaded:
        expect(page.get_by_test_id("scope-item").first).to_be_visible()
    yield page
    errors = page.js_errors  # type: ignore[attr-defined]
    page.context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


@contextmanager
def langbot_host(browser: Browser, console: Console, folder: Path) -> Iterator[Page]:
    """LangBot's host page (conftest_browser.HOST_HTML) showing the page packaged into
    `folder` in its sandboxed iframe (`page.frame_locator("#page")`); the test fails if the
    host page or the frame had a JavaScript error."""
    context = browser.new_context(viewport=WIDE)
    serve_langbot(context, console, packaged_page(folder))
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(f"{LANGBOT}/host.html")
        yield page
        assert not errors, f"JavaScript errors on the page: {errors}"
    finally:
        context.close()
