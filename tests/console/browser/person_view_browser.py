"""Helpers of the browser tests that look at the console as a person does, at 1280 and 390 px,
in English and Chinese (test_health_panel_browser.py, test_layout_browser.py): not a test
file pytest collects by itself."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tests.console.browser.conftest_browser import BOT, require_chromium
from tests.helpers.browser import CHROMIUM, CHROMIUM_ARGS
from tests.helpers.paths import REPO

try:
    from playwright.sync_api import Browser, Page, expect, sync_playwright
except ImportError:  # `chromium()` fails every test, saying how to install it
    Browser = Page = expect = sync_playwright = None  # type: ignore[assignment,misc]

__all__ = ["Browser", "Page", "expect"]

WIDE = {"width": 1280, "height": 900}
NARROW = {"width": 390, "height": 844}
VIEWS = {"1280": WIDE, "390": NARROW}
LANGS = ("en_US", "zh_Hans")
# Every (width, language) a test shows itself in: its screenshots are named after them.
ALL_VIEWS = [pytest.param(w, lang, id=f"{w}-{lang}") for w in VIEWS for lang in LANGS]
CJK = re.compile(r"[\u4e00-\u9fff]")
# The page's own words in each of LANGS, to compare what a person sees against.
MESSAGES = {
    lang: json.loads((REPO / f"console/web/i18n/{lang}.json").read_text("utf-8")) for lang in LANGS
}


@contextmanager
def chromium() -> Iterator[Browser]:
    require_chromium()  # a missing browser or driver fails the tests (never skips them)
    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@contextmanager
def person_page(browser: Browser, url: str, width: str, lang: str) -> Iterator[Page]:
    """The console at `width` px in `lang`, as chosen in the page; fails on a JS error."""
    context = browser.new_context(viewport=VIEWS[width], color_scheme="light", locale="en-US")
    context.set_default_timeout(10_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(url)
        expect(page.get_by_test_id("scope-item").first).to_be_attached()
        page.get_by_test_id("lang-select").select_option(lang)
        # The page has switched (its <html lang> follows): en, zh-Hans, ja-JP...
        tag = {"en_US": "en", "zh_Hans": "zh-Hans"}.get(lang, lang.replace("_", "-"))
        expect(page.locator("html")).to_have_attribute("lang", tag)
        yield page
        assert not errors, f"JavaScript errors on the page: {errors}"
    finally:
        context.close()


def choose_chat(page: Page, session: str) -> None:
    """Pick a chat as a person would: on a narrow screen the list is behind "☰ Chats"."""
    toggle = page.get_by_test_id("sidebar-toggle")
    if toggle.is_visible():
        toggle.click()
    page.locator(f'[data-testid="scope-item"][data-session="{session}"]').click()
    expect(page.get_by_test_id("scope-title")).to_have_text(f"{BOT} / {session}")


def in_viewport(page: Page, testid: str) -> bool:
    """The element's whole box is inside the window as it is scrolled now."""
    box = page.get_by_test_id(testid).first.bounding_box()
    size = page.viewport_size
    assert box is not None and size is not None
    return (
        box["y"] >= 0
        and box["y"] + box["height"] <= size["height"]
        and box["x"] >= 0
        and box["x"] + box["width"] <= size["width"]
    )
