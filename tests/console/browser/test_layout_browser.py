"""What a person sees of the console's layout and of a refused save, in a real browser
(Debian's chromium) over the real `memvault console`, at 1280 and 390 px in English and
Chinese (screenshots in test-artifacts/console/):

- the tabs are whole and legible at 390 px (they wrap), and the "choose a chat" sentence
  points where the chat list is in that layout;
- the sidebar counts a chat's memories as its list does, and an expired memory is marked;
- a save refused because the file changed on disk keeps the person's text, offers the disk
  version and a copy of theirs, and says so in a banner that is in view, in two sentences.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.console.browser.browser_pages import console_fixtures
from tests.console.browser.conftest_browser import (
    CHAT,
    Seeded,
    build_vault,
    disk_text,
    eventually,
    screenshot,
)
from tests.console.browser.person_view_browser import (
    ALL_VIEWS,
    CJK,
    VIEWS,
    Page,
    choose_chat,
    expect,
    in_viewport,
    person_page,
)
from vault.writes.new_episode import NewEpisode

COUNTS = "group_counts"  # a chat written by hand: every status, a broken file, expiry dates
KINDS = {
    "active": "active",
    "archived": "archived",
    "superseded": "superseded",
    "expired": "active\nexpires_at: 2001-01-01T00:00:00Z",
    "later": "active\nexpires_at: 2999-01-01T00:00:00Z",
}
EXPIRED = {"en_US": "expired", "zh_Hans": "已过期"}


def seed(root: Path) -> Seeded:
    """The browser suite's vault plus one old memory per view to conflict on, and a chat
    written by hand with every status, a broken file and expiry dates."""
    from vault.layout.keys import ScopeId
    from vault.writes.operations import Vault

    seeded = build_vault(root)
    vault = Vault(seeded.root, git=True)
    for n, (width, lang) in enumerate(p.values for p in ALL_VIEWS):
        name = f"conflict-{width}-{lang}"
        text = f"Conflict target {width} {lang}: the kite is blue"
        # Older than the rest: at the end of the list, where the person scrolls down to.
        old = datetime(2025, 1, 1 + n, tzinfo=UTC)
        seeded.ids[name] = vault.remember(NewEpisode(ScopeId("b1", CHAT), text, created_at=old)).id
    folder = seeded.chat_dir(COUNTS) / "episodes" / "2026" / "11"
    folder.mkdir(parents=True)
    for name, status in KINDS.items():
        (folder / f"ep_{name}.md").write_text(
            f"---\nid: ep_{name}\ncreated_at: 2026-11-02T10:00:00Z\nstatus: {status}\n---\n"
            f"The {name} memory of the counting chat\n",
            encoding="utf-8",
        )
    (folder / "broken.md").write_text("---\nimportance: [\n---\nbody\n", encoding="utf-8")
    return seeded


seeded, console, browser = console_fixtures("console-layout", seed)


def card(page: Page, text: str):  # noqa: ANN201 - a playwright Locator
    return page.get_by_test_id("episode-card").filter(has_text=text)


# ------------------------------------------------------------------------------ layout


@pytest.mark.parametrize(("width", "lang"), ALL_VIEWS)
def test_tabs_are_whole_and_the_placeholder_points_at_the_list(browser, console, width, lang):
    with person_page(browser, console.url, width, lang) as page:
        # No chat chosen yet: the sentence says where the chat list is in this layout.
        placeholder = page.get_by_test_id("choose-scope")
        expect(placeholder).to_be_visible()
        said = placeholder.inner_text()
        if width == "390":
            assert "☰" in said and "left" not in said and "左侧" not in said, said
        else:
            assert ("on the left" in said) if lang == "en_US" else ("左侧" in said), said
        tabs = page.get_by_role("tab")
        assert tabs.count() >= 8
        window = VIEWS[width]["width"]
        for box in tabs.evaluate_all(
            "ts => ts.map(t => { const r = t.getBoundingClientRect(); return {name: t.textContent,"
            " left: r.left, right: r.right, clipped: t.scrollWidth > t.clientWidth}; })"
        ):
            # Whole, inside the window, its text not cut (the "Au…" at 390 px).
            assert box["left"] >= 0 and box["right"] <= window and not box["clipped"], box
            assert bool(CJK.search(box["name"])) == (lang == "zh_Hans"), box
        strip = page.get_by_test_id("tabs")
        assert strip.evaluate("el => el.scrollWidth <= el.clientWidth"), "the tabs scroll sideways"
        screenshot(page, f"tabs-placeholder-{width}-{lang}")
        page.get_by_role("tab").last.click()  # the last tab is reachable without scrolling
        expect(page.get_by_role("tab").last).to_have_attribute("aria-selected", "true")


@pytest.mark.parametrize(("width", "lang"), ALL_VIEWS)
def test_sidebar_count_is_the_lists_and_expired_memories_are_marked(browser, console, width, lang):
    with person_page(browser, console.url, width, lang) as page:
        item = page.locator(f'[data-testid="scope-item"][data-session="{COUNTS}"]')
        count = item.get_by_test_id("scope-count").text_content()
        choose_chat(page, COUNTS)
        summary = page.get_by_test_id("episode-summary")
        expect(summary).to_contain_text(re.compile(r"\d"))
        listed = re.search(r"\d+", summary.inner_text()).group(0)  # type: ignore[union-attr]
        # One number: active memories (expired ones included, as the list shows them).
        assert count == listed == "3", (count, summary.inner_text())
        expect(page.get_by_test_id("episode-card")).to_have_count(3)
        expired = card(page, "The expired memory")
        expect(expired.get_by_test_id("episode-expired")).to_have_text(EXPIRED[lang])
        expect(card(page, "The later memory").get_by_test_id("episode-expired")).to_have_count(0)
        expect(card(page, "The active memory").get_by_test_id("episode-expired")).to_have_count(0)
        screenshot(page, f"counts-expired-{width}-{lang}")


# ------------------------------------------------------------------------------ conflicts


@pytest.mark.parametrize(("width", "lang"), ALL_VIEWS)
def test_a_refused_edit_keeps_the_typed_text(browser, console, seeded, width, lang):
    name = f"conflict-{width}-{lang}"
    path = seeded.episode_file(name)
    typed = f"My version ({width} {lang}): the kite is red, typed in the console"
    with person_page(browser, console.url, width, lang) as page:
        choose_chat(page, CHAT)
        target = page.locator(f'[data-testid="episode-card"][data-id="{seeded.ids[name]}"]')
        expect(target).to_contain_text(f"Conflict target {width} {lang}")
        target.get_by_test_id("episode-edit").click()
        target.get_by_test_id("episode-edit-content").fill(typed)
        target.get_by_test_id("episode-edit-tags").fill("kites, typed")
        target.get_by_test_id("episode-edit-save").scroll_into_view_if_needed()
        assert page.evaluate("window.scrollY") > 200, "the banner's place must be out of view"
        # Meanwhile, someone edits the file on disk.
        by_hand = disk_text(path).replace("the kite is blue", "the kite is green (by hand)")
        path.write_text(by_hand, encoding="utf-8")

        target.get_by_test_id("episode-edit-save").click()
        banner = page.get_by_test_id("error-banner")
        expect(banner).to_be_visible()
        assert in_viewport(page, "error-banner"), "the banner is out of view"
        # Two sentences, each its own line: the server's, then what the page did.
        message, advice = page.get_by_test_id("error-message"), page.get_by_test_id("error-advice")
        expect(message).to_contain_text("changed on disk")
        expect(advice).to_be_visible()
        assert advice.inner_text().strip() not in message.inner_text()
        assert bool(CJK.search(advice.inner_text())) == (lang == "zh_Hans")
        tops = [el.bounding_box()["y"] for el in (message, advice)]  # type: ignore[index]
        assert tops[1] > tops[0], "the two sentences run together on one line"
        # Nothing was written over the hand edit, and the typed text is still there.
        assert disk_text(path) == by_hand
        expect(target.get_by_test_id("episode-edit-content")).to_have_value(typed)
        expect(target.get_by_test_id("episode-edit-tags")).to_have_value("kites, typed")
        expect(target.get_by_test_id("episode-conflict")).to_be_visible()
        screenshot(page, f"conflict-kept-{width}-{lang}")

        # "Load the disk version": the form shows it, mine stays beside it.
        target.get_by_test_id("episode-conflict-reload").click()
        expect(target.get_by_test_id("episode-edit-content")).to_have_value(
            re.compile(r"green \(by hand\)")
        )
        expect(target.get_by_test_id("episode-conflict-mine")).to_have_value(typed)
        screenshot(page, f"conflict-disk-loaded-{width}-{lang}")
        # ...and mine can be put back and saved over it, knowingly.
        target.get_by_test_id("episode-conflict-use-mine").click()
        expect(target.get_by_test_id("episode-edit-content")).to_have_value(typed)
        expect(target.get_by_test_id("episode-edit-tags")).to_have_value("kites, typed")
        target.get_by_test_id("episode-edit-save").click()
        eventually(lambda: typed in disk_text(path), "the typed text saved over the disk version")
        assert "typed" in disk_text(path).split("---")[1]  # the typed tags too
        expect(target.get_by_test_id("episode-content")).to_have_text(typed)
        expect(page.get_by_test_id("error-banner")).to_be_hidden()


def test_copy_mine_gives_the_typed_text(browser, console, seeded):
    name = "conflict-1280-en_US"  # its own round: the file changes on disk again
    path = seeded.episode_file(name)
    typed = "Copied before anything else happens"
    with person_page(browser, console.url, "1280", "en_US") as page:
        page.context.grant_permissions(["clipboard-read", "clipboard-write"])
        choose_chat(page, CHAT)
        target = page.locator(f'[data-testid="episode-card"][data-id="{seeded.ids[name]}"]')
        target.get_by_test_id("episode-edit").click()
        target.get_by_test_id("episode-edit-content").fill(typed)
        path.write_text(disk_text(path) + "\nanother hand edit\n", encoding="utf-8")
        target.get_by_test_id("episode-edit-save").click()
        target.get_by_test_id("episode-conflict-copy").click()
        expect(page.get_by_test_id("toast")).to_be_visible()
        assert page.evaluate("navigator.clipboard.readText()") == typed
        assert "another hand edit" in disk_text(path) and typed not in disk_text(path)


def test_a_refused_profile_save_keeps_the_typed_name(browser, console, seeded):
    path = seeded.chat_dir() / "profile.yaml"
    with person_page(browser, console.url, "1280", "zh_Hans") as page:
        choose_chat(page, CHAT)
        page.get_by_test_id("tab-profiles").click()
        session = page.locator('[data-testid="profile-card"][data-speaker=""]')
        expect(session.get_by_test_id("profile-traits")).to_contain_text("friendly chat")
        path.write_text(path.read_text("utf-8").replace("friendly chat", "chatty"), "utf-8")
        session.get_by_test_id("profile-name-input").fill("项目群")
        session.get_by_test_id("profile-name-save").click()
        expect(page.get_by_test_id("error-advice")).to_contain_text("放回")
        expect(session.get_by_test_id("profile-traits")).to_contain_text("chatty")  # the disk's
        expect(session.get_by_test_id("profile-name-input")).to_have_value("项目群")  # and mine
        assert "项目群" not in path.read_text("utf-8")
        screenshot(page, "profile-conflict-kept-1280-zh_Hans")
