"""The Memory Console in a real browser (Debian's chromium driven by pip's playwright) against
the real `memvault console` on a vault made with the real `memvault` commands.

One server and one browser for the module; every test gets a fresh browser context (own
sessionStorage / localStorage). Screenshots go to test-artifacts/console/.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.console.browser.browser_pages import (
    checked_page,
    console_fixtures,
    langbot_host,
    open_page,
)
from tests.console.browser.conftest_browser import (
    BOT,
    CHAT,
    OTHER,
    Console,
    Seeded,
    disk_text,
    eventually,
    screenshot,
)
from tests.console.browser.person_view_browser import NARROW, WIDE, Browser, Page, expect
from tests.helpers.paths import REPO

# Delays the answers of /episodes for one chat by 1.5 s (a slow server, seen from the page).
SLOW_FETCH = """
const realFetch = window.fetch;
window.fetch = (url, init) => {
  const body = (init && init.body) || '';
  const slow = body.includes('"endpoint":"/episodes"') && body.includes('SCOPE');
  return realFetch(url, init).then((resp) =>
    slow ? new Promise((ok) => setTimeout(() => ok(resp), 1500)) : resp);
};
"""


seeded, console, browser = console_fixtures("console-browser")


@pytest.fixture
def page(browser: Browser, console: Console) -> Iterator[Page]:  # browser first: fail fast
    """The console at 1280 px, started from the printed URL (token in the fragment)."""
    with checked_page(browser, console.url) as page:
        yield page


def select_chat(page: Page, session: str = CHAT) -> None:
    page.locator(f'[data-testid="scope-item"][data-session="{session}"]').click()
    expect(page.get_by_test_id("scope-title")).to_have_text(f"{BOT} / {session}")


def card(page: Page, text: str):  # noqa: ANN201 - a playwright Locator
    return page.get_by_test_id("episode-card").filter(has_text=text)


# ---------------------------------------------------------------------------- done-when


def test_select_scope_and_search_shows_explain(page: Page) -> None:
    expect(page).not_to_have_url(re.compile("token="))  # the token left the address bar
    select_chat(page)
    expect(page.get_by_test_id("scope-item").filter(has_text=CHAT)).to_have_attribute(
        "aria-current", "true"
    )
    expect(card(page, "Beijing")).to_have_count(1)
    expect(page.get_by_test_id("panel-episodes")).not_to_contain_text("launch code")

    page.get_by_test_id("search-input").fill("When is Alice going to Beijing?")
    page.get_by_test_id("search-button").click()
    first = page.get_by_test_id("episode-card").first
    expect(first).to_contain_text("Alice is going to Beijing")
    expect(first.get_by_test_id("episode-score")).to_have_text(re.compile(r"^\d+(\.\d+)?$"))
    expect(first.get_by_test_id("explain-summary")).to_contain_text("text #1")
    first.get_by_test_id("explain-toggle").click()
    table = first.get_by_test_id("explain-table")
    expect(table).to_be_visible()
    for key in ("sources.text.contribution", "sources.vector.contribution", "recency", "score"):
        expect(table.locator(f'tr[data-key="{key}"]')).to_have_count(1)
    expect(page.get_by_test_id("panel-episodes")).not_to_contain_text("launch code")
    screenshot(page, "search-explain")


def test_archive_then_restore(page: Page, seeded: Seeded) -> None:
    select_chat(page)
    standup = card(page, "team standup")
    standup.get_by_test_id("episode-archive").click()
    expect(standup).to_have_attribute("data-status", "archived")
    expect(page.get_by_test_id("toast")).to_contain_text("Archived")
    path = seeded.episode_file("standup")
    eventually(lambda: "status: archived" in disk_text(path), "status: archived on disk")
    screenshot(page, "archived")

    standup.get_by_test_id("episode-restore").click()
    expect(standup).to_have_attribute("data-status", "active")
    eventually(lambda: "status: active" in disk_text(path), "status: active on disk")

    # The archived filter no longer lists it; the page never reloaded for any of this.
    page.get_by_test_id("episode-status-filter").select_option("archived")
    expect(page.get_by_test_id("episodes-empty")).to_be_visible()


def test_edit_profile_field_writes_the_yaml(page: Page, seeded: Seeded) -> None:
    select_chat(page)
    page.get_by_test_id("tab-profiles").click()
    alice = page.locator('[data-testid="profile-card"][data-speaker="u42"]')
    yaml_path = seeded.chat_dir() / "speakers" / "u42.yaml"
    expect(alice.get_by_test_id("profile-path")).to_have_text(
        f"bots/{BOT}/sessions/{CHAT}/speakers/u42.yaml"
    )
    alice.get_by_test_id("profile-name-input").fill("Alice Liddell")
    alice.get_by_test_id("profile-name-save").click()
    eventually(lambda: "name: Alice Liddell" in disk_text(yaml_path), "the new name in u42.yaml")
    expect(alice.locator("h3")).to_contain_text("Alice Liddell")  # re-rendered from the answer
    expect(alice.get_by_test_id("profile-name-input")).to_have_value("Alice Liddell")

    alice.get_by_test_id("profile-traits-input").fill("likes kites")
    alice.get_by_test_id("profile-traits-input").press("Enter")
    expect(alice.get_by_test_id("profile-traits")).to_contain_text("likes kites")
    assert "likes kites" in yaml_path.read_text()
    assert "coffee: oat flat white" in yaml_path.read_text()  # the rest of the file is kept
    screenshot(page, "profile-edited")


def test_profile_conflict_is_told_and_reloaded(page: Page, seeded: Seeded) -> None:
    select_chat(page)
    page.get_by_test_id("tab-profiles").click()
    session = page.locator('[data-testid="profile-card"][data-speaker=""]')
    expect(session.get_by_test_id("profile-traits")).to_contain_text("friendly chat")
    path = seeded.chat_dir() / "profile.yaml"
    path.write_text(path.read_text().replace("friendly chat", "very friendly chat"))

    session.get_by_test_id("profile-name-input").fill("Project chat")
    session.get_by_test_id("profile-name-save").click()
    expect(page.get_by_test_id("error-banner")).to_be_visible()
    expect(page.get_by_test_id("error-message")).to_contain_text("reload")
    expect(session.get_by_test_id("profile-traits")).to_contain_text("very friendly chat")
    assert "Project chat" not in path.read_text()  # the hand edit was not overwritten


def test_hand_edit_appears_after_refresh_without_reload(page: Page, seeded: Seeded) -> None:
    select_chat(page)
    expect(card(page, "oat flat white coffee")).to_have_count(1)
    page.evaluate("window.__sameDocument = true")

    coffee = seeded.episode_file("coffee")
    coffee.write_text(coffee.read_text().replace("oat flat white coffee", "jasmine green tea"))
    by_hand = seeded.chat_dir() / "episodes" / "by-hand" / "fern.md"
    by_hand.parent.mkdir(parents=True)
    by_hand.write_text("The office plant is called Fern.\n")

    page.get_by_test_id("refresh").click()
    expect(card(page, "The office plant is called Fern")).to_have_count(1)
    expect(card(page, "jasmine green tea")).to_have_count(1)
    expect(card(page, "oat flat white coffee")).to_have_count(0)
    assert page.evaluate("window.__sameDocument") is True
    screenshot(page, "hand-edit")


def test_language_and_theme_switch(page: Page) -> None:
    select_chat(page)
    tab = page.get_by_test_id("tab-episodes")
    expect(tab).to_have_text("Episodes")
    light_bg = page.evaluate("getComputedStyle(document.body).backgroundColor")

    page.get_by_test_id("lang-select").select_option("zh_Hans")
    expect(tab).to_have_text("记忆")
    expect(page.get_by_test_id("tab-profiles")).to_have_text("画像")
    expect(page.get_by_test_id("episode-summary")).to_contain_text("条记忆")
    expect(page.locator("html")).to_have_attribute("lang", "zh-Hans")

    page.get_by_test_id("theme-toggle").click()
    expect(page.locator("html")).to_have_class(re.compile(r"\bdark\b"))
    dark_bg = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert dark_bg != light_bg
    assert dark_bg == "rgb(10, 10, 10)"  # LangBot's --langbot-bg for dark
    screenshot(page, "zh-dark")

    page.reload()  # the choice is remembered by the standalone host
    expect(page.get_by_test_id("tab-episodes")).to_have_text("记忆")
    expect(page.locator("html")).to_have_class(re.compile(r"\bdark\b"))


# ---------------------------------------------------------------------------- the rest


def test_wrong_or_missing_token_shows_the_server_error(browser: Browser, console: Console) -> None:
    for url, name in ((f"{console.base}#token=not-the-token", "wrong-token"), (console.base, "")):
        page = open_page(browser, url)
        try:
            expect(page.get_by_test_id("error-banner")).to_be_visible()
            expect(page.get_by_test_id("error-message")).to_contain_text("token")
            expect(page.get_by_test_id("scope-item")).to_have_count(0)
            if name:
                screenshot(page, name)
        finally:
            page.context.close()


def test_narrow_screen_keeps_scopes_reachable(browser: Browser, console: Console) -> None:
    page = open_page(browser, console.url, NARROW)
    try:
        item = page.locator(f'[data-testid="scope-item"][data-session="{CHAT}"]')
        expect(item).to_be_attached()
        expect(item).to_be_hidden()  # the sidebar is collapsed
        screenshot(page, "narrow-390-start")
        page.get_by_test_id("sidebar-toggle").click()
        expect(page.get_by_test_id("sidebar-toggle")).to_have_attribute("aria-expanded", "true")
        item.click()
        expect(item).to_be_hidden()  # collapsed again after choosing
        expect(page.get_by_test_id("scope-title")).to_have_text(f"{BOT} / {CHAT}")
        expect(card(page, "Beijing")).to_have_count(1)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= NARROW["width"], f"the page scrolls sideways at 390 px ({width} px wide)"
        screenshot(page, "narrow-390")
        assert not page.js_errors  # type: ignore[attr-defined]
    finally:
        page.context.close()


def test_switching_scope_drops_late_answers(browser: Browser, console: Console) -> None:
    """An answer for the previous chat that arrives after the switch is never shown."""
    context = browser.new_context(viewport=WIDE)
    context.add_init_script(SLOW_FETCH.replace("SCOPE", f'"session":"{CHAT}"'))
    page = context.new_page()
    try:
        page.goto(console.url)
        page.locator(f'[data-testid="scope-item"][data-session="{CHAT}"]').click()
        page.locator(f'[data-testid="scope-item"][data-session="{OTHER}"]').click()
        expect(card(page, "launch code")).to_have_count(1)
        page.wait_for_timeout(1800)  # the slow answer for the first chat has arrived by now
        expect(page.get_by_test_id("episode-card")).to_have_count(1)
        expect(page.get_by_test_id("panel-episodes")).not_to_contain_text("Beijing")
        expect(page.get_by_test_id("scope-title")).to_have_text(f"{BOT} / {OTHER}")
    finally:
        context.close()


def test_server_text_is_never_markup(page: Page) -> None:
    select_chat(page)
    xss = card(page, "Markup stays text")
    expect(xss.get_by_test_id("episode-content")).to_contain_text('<img src=x onerror="')
    expect(xss.locator("img, b")).to_have_count(0)
    assert page.evaluate("window.__xss") is None


def test_edit_body_and_tags_then_delete_with_confirm(page: Page, seeded: Seeded) -> None:
    select_chat(page)
    doomed = card(page, "Temporary note")
    path = seeded.episode_file("doomed")
    doomed.get_by_test_id("episode-edit").click()
    doomed.get_by_test_id("episode-edit-content").fill("Temporary note, edited in the console")
    doomed.get_by_test_id("episode-edit-tags").fill("scratch, console")
    doomed.get_by_test_id("episode-edit-save").click()
    expect(doomed.get_by_test_id("episode-tags")).to_contain_text("#scratch")
    eventually(lambda: "edited in the console" in disk_text(path), "the edited body on disk")
    assert "scratch" in path.read_text()

    doomed.get_by_test_id("episode-delete").click()
    doomed.get_by_test_id("episode-delete-confirm").click()
    expect(card(page, "Temporary note")).to_have_count(0)
    eventually(lambda: not path.exists(), "the deleted episode file gone")


def test_history_diff_is_coloured(page: Page) -> None:
    select_chat(page)
    card(page, "Beijing").get_by_test_id("episode-history").click()
    expect(page.get_by_test_id("tab-history")).to_have_attribute("aria-selected", "true")
    expect(page.get_by_test_id("history-title")).to_contain_text("ep_")
    page.get_by_test_id("commit-toggle").last.click()
    added = page.get_by_test_id("diff").locator('[data-kind="add"]', has_text="Alice is going")
    expect(added).to_have_count(1)
    colour = added.evaluate("el => getComputedStyle(el).color")
    plain = page.get_by_test_id("commit-toggle").first.evaluate("el => getComputedStyle(el).color")
    assert colour != plain
    page.get_by_test_id("history-whole-chat").click()
    expect(page.get_by_test_id("commit")).not_to_have_count(0)
    screenshot(page, "history-diff")


def test_injection_audit_health_export_import_derive(page: Page, seeded: Seeded) -> None:
    select_chat(page)
    page.get_by_test_id("tab-injection").click()
    expect(page.get_by_test_id("injection-empty")).to_be_visible()

    page.get_by_test_id("tab-audit").click()
    expect(page.get_by_test_id("audit-row").first).to_be_visible()
    page.get_by_test_id("audit-show-raw").click()
    expect(page.get_by_test_id("audit-raw-json")).to_have_value(re.compile('"operation"'))
    raw = json.loads(page.get_by_test_id("audit-raw-json").input_value())
    assert raw["items"] and all("operation" in item for item in raw["items"])

    page.get_by_test_id("tab-health").click()
    expect(page.get_by_test_id("health-card").first).to_be_visible()
    levels = page.get_by_test_id("health-card").evaluate_all(
        "cards => cards.map(c => c.dataset.level)"
    )
    assert set(levels) <= {"green", "amber", "red"}
    screenshot(page, "health")

    page.get_by_test_id("tab-transfer").click()
    page.get_by_test_id("export-button").click()
    exported = json.loads(page.get_by_test_id("export-raw-json").input_value())
    assert "Beijing" in json.dumps(exported, ensure_ascii=False)
    assert "launch code" not in json.dumps(exported)
    payload = {"episodes": [{"content": "Imported memory: the kite festival is in April"}]}
    page.get_by_test_id("import-json").fill(json.dumps(payload))
    page.get_by_test_id("import-button").click()
    expect(page.get_by_test_id("import-summary")).to_contain_text("Imported 1")
    page.get_by_test_id("tab-episodes").click()
    expect(card(page, "kite festival")).to_have_count(1)

    page.get_by_test_id("derive-bot").evaluate("el => el.closest('details').open = true")
    page.get_by_test_id("derive-bot").fill(BOT)
    page.get_by_test_id("derive-session").fill("group_777")
    page.get_by_test_id("derive-submit").click()
    result = page.get_by_test_id("derive-result")
    expect(result.locator('[data-key="session_key"]')).to_have_text(f"{BOT}:group_777")
    expect(result.locator('[data-key="user_key"]')).to_have_text(f"{BOT}:group_777")
    page.get_by_test_id("derive-open").click()
    expect(page.get_by_test_id("scope-title")).to_have_text(f"{BOT} / group_777")
    expect(page.get_by_test_id("episodes-empty")).to_be_visible()


def test_tabs_follow_arrow_keys(page: Page) -> None:
    select_chat(page)
    page.get_by_test_id("tab-episodes").focus()
    page.keyboard.press("ArrowRight")
    expect(page.get_by_test_id("tab-profiles")).to_be_focused()
    expect(page.get_by_test_id("tab-profiles")).to_have_attribute("aria-selected", "true")
    expect(page.get_by_test_id("panel-profiles")).to_be_visible()
    page.keyboard.press("End")
    expect(page.get_by_test_id("tab-health")).to_have_attribute("aria-selected", "true")


def test_artifacts_folder_is_ignored_by_git() -> None:
    ignored = (REPO / ".gitignore").read_text().splitlines()
    assert "test-artifacts/" in ignored


def test_inside_langbot_sandboxed_blob_iframe(
    browser: Browser, console: Console, tmp_path: Path
) -> None:
    """The packaged page under LangBot's real page SDK, shown the way LangBot 4.11 shows it."""
    with langbot_host(browser, console, tmp_path / "plugin") as page:
        frame = page.frame_locator("#page")
        frame.locator(f'[data-testid="scope-item"][data-session="{CHAT}"]').click()
        expect(frame.get_by_test_id("scope-title")).to_have_text(f"{BOT} / {CHAT}")
        expect(frame.get_by_test_id("episode-card").filter(has_text="Beijing")).to_have_count(1)
        expect(frame.get_by_test_id("episode-summary")).to_contain_text("memories")  # i18n JSON
        radius = frame.get_by_test_id("episode-card").first.evaluate(
            "el => getComputedStyle(el).borderTopLeftRadius"
        )
        assert radius == "8px", "app.css did not load inside the blob: iframe"
        in_sandbox = frame.locator("html").evaluate("() => window.origin")
        assert in_sandbox == "null"  # opaque origin, as in LangBot

        # The host's theme and language are followed...
        page.evaluate("setHost('dark', 'zh-Hans')")
        expect(frame.get_by_test_id("tab-episodes")).to_have_text("记忆")
        expect(frame.locator("html")).to_have_class(re.compile(r"\bdark\b"))
        screenshot(page, "langbot-host-zh-dark")
        # ...until the person picks a language in the page.
        frame.get_by_test_id("lang-select").select_option("en_US")
        expect(frame.get_by_test_id("tab-episodes")).to_have_text("Episodes")
        page.evaluate("setHost('light', 'zh-Hans')")
        expect(frame.locator("html")).to_have_class(re.compile(r"\blight\b"))
        expect(frame.get_by_test_id("tab-episodes")).to_have_text("Episodes")

        # A failed call (PageResponse.fail) shows the plugin's message.
        frame.get_by_test_id("derive-bot").evaluate("el => el.closest('details').open = true")
        frame.get_by_test_id("derive-session").fill("..")
        frame.get_by_test_id("derive-submit").click()
        expect(frame.get_by_test_id("error-banner")).to_be_visible()
        expect(frame.get_by_test_id("error-message")).to_contain_text("not allowed")
        screenshot(page, "langbot-host")


