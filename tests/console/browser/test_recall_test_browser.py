"""The recall test and the reason for an empty recall (issue 24, items 6 and 7) in a real
browser over `memvault console` and inside LangBot's sandboxed iframe: a message typed as a
speaker of a chat shows exactly the blocks /recall/test built (the code a real turn runs),
the gate's decision and why nothing would be injected, in English and Chinese; another
chat's memory never shows; the Injection tab says why the last turn injected nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.console.browser import test_browser as tb
from tests.console.browser.browser_pages import checked_page, langbot_host
from tests.console.browser.conftest_browser import BOT, CHAT, OTHER, Console, Seeded, screenshot
from vault.layout.keys import ScopeId
from vault.writes.snapshots import write_snapshot

# The browser suite's module fixtures (a seeded vault, `memvault console`, chromium).
seeded, console, browser = tb.seeded, tb.console, tb.browser
QUESTION = "When is Alice going to Beijing?"


@pytest.fixture
def page(browser, console: Console) -> Iterator[Page]:
    with checked_page(browser, console.url) as page:
        yield page


def open_test(page: Page, session: str = CHAT) -> None:
    tb.select_chat(page, session)
    page.get_by_test_id("tab-injection").click()
    expect(page.get_by_test_id("recall-test")).to_be_visible()


def run(page: Page, text: str, speaker: str = "") -> None:
    if speaker:
        page.get_by_test_id("recall-speaker").fill(speaker)
        page.get_by_test_id("recall-speaker").dispatch_event("change")
    page.get_by_test_id("recall-text").fill(text)
    page.get_by_test_id("recall-run").click()


def test_a_message_shows_the_blocks_the_injector_would_place(page: Page, console: Console) -> None:
    open_test(page)
    run(page, QUESTION, speaker="u42")
    expect(page.get_by_test_id("recall-speaker-name")).to_have_value("Alice")  # her profile
    blocks = page.get_by_test_id("recall-block")
    expect(blocks).to_have_count(2)
    answer = console.call(
        "/recall/test",
        {"scope": {"bot": BOT, "session": CHAT}, "text": QUESTION, "speaker": "u42",
         "speaker_name": "Alice"},
    )  # fmt: skip
    # The page shows the endpoint's blocks as they are: the exact texts, in order.
    for i, block in enumerate(answer["blocks"]):  # type: ignore[index]
        shown = blocks.nth(i)
        expect(shown).to_have_attribute("data-block", block["block"])
        assert shown.get_by_test_id("recall-block-text").inner_text() == block["text"]
    memory = page.locator('[data-testid="recall-block"][data-block="memories"]')
    expect(memory).to_contain_text("Alice is going to Beijing next week for a conference")
    expect(page.locator('[data-block="profile"]')).to_contain_text("oat flat white")
    expect(page.get_by_test_id("recall-verdict")).to_contain_text("gate: passed")
    expect(page.get_by_test_id("recall-settings")).to_have_attribute("data-from", "defaults")
    expect(page.get_by_test_id("recall-settings")).to_contain_text("the plugin's defaults")
    expect(page.get_by_test_id("recall-note")).to_contain_text("recorded nothing")
    expect(page.get_by_test_id("recall-nothing")).to_have_count(0)
    # Not a turn: the chat still has no injection snapshot.
    expect(page.get_by_test_id("injection-empty")).to_be_visible()
    screenshot(page, "recall-test")


def test_a_greeting_says_why_nothing_would_be_injected_in_both_languages(page: Page) -> None:
    open_test(page)
    run(page, "hi!", speaker="u42")
    expect(page.get_by_test_id("recall-why")).to_have_text("gate (greeting)")
    expect(page.get_by_test_id("recall-nothing")).to_contain_text("Nothing injected")
    expect(page.get_by_test_id("recall-block")).to_have_count(1)  # the profile only
    page.get_by_test_id("lang-select").select_option("zh_Hans")
    expect(page.get_by_test_id("recall-why")).to_have_text("消息闸门跳过（greeting）")
    expect(page.get_by_test_id("recall-test")).to_contain_text("检索测试")
    expect(page.get_by_test_id("recall-nothing")).to_contain_text("未注入记忆")
    screenshot(page, "recall-test-zh")


def test_another_chats_memory_never_shows(page: Page) -> None:
    open_test(page)
    run(page, "Other chat secret: the launch code is 4242")
    expect(page.get_by_test_id("recall-result")).to_be_visible()
    expect(page.get_by_test_id("recall-settings")).to_be_visible()
    expect(page.get_by_test_id("recall-result")).not_to_contain_text("4242")
    open_test(page, OTHER)  # ...while that chat's own test does find it
    run(page, "what is the launch code?")
    expect(page.locator('[data-block="memories"]')).to_contain_text("launch code is 4242")


def test_an_unknown_chat_and_an_oversize_message_say_what_to_fix(
    page: Page, console: Console
) -> None:
    open_test(page)
    page.get_by_test_id("recall-text").evaluate("el => el.removeAttribute('maxlength')")
    run(page, "x" * 4001)
    expect(page.get_by_test_id("error-message")).to_contain_text("at most 4000")
    page.get_by_test_id("error-dismiss").click()
    page.locator("#derive-form").evaluate("el => el.closest('details').open = true")
    page.get_by_test_id("derive-bot").fill(BOT)
    page.get_by_test_id("derive-session").fill("group_777")
    page.get_by_test_id("derive-submit").click()
    page.get_by_test_id("derive-open").click()
    page.get_by_test_id("tab-injection").click()
    run(page, "hello")
    expect(page.get_by_test_id("error-message")).to_contain_text(f"bot {BOT} has no chat group_777")


def test_the_injection_tab_says_why_the_last_turn_injected_nothing(
    page: Page, seeded: Seeded
) -> None:
    words = "below the floor (best 0.31 < 0.44)"
    why = {"version": "why-1", "kind": "floor", "form": "floor", "detail": "", "best": 0.3123,
           "floor": 0.44, "count": 3, "budget": 0, "words": words}  # fmt: skip
    write_snapshot(seeded.root, ScopeId(BOT, OTHER), {
        "recorded_at": "2026-12-02T09:00:00Z", "placed": {"default_prompt": ["profile"]},
        "episode_ids": [], "recalled_ids": [], "why": why, "nothing_injected": why,
        "gate": "gate: passed: default", "floor": "floor 0.44 for a single message"})  # fmt: skip
    page.get_by_test_id("scopes-refresh").click()
    open_test(page, OTHER)
    reason = page.locator('[data-testid="injection-summary"] [data-key="nothing_injected"]')
    expect(reason).to_have_text("below the floor (best 0.31 < 0.44)")
    page.get_by_test_id("lang-select").select_option("zh_Hans")
    expect(reason).to_have_text("低于下限（最高 0.31 < 0.44）")
    newer = {**why, "kind": "quota", "form": "quota", "words": "the quota is used up"}
    write_snapshot(seeded.root, ScopeId(BOT, OTHER), {"placed": {}, "nothing_injected": newer})
    page.get_by_test_id("refresh").click()
    expect(reason).to_have_text("the quota is used up")  # a newer MemVault's reason, as stored


def test_the_recall_test_inside_langbot(browser, console: Console, tmp_path: Path) -> None:
    with langbot_host(browser, console, tmp_path / "plugin") as host:
        frame = host.frame_locator("#page")
        frame.locator(f'[data-testid="scope-item"][data-session="{CHAT}"]').click()
        frame.get_by_test_id("tab-injection").click()
        frame.get_by_test_id("recall-text").fill(QUESTION)
        frame.get_by_test_id("recall-run").click()
        memory = frame.locator('[data-testid="recall-block"][data-block="memories"]')
        expect(memory).to_contain_text("Alice is going to Beijing next week")
        screenshot(host, "recall-test-langbot")
