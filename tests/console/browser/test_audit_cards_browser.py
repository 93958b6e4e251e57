"""The Audit tab as a person reads it, in a real browser (Debian's chromium) over the real
`memvault console`, at 1280 and 390 px in English and Chinese (screenshots in
test-artifacts/console/):

- every line is readable in the window: nothing hides past the right edge, no operation
  name stacks letter by letter (the walk-through's 390 px Chinese table);
- operations, target types and sources are named in the reader's language, the logged
  value in their title; a value the page has no name for (a newer server's, a hostile one)
  is shown as it is, as text;
- the summaries are said to be the log's own words, not a translation.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.console.browser.browser_pages import console_fixtures
from tests.console.browser.conftest_browser import BOT, CHAT, Seeded, build_vault, screenshot
from tests.console.browser.person_view_browser import (
    ALL_VIEWS,
    CJK,
    LANGS,
    MESSAGES,
    VIEWS,
    Page,
    choose_chat,
    expect,
    person_page,
)

FUTURE = "future_operation"  # what a newer MemVault might log: no name for it in this page
HOSTILE = '<img src=x onerror="window.__xss=1">'


def seed(root: Path) -> Seeded:
    """The browser suite's vault (remember, update_profile) plus archive, restore and forget by
    the real operations, and two lines of the log's own format the page has no name for."""
    from vault.files import audit
    from vault.layout.keys import ScopeId
    from vault.writes.operations import Vault

    seeded = build_vault(root)
    vault = Vault(seeded.root, git=True)
    scope = ScopeId(BOT, CHAT)
    vault.archive(scope, seeded.ids["standup"], source="console")
    vault.restore(scope, seeded.ids["standup"], source="console")
    vault.forget(scope, seeded.ids["doomed"])
    log = vault.layout.audit_path(scope)
    newer = audit.make_entry(FUTURE, "widget", "w_1", "from a newer MemVault", source="x")
    audit.append(log, newer)
    audit.append(log, audit.make_entry(HOSTILE, "episode", "ep_x", "hostile", source="user"))
    return seeded


seeded, console, browser = console_fixtures("console-audit-cards", seed)

# Per cell of every row: its box, its text's line boxes, whether its content is cut.
CELLS = """rows => rows.map(row => Array.from(row.querySelectorAll('td')).map(td => {
  const cell = td.querySelector('.cell') || td;
  const named = cell.querySelector('[data-value]');
  const range = document.createRange();
  range.selectNodeContents(named || cell);
  const lines = new Set(Array.from(range.getClientRects()).map(r => Math.round(r.top)));
  const box = td.getBoundingClientRect();
  return { cls: td.className, label: td.dataset.label || '', text: cell.textContent,
    value: named ? named.dataset.value : null, title: named ? named.title : null,
    tag: named ? named.tagName : null, left: box.left, right: box.right,
    lines: lines.size, cut: cell.scrollWidth > cell.clientWidth + 1 };
}))"""


def open_audit(page: Page) -> None:
    choose_chat(page, CHAT)
    page.get_by_test_id("tab-audit").click()
    expect(page.get_by_test_id("audit-row").first).to_be_visible()


