"""What the Candidates panel's browser tests share: the candidate files they review (one per
test, so none depends on another's decision), what each language shows, and the three
decisions as a person makes them in the page, each checked on disk and in the search."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from tests.console.browser.conftest_browser import (
    BOT,
    CHAT,
    Console,
    Seeded,
    build_vault,
    disk_text,
    eventually,
    screenshot,
)
from vault.candidates import Candidate, Evidence, write_candidates
from vault.format.model import Speaker
from vault.layout.keys import ScopeId
from vault.writes.operations import Vault

try:
    from playwright.sync_api import Locator, Page, expect
except ImportError:  # the tests' `browser` fixture fails, saying how to install it
    expect = None

WHEN = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)
CAROL = Speaker("u3", "Carol")
XIAOMING = Speaker("u9", "小明")

# name -> (proposed text, what the speaker said, speaker); one per test, so none depends on
# another's decision.
PROPOSALS: dict[str, tuple[str, str, Speaker]] = {
    "en_accept": (
        "Carol moves to Lisbon in June for a new job",
        "I'm moving to Lisbon in June, new job!",
        CAROL,
    ),
    "en_edit": (
        "Carol's dentist appointment is on Friday",
        "dentist on Friday, ugh",
        CAROL,
    ),
    "en_reject": ("Carol finds the weather gloomy today", "so gloomy today", CAROL),
    "zh_accept": ("小明下周三去杭州出差", "我下周三去杭州出差", XIAOMING),
    "zh_edit": ("老王周五请大家吃火锅", "老王说周五请大家吃火锅", XIAOMING),
    "zh_reject": ("小明今天心情不太好", "今天心情不太好", XIAOMING),
    "narrow_accept": ("Carol's sister Ines visits in August", "Ines visits in August", CAROL),
    "narrow_edit": ("Carol's bike is at the repair shop", "bike's in the shop", CAROL),
    "narrow_reject": ("Carol had toast for breakfast", "toast again lol", CAROL),
    "host_accept": ("Carol's team retro is every second Thursday", "retro 2nd Thu", CAROL),
    "host_stale": ("Carol plays the cello in a quartet", "cello practice tonight", CAROL),
    "markup": (
        'Markup stays text: <img src=x onerror="window.__xss=1"> <b>bold</b>',
        "<script>window.__xss=2</script>",
        CAROL,
    ),
    "secret": (
        "The office wifi password is hunter2secret and Carol set it up",
        "wifi password is hunter2secret",
        CAROL,
    ),
}
EDITED = {
    # The edited text goes through the vault's redaction like every write.
    "en_edit": (
        "Carol's dentist moved to Monday 9:00; portal password: Tooth-Fairy-42",
        "Carol's dentist moved to Monday 9:00; portal password: [redacted:password]",
    ),
    "zh_edit": ("老王改到周六晚上请大家吃火锅", "老王改到周六晚上请大家吃火锅"),
    "narrow_edit": ("Carol's bike is ready at Pedal Works", "Carol's bike is ready at Pedal Works"),
}
# What each language shows, for the texts the tests read.
SHOWN = {
    "en": {
        "tab": "Candidates",
        "accepted": "accepted",
        "rejected": "rejected",
        "accept": "Accept",
        "edit": "Edit then accept",
        "reject": "Reject",
        "toast_accept": "Accepted",
        "toast_reject": "Rejected",
        "redacted": "Redacted: password",
        "kind": "memory (L2)",
        "profile": "profile change (L1)",
    },
    "zh": {
        "tab": "候选记忆",
        "accepted": "已接受",
        "rejected": "已拒绝",
        "accept": "接受",
        "edit": "编辑后接受",
        "reject": "拒绝",
        "toast_accept": "已接受",
        "toast_reject": "已拒绝",
        "redacted": "已脱敏：password",
        "kind": "记忆（L2）",
        "profile": "画像修改（L1）",
    },
}
LANG_FILE = {"en": "en_US", "zh": "zh_Hans"}


def seed(root: Path) -> Seeded:
    """The browser suite's vault plus one candidate file per test, written through
    vault.candidates as extraction writes them."""
    seeded = build_vault(root)
    vault = Vault(seeded.root, git=True)
    scope = ScopeId(BOT, CHAT)
    proposals = [
        Candidate(
            id="",
            created_at=WHEN,
            kind="episode",
            body=text,
            speaker=speaker,
            evidence=Evidence(said, WHEN),
            proposed_by="fake-llm",
        )
        for text, said, speaker in PROPOSALS.values()
    ]
    profile = Candidate(
        id="",
        created_at=WHEN,
        kind="profile",
        body="Carol now prefers jasmine tea",
        speaker=CAROL,
        evidence=Evidence("I only drink jasmine tea now", WHEN),
        proposed_by="fake-llm",
        profile="speaker",
        field="preferences",
        key="drink",
        value="jasmine tea",
        previous="coffee",
    )
    written = write_candidates(vault, scope, [*proposals, profile])
    seeded.ids.update({f"cand_{name}": c.id for name, c in zip(PROPOSALS, written, strict=False)})
    seeded.ids["cand_profile"] = written[-1].id
    return seeded


def open_candidates(page: Page, lang: str, *, narrow: bool = False) -> None:
    if narrow:
        page.get_by_test_id("sidebar-toggle").click()
    page.locator(f'[data-testid="scope-item"][data-session="{CHAT}"]').click()
    expect(page.get_by_test_id("scope-title")).to_have_text(f"{BOT} / {CHAT}")
    page.get_by_test_id("lang-select").select_option(LANG_FILE[lang])
    tab = page.get_by_test_id("tab-candidates")
    expect(tab).to_have_text(SHOWN[lang]["tab"])
    tab.click()
    expect(page.get_by_test_id("candidate-card").first).to_be_visible()


def candidate(page: Page, seeded: Seeded, name: str) -> Locator:
    cid = seeded.ids[f"cand_{name}"]
    return page.locator(f'[data-testid="candidate-card"][data-id="{cid}"]')


def candidate_file(seeded: Seeded, name: str) -> Path:
    return seeded.chat_dir() / "candidates" / f"{seeded.ids[f'cand_{name}']}.md"


def found(console: Console, query: str) -> list[str]:
    """What the console's own search answers for this chat (text mode: word matches)."""
    body = {"scope": {"bot": BOT, "session": CHAT}, "query": query, "mode": "text"}
    return [i["content"] for i in console.call("/search", body)["items"]]  # type: ignore[index]


