"""The console's Candidates panel in a real browser (Debian's chromium) over the real
`memvault console`, with candidate files written through vault.candidates (what extraction
writes; no LLM needed): accept, edit then accept and reject, each in English and Chinese, at
1280 px, the same at 390 px, and inside LangBot's sandboxed iframe. Screenshots go to
test-artifacts/console/."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.console.browser.browser_pages import checked_page, console_fixtures, langbot_host
from tests.console.browser.candidates_browser import (
    SHOWN,
    accept,
    candidate,
    candidate_file,
    edit_then_accept,
    fits,
    open_candidates,
    reject,
    seed,
    shot,
)
from tests.console.browser.conftest_browser import CHAT, Console, Seeded
from tests.console.browser.person_view_browser import NARROW, WIDE, Browser, Page, expect

seeded, console, browser = console_fixtures("console-candidates", seed)


@pytest.fixture
def wide(browser: Browser, console: Console) -> Iterator[Page]:
    with checked_page(browser, console.url, WIDE, loaded=False) as page:
        yield page


@pytest.fixture
def narrow(browser: Browser, console: Console) -> Iterator[Page]:
    with checked_page(browser, console.url, NARROW, loaded=False) as page:
        yield page


# ---------------------------------------------------------------------------- done-when


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_accept_makes_a_searchable_memory(wide: Page, console, seeded, lang) -> None:
    open_candidates(wide, lang)
    shot(wide, f"candidates-{lang}-1280")
    accept(wide, console, seeded, lang, f"{lang}_accept")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_edit_then_accept_stores_the_edited_text(wide: Page, console, seeded, lang) -> None:
    open_candidates(wide, lang)
    candidate(wide, seeded, f"{lang}_edit").get_by_test_id("candidate-edit").click()
    expect(
        candidate(wide, seeded, f"{lang}_edit").get_by_test_id("candidate-edit-text")
    ).to_be_visible()
    shot(wide, f"candidates-{lang}-1280-edit")
    candidate(wide, seeded, f"{lang}_edit").get_by_test_id("candidate-edit-cancel").click()
    edit_then_accept(wide, console, seeded, lang, f"{lang}_edit")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_reject_stays_out_of_search_and_is_marked(wide: Page, console, seeded, lang) -> None:
    open_candidates(wide, lang)
    reject(wide, console, seeded, lang, f"{lang}_reject")
    shot(wide, f"candidates-{lang}-1280-rejected")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_candidate_shows_what_it_is_and_where_it_came_from(wide: Page, seeded, lang) -> None:
    open_candidates(wide, lang)
    shown = SHOWN[lang]
    secret = candidate(wide, seeded, "secret")
    expect(secret.get_by_test_id("candidate-redacted")).to_have_text(shown["redacted"])
    expect(secret.get_by_test_id("candidate-text")).to_contain_text("[redacted:password]")
    expect(wide.get_by_test_id("panel-candidates")).not_to_contain_text("hunter2secret")
    expect(secret.get_by_test_id("candidate-kind")).to_have_text(shown["kind"])
    expect(secret.get_by_test_id("candidate-speaker")).to_have_text("@Carol")
    expect(secret.get_by_test_id("candidate-evidence")).to_contain_text("wifi password is")
    expect(secret.get_by_test_id("candidate-proposed-by")).to_contain_text("fake-llm")
    profile = candidate(wide, seeded, "profile")
    expect(profile.get_by_test_id("candidate-kind")).to_have_text(shown["profile"])
    expect(profile.get_by_test_id("candidate-value")).to_have_text("jasmine tea")
    expect(profile.get_by_test_id("candidate-change")).to_contain_text("coffee")
    markup = candidate(wide, seeded, "markup")  # model text is shown as text, never markup
    expect(markup.get_by_test_id("candidate-text")).to_contain_text('<img src=x onerror="')
    expect(markup.get_by_test_id("candidate-evidence")).to_contain_text("<script>")
    expect(markup.locator("img, b, script")).to_have_count(0)
    assert wide.evaluate("window.__xss") is None
    # Pending ones come first in "all".
    wide.get_by_test_id("candidate-status-filter").select_option("all")
    statuses = wide.get_by_test_id("candidate-card").evaluate_all(
        "cards => cards.map(c => c.dataset.status)"
    )
    assert statuses == sorted(statuses, key=lambda s: s != "pending"), statuses


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_panel_works_at_390_px(narrow: Page, console, seeded, lang) -> None:
    open_candidates(narrow, lang, narrow=True)
    fits(narrow, NARROW)
    shot(narrow, f"candidates-{lang}-390")
    if lang == "en":  # the three decisions once at 390 px (the names are one chat's files)
        accept(narrow, console, seeded, lang, "narrow_accept")
        narrow.get_by_test_id("tab-candidates").click()
        edit_then_accept(narrow, console, seeded, lang, "narrow_edit")
        narrow.get_by_test_id("tab-candidates").click()
        reject(narrow, console, seeded, lang, "narrow_reject")
    else:
        card = candidate(narrow, seeded, "profile")
        for button in ("candidate-accept", "candidate-edit", "candidate-reject"):
            box = card.get_by_test_id(button).bounding_box()
            assert box and box["x"] >= 0 and box["x"] + box["width"] <= NARROW["width"], button
    fits(narrow, NARROW)
    shot(narrow, f"candidates-{lang}-390-after")


def test_inside_langbot_a_stale_decision_is_refused_and_reloaded(
    browser: Browser, console: Console, seeded: Seeded, tmp_path: Path
) -> None:
    """In LangBot's sandboxed iframe the SDK rejects with the message only (no code): the
    page still tells a conflict from other errors and reloads what is on disk."""
    with langbot_host(browser, console, tmp_path / "plugin") as page:
        frame = page.frame_locator("#page")
        frame.locator(f'[data-testid="scope-item"][data-session="{CHAT}"]').click()
        frame.get_by_test_id("tab-candidates").click()
        card = frame.locator(
            f'[data-testid="candidate-card"][data-id="{seeded.ids["cand_host_accept"]}"]'
        )
        card.get_by_test_id("candidate-accept").click()
        expect(card).to_have_attribute("data-status", "accepted")

        stale = frame.locator(
            f'[data-testid="candidate-card"][data-id="{seeded.ids["cand_host_stale"]}"]'
        )
        expect(stale).to_be_visible()
        path = candidate_file(seeded, "host_stale")
        hand = path.read_text(encoding="utf-8").replace("in a quartet", "in a string quartet")
        path.write_text(hand, encoding="utf-8")  # a person's edit the page has not seen
        stale.get_by_test_id("candidate-accept").click()
        expect(frame.get_by_test_id("error-message")).to_contain_text("changed on disk")
        # Reloaded: the card now shows the file as it is, still pending, nothing accepted.
        expect(stale.get_by_test_id("candidate-text")).to_contain_text("string quartet")
        expect(stale).to_have_attribute("data-status", "pending")
        assert path.read_text(encoding="utf-8") == hand
        assert "status: pending" in hand
        shot(page, "candidates-langbot-conflict")