@pytest.mark.parametrize(("width", "lang"), ALL_VIEWS)
def test_every_audit_line_is_readable_in_the_window(browser, console, width, lang):
    with person_page(browser, console.url, width, lang) as page:
        open_audit(page)
        answer = console.call("/audit", {"scope": {"bot": BOT, "session": CHAT}})
        logged = answer["items"]  # type: ignore[index]
        rows = page.get_by_test_id("audit-row")
        expect(rows).to_have_count(len(logged))
        window = VIEWS[width]["width"]
        wrap = page.get_by_test_id("audit-table")
        # Nothing hidden sideways: the walk-through's table was 549 px in a 366 px box.
        assert wrap.evaluate("el => el.scrollWidth <= el.clientWidth + 1"), "audit scrolls sideways"
        cells = rows.evaluate_all(CELLS)
        for row in cells:
            assert len(row) == 5, row
            for cell in row:
                assert cell["left"] >= 0 and cell["right"] <= window + 0.5, cell
                assert not cell["cut"], cell
                # A cell that names its column itself, in the reader's language (the card's
                # label on a narrow screen).
                column = cell["cls"].removeprefix("audit-")
                assert cell["label"] == MESSAGES[lang][f"audit_{column}"], cell
        operations = [row[1] for row in cells]
        named = [c for c in operations if c["value"] not in (FUTURE, HOSTILE)]
        assert len(named) >= 6, operations
        for cell in named:
            # One line: "remember" / "记住" never stacks a letter per line.
            assert cell["lines"] == 1, cell
            assert cell["tag"] == "SPAN" and cell["title"] == cell["value"], cell
            assert cell["text"] == MESSAGES[lang][f"audit_op_{cell['value']}"], cell
            assert bool(CJK.search(cell["text"])) == (lang == "zh_Hans"), cell
        if width == "390":
            # The rows are cards: the column header row is not what names the cells.
            expect(page.locator('[data-testid="audit-table"] thead')).not_to_be_in_viewport()
        else:
            headers = page.locator('[data-testid="audit-table"] th').all_inner_texts()
            assert headers == [
                MESSAGES[lang][f"audit_{k}"]
                for k in ("timestamp", "operation", "target", "summary", "source")
            ]
        screenshot(page, f"audit-cards-{width}-{lang}")


def name_of(lang: str, prefix: str, value: str) -> str:
    """What the page shows for a logged value: its name, or the value when it has none."""
    return MESSAGES[lang].get(prefix + value, value)


@pytest.mark.parametrize("lang", LANGS)
def test_audit_values_are_named_in_the_language_and_unknown_ones_kept(browser, console, lang):
    with person_page(browser, console.url, "390", lang) as page:
        open_audit(page)
        expect(page.get_by_test_id("audit-recorded-note")).to_have_text(
            MESSAGES[lang]["audit_recorded_note"]
        )
        answer = console.call("/audit", {"scope": {"bot": BOT, "session": CHAT}})
        logged = answer["items"]  # type: ignore[index]
        cells = page.get_by_test_id("audit-row").evaluate_all(CELLS)
        assert len(cells) == len(logged)
        kinds = {(e["operation"], e["target_type"], e["source"]) for e in logged}
        wanted = {("update_profile", "speaker_profile", "user"), ("archive", "episode", "console")}
        assert wanted <= kinds
        for entry, (_, op, target, summary, source) in zip(logged, cells, strict=True):
            # Each value named in the reader's language, the logged one kept in the title.
            assert op["value"] == entry["operation"], (entry, op)
            assert op["text"] == name_of(lang, "audit_op_", entry["operation"]), (entry, op)
            assert target["value"] == entry["target_type"], (entry, target)
            shown = name_of(lang, "audit_target_", entry["target_type"])
            assert target["text"] == shown + " " + entry["target_id"], (entry, target)
            assert source["value"] == entry["source"], (entry, source)
            assert source["text"].startswith(name_of(lang, "source_", entry["source"])), source
            # The summary is the log's own words, in every language.
            assert summary["text"] == entry["summary"], (entry, summary)
            known = entry["operation"] not in (FUTURE, HOSTILE)
            if lang == "zh_Hans" and known:  # no English word left for a name
                for cell in (op, target, source):
                    assert CJK.search(cell["text"].split(" ")[0]), cell
            if not known:  # no name for it: shown as logged, in <code>, as text
                assert op["tag"] == "CODE" and op["text"] == entry["operation"], op
        assert page.evaluate("window.__xss") is None
        assert page.locator('[data-testid="audit-table"] img').count() == 0
        screenshot(page, f"audit-names-390-{lang}")
