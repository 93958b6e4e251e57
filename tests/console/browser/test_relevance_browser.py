"""The Memory Console's search results in a real browser show each memory's relevance and
whether it reaches the floor, with the number /search answers (the same as `memvault search
--explain`), in English and in Chinese."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from indexer.retrieval.relevance import DEFAULT_FLOOR
from tests.console.browser.conftest_browser import (
    BOT,
    CHAT,
    Console,
    Seeded,
    build_vault,
    running_console,
    screenshot,
)
from tests.console.browser.person_view_browser import Browser, Page, expect

RELATED = "When is Alice going to Beijing?"
UNRELATED = "Tokyo flight?"
IMPERSONAL = "what's 17 times 23?"  # the message gate skips it (indexer.gate.rules)
FLOOR = f"{DEFAULT_FLOOR:.2f}"


def table_number(value: float) -> str:
    """MV.fmtNum, as the explain table prints every number."""
    return str(int(value)) if float(value).is_integer() else f"{value:.3f}"


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Seeded:
    return build_vault(tmp_path_factory.mktemp("console-relevance") / "vault")


@pytest.fixture(scope="module")
def console(seeded: Seeded) -> Iterator[Console]:
    with running_console(seeded) as server:
        yield server


@pytest.fixture
def page(console: Console, chromium_browser: Browser) -> Iterator[Page]:
    context = chromium_browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    context.set_default_timeout(10_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(console.url)
    page.locator(f'[data-testid="scope-item"][data-session="{CHAT}"]').click()
    expect(page.get_by_test_id("scope-title")).to_have_text(f"{BOT} / {CHAT}")
    yield page
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


def answer(console: Console, query: str) -> list[dict]:
    body = {"scope": {"bot": BOT, "session": CHAT}, "query": query}
    return console.call("/search", body)["items"]  # type: ignore[index]


def search(page: Page, query: str) -> None:
    page.get_by_test_id("search-input").fill(query)
    page.get_by_test_id("search-button").click()


def test_each_result_shows_its_relevance_and_the_verdict(page: Page, console: Console) -> None:
    items = answer(console, RELATED)
    top = items[0]
    assert "Beijing" in top["content"] and top["passed"] is True
    shown = f"{top['explain']['absolute']['value']:.3f}"
    search(page, RELATED)
    card = page.locator(f'[data-testid="episode-card"][data-id="{top["id"]}"]')
    chip = card.get_by_test_id("episode-relevance")
    expect(chip).to_have_text(f"Relevance {shown}: above the floor {FLOOR}")
    expect(chip).to_have_attribute("data-passed", "true")
    # The explain table holds its components, the value among them.
    card.get_by_test_id("explain-toggle").click()
    row = card.locator('tr[data-key="absolute.value"] td')
    expect(row).to_have_text(table_number(top["explain"]["absolute"]["value"]))
    screenshot(page, "search-relevance")

    below = answer(console, UNRELATED)
    assert below and not any(i["passed"] for i in below)
    search(page, UNRELATED)
    chips = page.get_by_test_id("episode-relevance")
    expect(chips).to_have_count(len(below))
    for index, item in enumerate(below):
        value = f"{item['explain']['absolute']['value']:.3f}"
        expect(chips.nth(index)).to_have_text(f"Relevance {value}: below the floor {FLOOR}")
        expect(chips.nth(index)).to_have_attribute("data-passed", "false")

    page.get_by_test_id("lang-select").select_option("zh_Hans")
    expect(chips.first).to_have_text(
        f"相关度 {below[0]['explain']['absolute']['value']:.3f}：低于下限 {FLOOR}"
    )
    page.get_by_test_id("lang-select").select_option("en_US")

    # A message the gate skips: every result says so, and the verdict line names the rule.
    gated = answer(console, IMPERSONAL)
    assert gated and all(i["explain"]["absolute"]["gated"] for i in gated)
    search(page, IMPERSONAL)
    expect(page.get_by_test_id("search-verdict")).to_have_text(
        f"gate: skipped: arithmetic; floor {FLOOR} for a single message (runners-up 0.33)"
    )
    expect(chips).to_have_count(len(gated))
    value = f"{gated[0]['explain']['absolute']['value']:.3f}"
    expect(chips.first).to_have_text(
        f"Not injected: the message gate skipped this message (relevance {value}, floor {FLOOR})"
    )
    expect(chips.first).to_have_attribute("data-gated", "true")
