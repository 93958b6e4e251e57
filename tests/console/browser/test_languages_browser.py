"""The Memory Console in LangBot's five other languages (zh_Hant, ja_JP, vi_VN, th_TH,
es_ES), in a real browser over the real `memvault console`: chosen in the page, taken from
the browser's language, and taken from LangBot's host language inside its sandboxed iframe
(the packaged page under LangBot's own page SDK). Screenshots in test-artifacts/console/."""

from __future__ import annotations

import json

import pytest

from tests.console.browser.browser_pages import console_fixtures
from tests.console.browser.conftest_browser import (
    BOT,
    CHAT,
    LANGBOT,
    packaged_page,
    screenshot,
    serve_langbot,
)
from tests.console.browser.person_view_browser import WIDE, Page, expect
from tests.helpers.paths import REPO

WEB = REPO / "console" / "web"
NEW = ("zh_Hant", "ja_JP", "vi_VN", "th_TH", "es_ES")
MESSAGES = {
    lang: json.loads((WEB / "i18n" / f"{lang}.json").read_text("utf-8"))
    for lang in ("en_US", "zh_Hans", *NEW)
}
# What LangBot's web UI and browsers send (LangBot: 'ja-JP'; a Taiwanese browser: 'zh-TW').
TAGS = {"zh_Hant": "zh-TW", "ja_JP": "ja-JP", "vi_VN": "vi", "th_TH": "th-TH", "es_ES": "es-MX"}


seeded, console, browser = console_fixtures("console-languages")


def reads_in(page: Page, lang: str) -> None:
    """The tabs, the summary line and the page's language are `lang`'s, not English."""
    m = MESSAGES[lang]
    for tab in ("episodes", "profiles", "health"):
        expect(page.get_by_test_id(f"tab-{tab}")).to_contain_text(m[f"tab_{tab}"])
        assert m[f"tab_{tab}"] != MESSAGES["en_US"][f"tab_{tab}"]
    expect(page.locator("html")).to_have_attribute("lang", lang.replace("_", "-"))
    summary = page.get_by_test_id("episode-summary")  # "{total} memories ({status})"
    expect(summary).to_contain_text(m["status_active"])
    expect(summary).not_to_contain_text("memories")
    assert page.title() == m["page_title"]


def choose(page: Page) -> None:
    page.locator(f'[data-testid="scope-item"][data-session="{CHAT}"]').click()
    expect(page.get_by_test_id("scope-title")).to_have_text(f"{BOT} / {CHAT}")


@pytest.mark.parametrize("lang", NEW)
def test_chosen_in_the_page(browser, console, lang):
    context = browser.new_context(viewport=WIDE, locale="en-US")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(console.url)
        choose(page)
        page.get_by_test_id("lang-select").select_option(lang)
        reads_in(page, lang)
        screenshot(page, f"language-{lang}")
        # kept for the next visit (the person's choice wins over the browser's language)
        page.reload()
        choose(page)
        reads_in(page, lang)
        expect(page.get_by_test_id("lang-select")).to_have_value(lang)
    finally:
        context.close()
    assert errors == []


@pytest.mark.parametrize("lang", NEW)
def test_taken_from_the_browsers_language(browser, console, lang):
    context = browser.new_context(viewport=WIDE, locale=TAGS[lang])
    page = context.new_page()
    try:
        page.goto(console.url)
        choose(page)
        reads_in(page, lang)
    finally:
        context.close()


def test_taken_from_langbots_language_inside_its_iframe(browser, console, tmp_path):
    page_dir = packaged_page(tmp_path / "plugin")
    context = browser.new_context(viewport=WIDE)
    serve_langbot(context, console, page_dir)
    page = context.new_page()
    try:
        page.goto(f"{LANGBOT}/host.html")
        frame = page.frame_locator("#page")
        frame.locator(f'[data-testid="scope-item"][data-session="{CHAT}"]').click()
        for lang in NEW:  # as LangBot's language menu switches them
            page.evaluate(f"setHost('light', '{lang.replace('_', '-')}')")
            tab = frame.get_by_test_id("tab-episodes")
            expect(tab).to_have_text(MESSAGES[lang]["tab_episodes"])
            expect(frame.locator("html")).to_have_attribute("lang", lang.replace("_", "-"))
        screenshot(page, "langbot-host-es_ES")
    finally:
        context.close()
