"""The Health tab and the score lines as a person reads them, in a real browser (Debian's
chromium) over the real `memvault console`: every card title and line in the chosen
language (built from the codes + parameters the server sends), the hand edits not yet
committed and how to commit them, and the search score / explain lines. At 1280 and 390 px,
in English and Chinese; screenshots in test-artifacts/console/."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from dulwich import porcelain

from tests.console.browser.browser_pages import console_fixtures
from tests.console.browser.conftest_browser import CHAT, Seeded, screenshot
from tests.console.browser.person_view_browser import (
    ALL_VIEWS,
    CJK,
    MESSAGES,
    Page,
    choose_chat,
    expect,
    person_page,
)

seeded, console, browser = console_fixtures("console-health")


def open_health(page: Page) -> None:
    choose_chat(page, CHAT)
    page.get_by_test_id("tab-health").click()
    # The isolation probe ran: every card is there once its card shows.
    expect(page.locator('[data-testid="health-card"][data-id="isolation"]')).to_be_visible()


def hand_edit(seeded: Seeded) -> list[str]:
    """Two memory files changed by hand, as a person with an editor would (each time anew)."""
    stamp = time.time_ns()
    coffee = seeded.episode_file("coffee")
    coffee.write_text(coffee.read_text("utf-8") + f"Edited by hand ({stamp}).\n", "utf-8")
    note = seeded.chat_dir() / "episodes" / "by-hand" / "plant.md"
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_text(f"The office plant is called Fern 🌿 ({stamp}).\n", encoding="utf-8")
    return [str(p.relative_to(seeded.root)) for p in (coffee, note)]


def commit_by_hand(root: Path) -> None:
    porcelain.add(str(root), paths=[str(root / "bots")])
    porcelain.commit(str(root), message=b"hand edits", author=b"P <p@x>", committer=b"P <p@x>")


@pytest.mark.parametrize(("width", "lang"), ALL_VIEWS)
def test_health_reads_in_the_chosen_language(browser, console, seeded, width, lang):
    edited = hand_edit(seeded)
    with person_page(browser, console.url, width, lang) as page:
        open_health(page)
        answer = console.call("/health", {"scope": {"bot": "b1", "session": CHAT}})
        english = {line["message"] for c in answer["cards"] for line in c["lines"]}
        titles = page.locator('[data-testid="health-card"] h3')
        lines = page.get_by_test_id("health-line")
        expect(lines.first).to_be_visible()
        for title in titles.all_inner_texts():
            assert bool(CJK.search(title)) == (lang == "zh_Hans"), title
        codes = lines.evaluate_all("els => els.map(e => [e.dataset.code, e.textContent])")
        assert len(codes) >= 8, codes
        for code, text in codes:
            assert code and code != "text", (code, text)  # each line from a code...
            if lang == "zh_Hans":  # ...in the reader's language, not the server's English
                assert CJK.search(text) and text not in english, (code, text)
            else:
                assert not CJK.search(text), (code, text)
        # The hand edits: how many, which, and the command that keeps them.
        card = page.locator('[data-testid="health-card"][data-id="hand_edits"]')
        expect(card).to_have_attribute("data-level", "amber")
        expect(card).to_contain_text(edited[1])
        expect(card).to_contain_text("git -C " + str(seeded.root) + " add bots")
        expect(card).to_contain_text(
            "2 个手动修改" if lang == "zh_Hans" else "2 file(s) changed by hand"
        )
        screenshot(page, f"health-{width}-{lang}")
        # Switching the language re-reads every line (nothing stays in the other one).
        other = "en_US" if lang == "zh_Hans" else "zh_Hans"
        page.get_by_test_id("lang-select").select_option(other)
        expect(page.locator('[data-testid="health-card"][data-id="files"] h3')).to_have_text(
            re.compile(re.escape(MESSAGES[other]["health_card_files"]))
        )
    commit_by_hand(seeded.root)


def test_committing_the_hand_edits_turns_the_card_green(browser, console, seeded):
    hand_edit(seeded)
    with person_page(browser, console.url, "1280", "en_US") as page:
        open_health(page)
        card = page.locator('[data-testid="health-card"][data-id="hand_edits"]')
        expect(card).to_have_attribute("data-level", "amber")
        commit_by_hand(seeded.root)
        page.get_by_test_id("refresh").click()
        expect(card).to_have_attribute("data-level", "green")
        expect(card).to_contain_text("No hand edits waiting")
        screenshot(page, "health-hand-edits-committed")


@pytest.mark.parametrize(("width", "lang"), ALL_VIEWS)
def test_score_lines_read_in_the_chosen_language(browser, console, width, lang):
    with person_page(browser, console.url, width, lang) as page:
        choose_chat(page, CHAT)
        page.get_by_test_id("search-input").fill("When is Alice going to Beijing?")
        page.get_by_test_id("search-button").click()
        first = page.get_by_test_id("episode-card").first
        expect(first).to_contain_text("Alice is going to Beijing")
        summary = first.get_by_test_id("explain-summary")
        first.get_by_test_id("explain-toggle").click()
        row = first.locator(
            '[data-testid="explain-table"] tr[data-key="sources.text.contribution"] th'
        )
        if lang == "zh_Hans":
            expect(summary).to_contain_text("全文 第 1 名")
            expect(row).to_have_text("来源 › 全文 › 贡献")
            expect(first.get_by_test_id("episode-relevance")).to_contain_text("相关度")
        else:
            expect(summary).to_contain_text("text #1")
            expect(row).to_have_text("sources › text › contribution")
        # Every label of the table is a name in this language, none a raw key.
        labels = first.locator('[data-testid="explain-table"] th').all_inner_texts()
        assert labels and not [x for x in labels if "." in x or "_" in x], labels
        screenshot(page, f"search-explain-{width}-{lang}")