def search_in_page(page: Page, query: str) -> Locator:
    page.get_by_test_id("tab-episodes").click()
    page.get_by_test_id("search-input").fill(query)
    page.get_by_test_id("search-button").click()
    return page.get_by_test_id("episode-card")


def decided(card: Locator, lang: str, status: str) -> None:
    expect(card).to_have_attribute("data-status", status)
    expect(card.get_by_test_id("candidate-status")).to_have_text(SHOWN[lang][status])
    expect(card.get_by_test_id("candidate-accept")).to_have_count(0)  # no second decision
    expect(card.get_by_test_id("candidate-reject")).to_have_count(0)


def shot(page: Page, name: str) -> None:
    """A screenshot kept under test-artifacts/console/ (as the other browser tests do)."""
    assert screenshot(page, name).stat().st_size > 0


def fits(page: Page, viewport: dict[str, int]) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= viewport["width"], f"the page scrolls sideways ({width} px wide)"


# ---------------------------------------------------------------------------- done-when


def accept(page: Page, console: Console, seeded: Seeded, lang: str, name: str) -> None:
    text = PROPOSALS[name][0]
    assert text not in found(console, text)  # a proposal is never memory
    card = candidate(page, seeded, name)
    expect(card.get_by_test_id("candidate-text")).to_have_text(text)
    expect(card.get_by_test_id("candidate-accept")).to_have_text(SHOWN[lang]["accept"])
    card.get_by_test_id("candidate-accept").click()
    decided(card, lang, "accepted")
    expect(page.get_by_test_id("toast")).to_contain_text(SHOWN[lang]["toast_accept"])
    accepted_as = re.compile(r"ep_\d{8}_[0-9a-f]{6}")
    expect(card.get_by_test_id("candidate-decided")).to_contain_text(accepted_as)
    path = candidate_file(seeded, name)
    eventually(lambda: "status: accepted" in disk_text(path), "status: accepted on disk")
    console.wait_until_searchable(CHAT, text)
    expect(search_in_page(page, text).filter(has_text=text)).to_have_count(1)


def edit_then_accept(page: Page, console: Console, seeded: Seeded, lang: str, name: str) -> None:
    proposed = PROPOSALS[name][0]
    typed, stored = EDITED[name]
    card = candidate(page, seeded, name)
    card.get_by_test_id("candidate-edit").click()
    box = card.get_by_test_id("candidate-edit-text")
    expect(box).to_have_value(proposed)
    box.fill(typed)
    card.get_by_test_id("candidate-edit-save").click()
    decided(card, lang, "accepted")
    console.wait_until_searchable(CHAT, stored)
    assert proposed not in found(console, proposed)  # the proposal's own text was not stored
    expect(search_in_page(page, stored).filter(has_text=stored)).to_have_count(1)
    episodes = list((seeded.chat_dir() / "episodes").rglob("*.md"))
    bodies = [p.read_text(encoding="utf-8") for p in episodes]
    assert [b for b in bodies if stored in b] and not [b for b in bodies if proposed in b]
    assert "Tooth-Fairy-42" not in "".join(bodies) + disk_text(candidate_file(seeded, name))


def reject(page: Page, console: Console, seeded: Seeded, lang: str, name: str) -> None:
    text = PROPOSALS[name][0]
    card = candidate(page, seeded, name)
    expect(card.get_by_test_id("candidate-reject")).to_have_text(SHOWN[lang]["reject"])
    card.get_by_test_id("candidate-reject").click()
    decided(card, lang, "rejected")
    expect(page.get_by_test_id("toast")).to_contain_text(SHOWN[lang]["toast_reject"])
    assert float(card.evaluate("el => getComputedStyle(el).opacity")) < 1  # shown dimmed
    path = candidate_file(seeded, name)
    eventually(lambda: "status: rejected" in disk_text(path), "status: rejected on disk")
    assert text in disk_text(path)  # kept until purged
    assert text not in found(console, text)
    # Behind the filter: not among the pending ones, listed with the rejected ones.
    page.get_by_test_id("refresh").click()
    expect(card).to_have_count(0)
    page.get_by_test_id("candidate-status-filter").select_option("rejected")
    expect(card).to_have_attribute("data-status", "rejected")
