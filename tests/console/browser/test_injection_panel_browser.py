"""The console's Injection tab (issue 12): where each block of the last turn went and what
the runner's `retrieve` served or withheld in that turn, in English and Chinese, in a real
browser over `memvault console`. The snapshot is the one the plugin writes."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.console.browser import test_browser as tb
from tests.console.browser.conftest_browser import BOT, OTHER, Seeded
from vault.layout.keys import ScopeId
from vault.writes.snapshots import write_snapshot

# The browser suite's module fixtures (a seeded vault, `memvault console`, chromium, a page).
seeded, console, browser, page = tb.seeded, tb.console, tb.browser, tb.page

SNAPSHOT = {
    "recorded_at": "2026-12-01T09:00:00Z",
    "query_id": 12,
    "speaker": {"id": "u5", "name": "Dana"},
    "placed": {"default_prompt": ["profile", "memories"]},
    "episodes": [{"content": "(id:ep_hotel) <mem>Dana's hotel is near the station</mem>"}],
    "episode_ids": ["ep_hotel"],
    "recalled_ids": ["ep_hotel", "ep_budget"],
    "episode_count": 1,
    "injected": True,
    "injection_chars": 900,
    "budget_chars": 4000,
    "retrieve": {
        "served_ids": ["ep_flight"],
        "withheld_ids": ["ep_hotel"],
        "searched": True,
        "kb_ids": ["kb-1"],
        "at": "2026-12-01T09:00:01Z",
    },
}


def open_injection(page: Page, seeded: Seeded, snapshot: dict) -> None:
    write_snapshot(seeded.root, ScopeId(BOT, OTHER), snapshot)
    page.get_by_test_id("scopes-refresh").click()
    tb.select_chat(page, OTHER)
    page.get_by_test_id("tab-injection").click()


def test_injection_tab_shows_what_went_where_and_what_retrieve_did(
    page: Page, seeded: Seeded
) -> None:
    open_injection(page, seeded, SNAPSHOT)
    placed = page.get_by_test_id("injection-placed")
    expect(placed.locator('[data-target="default_prompt"]')).to_have_text(
        "profile block, memory block"
    )
    expect(page.get_by_test_id("injection-left-out")).to_have_text("ep_budget")
    expect(page.get_by_test_id("injection-episode")).to_contain_text("ep_hotel")
    retrieve = page.get_by_test_id("injection-retrieve")
    expect(retrieve.locator('[data-key="searched"]')).to_have_text("searched")
    expect(page.get_by_test_id("retrieve-served")).to_have_text("ep_flight")
    expect(page.get_by_test_id("retrieve-withheld")).to_have_text("ep_hotel")
    expect(page.get_by_test_id("panel-injection")).not_to_contain_text("suppress")

    page.get_by_test_id("lang-select").select_option("zh_Hans")
    page.get_by_test_id("tab-episodes").click()
    page.get_by_test_id("tab-injection").click()
    expect(page.get_by_test_id("panel-injection")).to_contain_text("本轮的知识库检索")
    expect(placed.locator('[data-target="default_prompt"]')).to_have_text("画像块, 记忆块")
    expect(retrieve.locator('[data-key="searched"]')).to_have_text("已检索")


def test_injection_tab_without_retrieve_or_from_an_older_snapshot(
    page: Page, seeded: Seeded
) -> None:
    open_injection(page, seeded, {**SNAPSHOT, "retrieve": None})
    expect(page.get_by_test_id("injection-retrieve-none")).to_contain_text(
        "No retrieve call was recorded for this turn"
    )
    older = {k: v for k, v in SNAPSHOT.items() if k not in ("placed", "retrieve")}
    open_injection(page, seeded, older)
    expect(page.get_by_test_id("injection-placed-unknown")).to_contain_text("older MemVault")
    expect(page.get_by_test_id("injection-retrieve-none")).to_have_count(0)
