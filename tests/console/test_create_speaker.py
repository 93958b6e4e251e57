"""The console's "new memory" takes who said it and how much it matters, as `memvault
remember --speaker/--speaker-name/--importance` do: the endpoint (checked by the same rules)
and the form in a real browser (Debian's chromium) over the real `memvault console`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from console.context import ConsoleContext
from tests.console.browser.browser_pages import checked_page, console_fixtures
from tests.console.browser.conftest_browser import Console, Seeded, disk_text, screenshot
from tests.console.browser.person_view_browser import Browser, Page, expect
from tests.console.browser.test_browser import card, select_chat
from tests.console.conftest import A, scope_body
from tests.console.test_api import call, error


def test_create_keeps_speaker_and_importance(ctx: ConsoleContext) -> None:
    made = call(
        ctx,
        "/episode/create",
        scope=scope_body(A),
        content="Dana brings the projector on Fridays",
        speaker_id="u7",
        speaker_name="Dana",
        importance=4,
    )
    stored = ctx.vault.find_episode(A, made["id"]).episode
    assert (stored.speaker.id, stored.speaker.name, stored.importance) == ("u7", "Dana", 4)
    plain = call(ctx, "/episode/create", scope=scope_body(A), content="no speaker here")
    stored = ctx.vault.find_episode(A, plain["id"]).episode
    assert stored.speaker is None and stored.importance == 2  # the CLI's defaults


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        ({"importance": 9}, "`importance` must be an integer from 1 to 5"),
        ({"importance": "4"}, "`importance` must be an integer from 1 to 5"),
        ({"speaker_name": "Dana"}, "a speaker name needs the speaker's id as well"),
        ({"speaker_id": "   "}, "blank"),
    ],
)
def test_bad_speaker_or_importance_is_refused_and_writes_nothing(ctx, extra, says) -> None:
    before = ctx.vault.load_episodes(A)[0]
    err = error(ctx, "/episode/create", scope=scope_body(A), content="x marks it", **extra)
    assert err.status == 400 and says in err.message, err.message
    assert ctx.vault.load_episodes(A)[0] == before


seeded, console, browser = console_fixtures("console-create-speaker")


@pytest.fixture
def page(browser: Browser, console: Console) -> Iterator[Page]:
    with checked_page(browser, console.url) as page:
        yield page


def test_new_memory_form_sends_speaker_and_importance(page: Page, seeded: Seeded) -> None:
    select_chat(page)
    page.get_by_test_id("episode-new").click()
    form = page.get_by_test_id("episode-create-form")
    form.get_by_test_id("create-content").fill("Dana brings the projector on Fridays")
    form.get_by_test_id("create-speaker-id").fill("u7")
    form.get_by_test_id("create-speaker-name").fill("Dana")
    form.get_by_test_id("create-importance").select_option("4")
    screenshot(page, "create-speaker-form")
    form.get_by_test_id("create-save").click()
    expect(page.get_by_test_id("toast")).to_contain_text("Saved new memory")
    expect(card(page, "projector on Fridays")).to_contain_text("Dana")
    files = list((seeded.chat_dir() / "episodes").rglob("*.md"))
    (path,) = [p for p in files if "projector on Fridays" in disk_text(p)]
    text = disk_text(path)
    assert "\nimportance: 4\n" in text and "u7" in text and "Dana" in text, text
