"""The console's Export, in a real browser over the real `memvault console`: when a file of
the chat cannot be read (a person's broken hand edit) the export still shows the rest, and a
warning above it names the file and says what to do, in the chosen language, at 1280 and
390 px; screenshots in test-artifacts/console/."""

from __future__ import annotations

import json

import pytest

from tests.console.browser.browser_pages import console_fixtures
from tests.console.browser.conftest_browser import CHAT, OTHER, screenshot
from tests.console.browser.person_view_browser import (
    ALL_VIEWS,
    choose_chat,
    expect,
    person_page,
)

seeded, console, browser = console_fixtures("console-export-unreadable")


@pytest.fixture(scope="module")
def broken(seeded) -> str:
    path = seeded.chat_dir() / "episodes" / "by-hand" / "broken.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("---\nid: [\n---\nhalf a memory\n", encoding="utf-8")
    return str(path.relative_to(seeded.root))


@pytest.mark.parametrize(("width", "lang"), ALL_VIEWS)
def test_export_warns_about_the_file_it_left_out(browser, console, broken, width, lang):
    with person_page(browser, console.url, width, lang) as page:
        choose_chat(page, CHAT)
        page.get_by_test_id("tab-transfer").click()
        page.get_by_test_id("export-button").click()
        exported = json.loads(page.get_by_test_id("export-raw-json").input_value())
        assert "Beijing" in json.dumps(exported, ensure_ascii=False)  # the rest is there
        assert [u["file"] for u in exported["unreadable"]] == [broken]
        warning = page.get_by_test_id("export-unreadable")
        expect(warning).to_be_visible()
        expect(warning).to_contain_text(f"{broken}:")
        if lang == "zh_Hans":
            expect(warning).to_contain_text("有 1 个文件无法读取，未包含在本次导出中")
        else:
            expect(warning).to_contain_text("1 file(s) could not be read and are NOT in this")
        screenshot(page, f"export-unreadable-{width}-{lang}")


def test_a_clean_export_shows_no_warning(browser, console):
    with person_page(browser, console.url, "1280", "en_US") as page:
        choose_chat(page, OTHER)
        page.get_by_test_id("tab-transfer").click()
        page.get_by_test_id("export-button").click()
        exported = json.loads(page.get_by_test_id("export-raw-json").input_value())
        assert exported["episodes"] and exported["unreadable"] == []
        expect(page.get_by_test_id("export-unreadable")).to_have_count(0)
