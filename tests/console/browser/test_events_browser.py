"""The console's Key events panel in a real browser (Debian's chromium) over the real
`memvault console`: each person of the chat's bot, their events with the history, closing
one with a resolution (on disk, audited), in English and Chinese, and event text shown as
text, never markup. Screenshots go to test-artifacts/console/."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.console.browser.browser_pages import checked_page, console_fixtures
from tests.console.browser.conftest_browser import (
    BOT,
    CHAT,
    Console,
    Seeded,
    build_vault,
    disk_text,
    eventually,
    screenshot,
)
from tests.console.browser.person_view_browser import Browser, Page, expect
from vault.events import Actor, open_event, parse_event_types, update_event
from vault.files import audit
from vault.layout.layout import Layout

TYPES = parse_event_types(["appointment: a booked visit", "complaint: unhappy"])
XSS = 'Soup <img src=x onerror="window.__xss=1"> was cold'


def seed(root: Path) -> Seeded:
    """The browser suite's vault plus three key events (one updated from a private chat)."""
    from vault.writes.operations import Vault

    seeded = build_vault(root)
    vault = Vault(seeded.root, git=True)
    alice = Actor(BOT, "u42", "Alice", CHAT)
    dentist = open_event(vault, alice, "appointment", "Dentist on Tuesday at 3pm", TYPES)
    update_event(vault, Actor(BOT, "u42", "Alice", "person_u42"), dentist.event.id, "Moved to Wed")
    seeded.ids["dentist"] = dentist.event.id
    seeded.ids["dentist_path"] = dentist.rel
    seeded.ids["bike"] = open_event(
        vault, alice, "complaint", "Bike repair is late", TYPES
    ).event.id
    seeded.ids["soup"] = open_event(
        vault, Actor(BOT, "u7", "Bob", CHAT), "complaint", XSS, TYPES
    ).event.id
    return seeded


seeded, console, browser = console_fixtures("console-events", seed)


@pytest.fixture
def page(browser: Browser, console: Console) -> Iterator[Page]:
    with checked_page(browser, console.url, loaded=False) as page:
        yield page


def open_events(page: Page, lang: str = "en_US") -> None:
    page.locator(f'[data-testid="scope-item"][data-session="{CHAT}"]').click()
    expect(page.get_by_test_id("scope-title")).to_have_text(f"{BOT} / {CHAT}")
    page.get_by_test_id("lang-select").select_option(lang)
    page.get_by_test_id("tab-events").click()
    expect(page.get_by_test_id("event-card").first).to_be_visible()


def card(page: Page, seeded: Seeded, name: str):
    return page.locator(f'[data-testid="event-card"][data-id="{seeded.ids[name]}"]')


def test_a_persons_events_and_closing_one(page, seeded, console):
    open_events(page)
    people = page.get_by_test_id("events-person-option")
    expect(people).to_have_count(2)
    expect(people.first).to_have_text("u42 (2 open, 0 closed)")
    dentist = card(page, seeded, "dentist")
    expect(dentist.get_by_test_id("event-summary")).to_have_text("Dentist on Tuesday at 3pm")
    expect(dentist.get_by_test_id("event-type")).to_have_text("appointment")
    dentist.locator("details summary").click()
    expect(dentist.get_by_test_id("event-history-entry")).to_have_count(2)
    expect(dentist.get_by_test_id("event-history-entry").nth(1)).to_contain_text("Moved to Wed")
    expect(card(page, seeded, "soup")).to_have_count(0)  # Bob's, not Alice's
    screenshot(page, "events-en")
    dentist.get_by_test_id("event-resolution-input").fill("No cavities")
    dentist.get_by_test_id("event-close").click()
    expect(page.get_by_test_id("toast")).to_contain_text(f"Closed {seeded.ids['dentist']}")
    path = seeded.root / seeded.ids["dentist_path"]
    eventually(lambda: "status: closed" in disk_text(path), "the event file says closed")
    assert "resolution: No cavities" in disk_text(path)
    log = Layout(seeded.root).person_audit_path(BOT, "u42")
    assert audit.read(log)[0][-1].operation == "close_event"
    expect(card(page, seeded, "dentist")).to_have_count(0)  # the open filter hides it now
    page.get_by_test_id("events-status-filter").select_option("closed")
    expect(card(page, seeded, "dentist").get_by_test_id("event-resolution")).to_contain_text(
        "No cavities"
    )


def test_chinese_labels_and_event_text_stays_text(page, seeded):
    open_events(page, "zh_Hans")
    expect(page.get_by_test_id("tab-events")).to_have_text("关键事件")
    page.get_by_test_id("events-person").select_option("u7")
    soup = card(page, seeded, "soup")
    expect(soup.get_by_test_id("event-summary")).to_have_text(XSS)
    expect(soup.get_by_test_id("event-status")).to_have_text("未结")
    assert page.evaluate("window.__xss") is None
    assert soup.locator("img").count() == 0
    screenshot(page, "events-zh")


def test_linking_a_sender_to_a_person_and_unlinking_it(page, seeded):
    """The People section under the events: link two sender ids to one person (the file on
    disk says so), a third id of another person is refused naming it, unlink one."""
    open_events(page)
    section = page.get_by_test_id("persons")
    expect(section.get_by_test_id("persons-empty")).to_be_visible()

    def link(sender: str, person: str) -> None:
        section.get_by_test_id("person-link-sender").fill(sender)
        section.get_by_test_id("person-link-person").fill(person)
        section.get_by_test_id("person-link").click()

    link("u42", "alice")
    expect(page.get_by_test_id("toast")).to_contain_text("Linked u42 to alice")
    link("777000111", "alice")
    alice = section.locator('[data-testid="person-card"][data-id="alice"]')
    expect(alice.get_by_test_id("person-sender")).to_have_count(2)
    path = seeded.root / "bots" / BOT / "persons" / "alice" / "person.yaml"
    eventually(lambda: "777000111" in disk_text(path), "the person file lists the id")
    link("u42", "bob")
    expect(page.get_by_test_id("error-banner")).to_contain_text("already linked to person 'alice'")
    screenshot(page, "persons-en")
    alice.locator('[data-testid="person-sender"][data-sender="u42"]').get_by_test_id(
        "person-unlink"
    ).click()
    expect(page.get_by_test_id("toast")).to_contain_text("Unlinked u42")
    expect(alice.get_by_test_id("person-sender")).to_have_count(1)
    eventually(lambda: "u42" not in disk_text(path), "the person file no longer lists u42")
