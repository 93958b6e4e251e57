"""The console's key-event endpoints through the one dispatcher both hosts use, on a real
vault with git: the people of the chat's bot, one person's events with their history,
closing with the sha256 the page showed, and what is refused (another person's or another
bot's id, a stale page, bad input). Plus the page's messages in both languages."""

from __future__ import annotations

import json

import pytest

from console.api import dispatch
from console.context import ConsoleContext
from console.errors import ApiError
from tests.conftest import git
from tests.console.conftest import A, B, scope_body
from tests.helpers.paths import REPO
from vault.events import STATUS_FILTERS, Actor, open_event, parse_event_types, update_event
from vault.events.event_file import EVENT_STATUSES, HISTORY_KINDS
from vault.files import audit

TYPES = parse_event_types(["appointment: a booked visit", "complaint: unhappy"])
WEB = REPO / "console" / "web"


def call(ctx: ConsoleContext, endpoint: str, **body: object) -> dict:
    return dispatch(ctx, endpoint, body)


def error(ctx: ConsoleContext, endpoint: str, **body: object) -> ApiError:
    with pytest.raises(ApiError) as caught:
        dispatch(ctx, endpoint, body)
    return caught.value


@pytest.fixture
def opened(ctx):
    alice = Actor("bot-a", "u1", "Alice", "group_1")
    dentist = open_event(ctx.vault, alice, "appointment", "Dentist on Tuesday", TYPES)
    update_event(ctx.vault, Actor("bot-a", "u1", "Alice", "person_u1"), dentist.event.id, "Wed")
    soup = open_event(
        ctx.vault, Actor("bot-a", "u:2", "Bob", "group_1"), "complaint", "soup", TYPES
    )
    other = open_event(ctx.vault, Actor("bot-b", "u1", None, "person_9"), "complaint", "b's", TYPES)
    return dentist, soup, other


def test_the_people_of_the_chats_bot_and_one_persons_events(ctx, opened):
    dentist, soup, other = opened
    people = call(ctx, "/events/people", scope=scope_body(A))
    assert people["people"] == [
        {"speaker": "u1", "open": 1, "closed": 0, "problems": 0},
        {"speaker": "u:2", "open": 1, "closed": 0, "problems": 0},
    ]
    assert [p["speaker"] for p in call(ctx, "/events/people", scope=scope_body(B))["people"]] == [
        "u1"
    ]
    mine = call(ctx, "/events", scope=scope_body(A), speaker="u1")
    (item,) = mine["items"]
    assert (item["id"], item["summary"], item["status"]) == (
        dentist.event.id,
        "Dentist on Tuesday",
        "open",
    )
    assert [(h["kind"], h["chat"], h["text"]) for h in item["history"]] == [
        ("opened", "group_1", "Dentist on Tuesday"),
        ("note", "person_u1", "Wed"),
    ]
    assert mine["counts"] == {"open": 1, "closed": 0} and mine["problems"] == []
    # the same sender id with another bot is another person's folder
    (theirs,) = call(ctx, "/events", scope=scope_body(B), speaker="u1")["items"]
    assert theirs["id"] == other.event.id


def test_closing_needs_the_version_shown_and_is_audited_and_committed(ctx, opened):
    dentist, _, _ = opened
    (item,) = call(ctx, "/events", scope=scope_body(A), speaker="u1")["items"]
    stale = error(
        ctx,
        "/event/close",
        scope=scope_body(A),
        speaker="u1",
        id=item["id"],
        resolution="done",
        expected_sha256="0" * 64,
    )
    assert stale.code == "conflict"
    head = git(ctx.vault.root, "rev-parse", "HEAD").strip()
    done = call(
        ctx,
        "/event/close",
        scope=scope_body(A),
        speaker="u1",
        id=item["id"],
        resolution="No cavities",
        expected_sha256=item["sha256"],
    )
    assert (done["event"]["status"], done["event"]["resolution"]) == ("closed", "No cavities")
    assert git(ctx.vault.root, "rev-list", "--count", f"{head}..HEAD").strip() == "1"
    last = audit.read(ctx.vault.layout.person_audit_path("bot-a", "u1"))[0][-1]
    assert (last.operation, last.source, last.target_id) == ("close_event", "console", item["id"])
    closed = call(ctx, "/events", scope=scope_body(A), speaker="u1", status="closed")
    assert [i["id"] for i in closed["items"]] == [dentist.event.id]
    again = error(
        ctx,
        "/event/close",
        scope=scope_body(A),
        speaker="u1",
        id=item["id"],
        resolution="twice",
        expected_sha256=done["event"]["sha256"],
    )
    assert again.code == "bad_request" and "already closed" in again.message


def test_another_persons_or_bots_event_is_not_found_and_bad_input_is_refused(ctx, opened):
    dentist, soup, other = opened
    for scope, speaker, eid in (
        (A, "u1", soup.event.id),
        (A, "u1", other.event.id),
        (B, "u1", dentist.event.id),
    ):
        refused = error(
            ctx,
            "/event/close",
            scope=scope_body(scope),
            speaker=speaker,
            id=eid,
            resolution="x",
            expected_sha256="a" * 64,
        )
        assert refused.code == "not_found", (scope, eid)
    for body, words in (
        ({"speaker": ".."}, "not allowed"),
        ({"speaker": "u1", "status": "bogus"}, "`status` must be one of open, closed, all"),
        ({}, "`speaker` is missing"),
    ):
        refused = error(ctx, "/events", scope=scope_body(A), **body)
        assert refused.code == "bad_request" and words in refused.message, refused.message
    missing = error(
        ctx, "/event/close", scope=scope_body(A), speaker="u1", id=dentist.event.id, resolution="x"
    )
    assert missing.code == "bad_request" and "expected_sha256" in missing.message
    assert "status: open" in dentist.path.read_text(encoding="utf-8")


@pytest.mark.parametrize("lang", ["en_US", "zh_Hans"])
def test_the_events_panel_has_a_message_for_every_state_the_vault_writes(lang):
    """events.js builds these keys from what /events answers: each status, filter and
    history entry kind vault.events knows."""
    have = json.loads((WEB / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))
    wanted = [
        "tab_events",
        *(f"evt_status_{s}" for s in EVENT_STATUSES),
        *(f"evt_filter_{s}" for s in STATUS_FILTERS),
        *(f"evt_none_{s}" for s in STATUS_FILTERS),
        *(f"evt_kind_{k}" for k in HISTORY_KINDS),
    ]
    assert [k for k in wanted if k not in have] == []
    assert 'src="./events.js"' in (WEB / "index.html").read_text(encoding="utf-8")
