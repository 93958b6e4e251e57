"""The console's "new memory" form, the edit form's fields and the filter bar (issue 14,
item 2) in a real browser (Debian's chromium, pip's playwright) against the real
`memvault console` on a vault made with the real `memvault` commands."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.console.browser.browser_pages import checked_page, console_fixtures
from tests.console.browser.conftest_browser import (
    Console,
    Seeded,
    disk_text,
    eventually,
    screenshot,
)
from tests.console.browser.person_view_browser import Browser, Page, expect
from tests.console.browser.test_browser import card, select_chat

seeded, console, browser = console_fixtures("console-fields")


@pytest.fixture
def page(browser: Browser, console: Console) -> Iterator[Page]:
    with checked_page(browser, console.url) as page:
        yield page


def test_create_with_fields_then_filter_and_edit(page: Page, seeded: Seeded) -> None:
    select_chat(page)
    page.get_by_test_id("episode-new").click()
    form = page.get_by_test_id("episode-create-form")
    form.get_by_test_id("create-content").fill("Carol is allergic to peanuts")
    form.get_by_test_id("create-tags").fill("Health, food")
    form.get_by_test_id("field-category").select_option("fact")
    form.get_by_test_id("field-priority").select_option("critical")
    form.get_by_test_id("field-expires").fill("7d")
    form.get_by_test_id("field-confidence").fill("0.9")
    form.get_by_test_id("create-save").click()
    expect(page.get_by_test_id("toast")).to_contain_text("Saved new memory")
    made = card(page, "allergic to peanuts")
    expect(made.get_by_test_id("episode-priority")).to_have_attribute("data-priority", "critical")
    expect(made.get_by_test_id("episode-verified")).to_be_visible()  # a person typed it
    files = list((seeded.chat_dir() / "episodes").rglob("*.md"))
    (path,) = [p for p in files if "allergic to peanuts" in disk_text(p)]
    text = disk_text(path)
    for line in ("priority: critical", "category: fact", "confidence: 0.9", "source: console"):
        assert f"\n{line}\n" in text, text
    assert "\nexpires_at: " in text and "Health" in text and "food" in text

    # Filters: the tag in another letter case, then a priority nothing else has.
    page.get_by_test_id("filter-tag").fill("HEALTH")
    page.get_by_test_id("filter-tag").dispatch_event("change")
    expect(page.get_by_test_id("episode-card")).to_have_count(1)
    expect(card(page, "allergic to peanuts")).to_have_count(1)
    page.get_by_test_id("filter-tag").fill("")
    page.get_by_test_id("filter-tag").dispatch_event("change")
    page.get_by_test_id("filter-expiring").select_option("7d")
    expect(page.get_by_test_id("episode-card")).to_have_count(1)
    page.get_by_test_id("search-input").fill("peanuts")
    page.get_by_test_id("search-button").click()
    expect(page.get_by_test_id("episode-card")).to_have_count(1)
    page.get_by_test_id("filter-expiring").select_option("")
    page.get_by_test_id("filter-priority").select_option("high")
    expect(page.get_by_test_id("episodes-empty")).to_be_visible()
    page.get_by_test_id("filter-priority").select_option("")
    page.get_by_test_id("search-clear").click()
    screenshot(page, "fields-filtered")

    # Edit: lower the priority and clear the expiry; the rest of the file is kept.
    made = card(page, "allergic to peanuts")
    made.get_by_test_id("episode-edit").click()
    made.get_by_test_id("field-priority").select_option("high")
    made.get_by_test_id("field-expires").fill("")
    made.get_by_test_id("episode-edit-save").click()
    expect(page.get_by_test_id("toast")).to_contain_text("Saved")
    eventually(lambda: "priority: high" in disk_text(path), "priority: high on disk")
    text = disk_text(path)
    assert "expires_at: 20" not in text and "category: fact" in text and "confidence: 0.9" in text

    # A bad value is refused with the server's message; nothing is written.
    page.get_by_test_id("episode-new").click()
    form = page.get_by_test_id("episode-create-form")
    form.get_by_test_id("create-content").fill("never saved")
    form.get_by_test_id("field-expires").fill("next week")
    form.get_by_test_id("create-save").click()
    expect(page.get_by_test_id("error-message")).to_contain_text("expires_at must be")
    assert not [p for p in files if "never saved" in disk_text(p)]