def test_injection_snapshot_and_broken_files(page: Page, seeded: Seeded) -> None:
    from vault.layout.keys import ScopeId
    from vault.writes.snapshots import write_snapshot

    write_snapshot(
        seeded.root,
        ScopeId(BOT, OTHER),
        {
            "recorded_at": "2026-11-30T04:20:00Z",
            "speaker": {"id": "u5", "name": "Dana"},
            "session_profile": {"name": "Ops", "traits": [], "preferences": [], "notes": ""},
            "speaker_profile": None,
            "episodes": [{"content": "[2026-11-30] Other chat secret: the launch code is 4242"}],
            "episode_ids": [seeded.ids["secret"]],
            "episode_count": 1,
            "injected": True,
            "injection_chars": 321,
            "budget_chars": 4000,
            "gate": "gate: passed: names Dana",
            "floor": "floor 0.44 for a single message (runners-up 0.33)",
        },
    )
    broken = seeded.root / "bots" / BOT / "sessions" / "group_789" / "profile.yaml"
    broken.parent.mkdir(parents=True)
    broken.write_text("name: Broken\ntraits: [unclosed\n")

    page.get_by_test_id("scopes-refresh").click()
    select_chat(page, OTHER)
    page.get_by_test_id("tab-injection").click()
    summary = page.get_by_test_id("injection-summary")
    expect(summary.locator('[data-key="injection_chars"]')).to_have_text("321 of 4000")
    expect(summary.locator('[data-key="speaker"]')).to_have_text("Dana (u5)")
    # The gate's decision and the floor of that turn, in the words `memvault search` prints.
    expect(summary.locator('[data-key="recall_verdict"]')).to_have_text(
        "gate: passed: names Dana; floor 0.44 for a single message (runners-up 0.33)"
    )
    expect(page.get_by_test_id("injection-episode")).to_contain_text("launch code is 4242")
    screenshot(page, "injection")

    select_chat(page, CHAT)  # another chat: the snapshot of the first one is gone
    expect(page.get_by_test_id("injection-empty")).to_be_visible()
    expect(page.get_by_test_id("panel-injection")).not_to_contain_text("4242")

    select_chat(page, "group_789")
    page.get_by_test_id("tab-profiles").click()
    session = page.locator('[data-testid="profile-card"][data-speaker=""]')
    expect(session.get_by_test_id("profile-problem")).to_contain_text("profile.yaml:")
    expect(session.get_by_test_id("profile-name-input")).to_be_disabled()
    page.get_by_test_id("tab-health").click()
    problem = page.get_by_test_id("health-problem").filter(has_text="group_789")
    expect(problem).to_contain_text(re.compile(r"group_789/profile\.yaml:\d+: \S"))
    expect(page.get_by_test_id("health-card").filter(has_text="problem")).not_to_have_count(0)
    broken.unlink()
