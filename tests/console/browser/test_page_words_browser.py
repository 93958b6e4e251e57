"""The words of the Memory Console as a newcomer reads them, in a real browser (Debian's
chromium) over the real `memvault console`, at 1280 and 390 px in English and Chinese
(screenshots in test-artifacts/console/):

- a command in a message (`memvault export`) shows as code, never with its backticks, on
  every tab; only a translator's backticks make code (a property over any message and any
  values, checked in the page's own renderer);
- a search result names its numbers as the plan does: "score" the ranking number,
  "relevance" only the absolute one of the chip, the factor keyed `relevance` is "fusion";
- a memory's category and source are named in the reader's language (the value in the title);
- the isolation selector keeps its name at 390 px, and the chat list says what it counts.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.console.browser.browser_pages import console_fixtures
from tests.console.browser.conftest_browser import BOT, CHAT, Seeded, build_vault, screenshot
from tests.console.browser.person_view_browser import (
    ALL_VIEWS,
    CJK,
    MESSAGES,
    VIEWS,
    Page,
    choose_chat,
    expect,
    person_page,
)
from vault.writes.new_episode import NewEpisode

BROKEN = "by-hand/broken.md"
PLAN = "Carol plans a trip to Lisbon in May"


def seed(root: Path) -> Seeded:
    """The browser suite's vault, a memory with a category, and a broken hand-written file
    (so Health says to run `memvault check`)."""
    from vault.layout.keys import ScopeId
    from vault.writes.operations import Vault

    seeded = build_vault(root)
    vault = Vault(seeded.root, git=True)
    scope = ScopeId(BOT, CHAT)
    seeded.ids["plan"] = vault.remember(NewEpisode(scope, PLAN, category="plan", source="user")).id
    broken = seeded.chat_dir() / "episodes" / BROKEN
    broken.parent.mkdir(parents=True)
    broken.write_text("---\nimportance: [\n---\nbody\n", encoding="utf-8")
    return seeded


seeded, console, browser = console_fixtures("console-page-words", seed)

TABS = ("episodes", "profiles", "candidates", "events", "history", "injection", "audit")
TABS += ("transfer", "health")
# The commands the messages name, and the tab each shows on.
COMMANDS = {
    "candidates": "memvault candidates purge",
    "transfer": "memvault export",
    "health": "memvault check",
}


def open_tab(page: Page, tab: str) -> None:
    page.get_by_test_id(f"tab-{tab}").click()
    panel = page.get_by_test_id(f"panel-{tab}")
    expect(panel).to_be_visible()
    expect(panel).not_to_have_attribute("aria-busy", "true")
    if tab == "health":  # the isolation probe ran: every card is there once its card shows
        expect(page.locator('[data-testid="health-card"][data-id="isolation"]')).to_be_visible()


# ------------------------------------------------------------------------------ code


@pytest.mark.parametrize(("width", "lang"), ALL_VIEWS)
def test_no_tab_shows_a_backtick_and_commands_are_code(browser, console, width, lang):
    with person_page(browser, console.url, width, lang) as page:
        choose_chat(page, CHAT)
        for tab in TABS:
            open_tab(page, tab)
            panel = page.get_by_test_id(f"panel-{tab}")
            text = panel.inner_text()
            assert "`" not in text, (tab, text)
            if tab in COMMANDS:
                code = panel.locator("code", has_text=COMMANDS[tab])
                expect(code.first).to_be_visible()
                expect(code.first).to_have_text(COMMANDS[tab])
                screenshot(page, f"words-code-{tab}-{width}-{lang}")
        assert "`" not in page.locator("body").inner_text()


TEXT = st.text(alphabet="ab <>&\"'`{}中文\n", max_size=12)
NAMES = st.sampled_from(["a", "b", "constructor", "toString", "__proto__"])


@st.composite
def messages(draw: st.DrawFn) -> tuple[str, dict[str, str]]:
    pieces = draw(st.lists(st.one_of(TEXT, st.sampled_from(["`", "{a}", "{b}", "{toString}"]))))
    values = draw(st.dictionaries(NAMES.filter(lambda n: n != "__proto__"), TEXT, max_size=3))
    return "".join(pieces), values


def expected(template: str, values: dict[str, str]) -> list[tuple[bool, str]]:
    """The model: split on backticks first, then the {names} the values have (own keys)."""

    def fill(part: str) -> str:
        return re.sub(r"\{(\w+)\}", lambda m: values.get(m.group(1), m.group(0)), part, flags=re.A)

    parts = template.split("`")
    if len(parts) % 2 == 0:  # an odd number of backticks: nothing is code
        return [(False, fill(template))]
    out = [(i % 2 == 1, fill(part)) for i, part in enumerate(parts)]
    return [(code, text) for code, text in out if code or text]


RENDER = """([template, values]) => {
  const el = document.createElement('p');
  MV.putMessage(el, template, values);
  return Array.from(el.childNodes).map(n => [n.nodeName, n.textContent,
    n.nodeType === 1 ? n.children.length : 0]);
}"""


def test_only_the_messages_backticks_make_code(browser, console):
    """Any message, any values (markup, backticks, Object's own names): the page's renderer
    makes text nodes and <code> exactly where the message's own backticks pair up."""
    with person_page(browser, console.url, "1280", "en_US") as page:

        @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
        @given(messages())
        def check(message: tuple[str, dict[str, str]]) -> None:
            template, values = message
            nodes = page.evaluate(RENDER, [template, values])
            assert all(name in ("#text", "CODE") and kids == 0 for name, _, kids in nodes), nodes
            got = [(name == "CODE", text) for name, text, _ in nodes]
            assert got == expected(template, values), (template, values, nodes)

        check()


# ------------------------------------------------------------------------------ names


def search(page: Page, query: str) -> None:
    page.get_by_test_id("search-input").fill(query)
    page.get_by_test_id("search-button").click()
    expect(page.get_by_test_id("episode-card").first).to_be_visible()


@pytest.mark.parametrize(("width", "lang"), ALL_VIEWS)
def test_search_names_score_relevance_and_fusion_apart(browser, console, width, lang):
    words = MESSAGES[lang]
    with person_page(browser, console.url, width, lang) as page:
        choose_chat(page, CHAT)
        search(page, "When is Alice going to Beijing?")
        cards = page.get_by_test_id("episode-card")
        expect(cards.first).to_contain_text("Alice is going to Beijing")
        items = console.call(
            "/search",
            {"scope": {"bot": BOT, "session": CHAT}, "query": "When is Alice going to Beijing?"},
        )["items"]  # type: ignore[index]
        # The ranking number is called "score" where it shows.
        for card in cards.all():
            expect(card.get_by_test_id("episode-score-label")).to_contain_text(words["score"])
        # The fusion factor (JSON key `relevance`) is "fusion" in the one-line summary...
        factors = page.locator('[data-testid="explain-summary"] [data-part="relevance"]')
        below_top = [i for i in items if i["explain"].get("relevance", 1) != 1]
        assert below_top, items
        expect(factors).to_have_count(len(below_top))
        for text in factors.all_inner_texts():
            assert text.startswith(words["explain_relevance"] + " ×"), text
        if lang == "en_US":
            assert words["explain_relevance"] == "fusion"
            assert "relevance ×" not in page.get_by_test_id("episode-list").inner_text()
        else:
            assert words["explain_relevance"] == "融合"
        # ...and in the explain table; "relevance" is the absolute one only.
        first = cards.first
        first.get_by_test_id("explain-toggle").click()
        table = first.get_by_test_id("explain-table")
        expect(table.locator('tr[data-key="relevance"] th')).to_have_text(
            words["explain_part_relevance"]
        )
        value = words["explain_part_value"]
        expect(table.locator('tr[data-key="absolute.value"] th')).to_have_text(
            words["explain_part_absolute"] + " › " + value
        )
        # The chip: the absolute relevance and the floor, in words that read naturally.
        top = items[0]["explain"]["absolute"]
        chip = first.get_by_test_id("episode-relevance")
        key = "relevance_passed" if top["passed"] else "relevance_below"
        said = words[key].format(value=f"{top['value']:.3f}", floor=f"{top['floor']:.2f}")
        expect(chip).to_have_text(said)
        if lang == "zh_Hans" and top["passed"]:
            assert "高于下限" in said and "达到" not in said
        screenshot(page, f"words-search-{width}-{lang}")


@pytest.mark.parametrize(("width", "lang"), ALL_VIEWS)
def test_category_and_source_are_named_in_the_language(browser, console, seeded, width, lang):
    words = MESSAGES[lang]
    with person_page(browser, console.url, width, lang) as page:
        choose_chat(page, CHAT)
        card = page.locator(f'[data-testid="episode-card"][data-id="{seeded.ids["plan"]}"]')
        card.locator("details.ep-more > summary").click()
        for field, value in (("category", "plan"), ("source", "user")):
            shown = card.get_by_test_id(f"episode-{field}")
            expect(shown).to_have_text(words[f"{field}_{value}"])
            expect(shown).to_have_attribute("title", value)  # the file's value, still there
            if lang == "zh_Hans":
                expect(shown).to_have_text(re.compile(CJK.pattern))
        # The category choices of the filter and of the new-memory form: named, value kept.
        options = page.get_by_test_id("filter-category").locator("option[value='plan']")
        expect(options).to_have_text(words["category_plan"])
        page.get_by_test_id("episode-new").click()
        form_option = page.get_by_test_id("field-category").locator("option[value='plan']")
        expect(form_option).to_have_text(words["category_plan"])
        page.evaluate("window.scrollTo(0, 0)")  # a whole-page shot, the sticky bar on top
        screenshot(page, f"words-details-{width}-{lang}")


@pytest.mark.parametrize(("width", "lang"), ALL_VIEWS)
def test_isolation_keeps_its_name_and_the_list_says_what_it_counts(
    browser, console, seeded, width, lang
):
    words = MESSAGES[lang]
    with person_page(browser, console.url, width, lang) as page:
        window = VIEWS[width]["width"]
        label = page.locator(".scope-tools .inline-label > span")
        select = page.get_by_test_id("scope-isolation")
        expect(label).to_be_visible()
        expect(label).to_have_text(words["isolation"])
        for box in (label.bounding_box(), select.bounding_box()):
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= window, box
        label_box, select_box = label.bounding_box(), select.bounding_box()
        assert label_box and select_box and label_box["x"] + label_box["width"] <= select_box["x"]
        screenshot(page, f"words-isolation-{width}-{lang}")
        # The chat list counts speaker profile files (speakers/<id>.yaml), and says so: this
        # chat heard three people (Alice, Bob, 小明), one of whom has a profile.
        profiles = len(list((seeded.chat_dir() / "speakers").glob("*.yaml")))
        assert profiles == 1
        toggle = page.get_by_test_id("sidebar-toggle")
        if toggle.is_visible():
            toggle.click()
        item = page.locator(f'[data-testid="scope-item"][data-session="{CHAT}"]')
        sub = item.locator(".chat-sub")
        active = item.get_by_test_id("scope-count").inner_text()
        expect(sub).to_have_text(words["chat_counts"].format(episodes=active, speakers=profiles))
        assert ("speaker profiles" if lang == "en_US" else "发言者画像") in sub.inner_text()
        screenshot(page, f"words-sidebar-{width}-{lang}")
