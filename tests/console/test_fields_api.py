"""The console creates and edits memories with Synapse's fields and filters its list and its
search by them (issue 14, item 2): through the one dispatcher, on a real vault (git on),
real indexes and the embedded model."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.console.conftest import A, B, scope_body
from tests.console.test_api import call, error
from vault.files import audit
from vault.format.yamlio import parse_datetime
from vault.writes.new_episode import NewEpisode


def create(ctx, scope=A, **body):
    return call(ctx, "/episode/create", scope=scope_body(scope), **body)


def test_create_sets_every_field_as_a_verified_memory(ctx):
    before = datetime.now(UTC).replace(microsecond=0)
    made = create(
        ctx,
        content="Alice is allergic to peanuts",
        tags=["Health", "HEALTH", "food"],
        category="fact",
        key="alice_allergy",
        priority="critical",
        confidence=0.9,
        expires_in="30d",
    )
    assert (made["priority"], made["category"], made["key"]) == (
        "critical",
        "fact",
        "alice_allergy",
    )
    assert made["tags"] == ["Health", "food"] and made["confidence"] == 0.9
    assert made["verified"] is True and made["source"] == "console"
    expires = parse_datetime(made["expires_at"])
    assert before + timedelta(days=30) <= expires <= datetime.now(UTC) + timedelta(days=30)
    text = (ctx.vault.root / made["path"]).read_text("utf-8")
    assert "\npriority: critical\n" in text and "\nconfidence: 0.9\n" in text
    (entry,) = [
        e for e in audit.read(ctx.vault.layout.audit_path(A))[0] if e.target_id == made["id"]
    ]
    assert (entry.operation, entry.source) == ("remember", "console")

    at = create(ctx, content="The lease ends", expires_at="2099-06-30T18:00:00Z")
    assert at["expires_at"] == "2099-06-30T18:00:00Z" and at["priority"] == "normal"


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"priority": "urgent"}, "priority must be one of low, normal, high, critical"),
        ({"confidence": 7}, "confidence must be a number from 0 to 1"),
        ({"confidence": "high"}, "confidence must be a number from 0 to 1"),
        ({"expires_in": "soon"}, "duration 'soon' is not understood"),
        ({"expires_at": "2001-01-01"}, "is not in the future"),
        ({"expires_at": "2099-01-01", "expires_in": "1d"}, "not both"),
        ({"category": "gossip"}, "category must be one of identity"),
        ({"tags": "travel"}, "`tags` must be a list of strings"),
        ({"content": ""}, "`content` is missing"),
    ],
)
def test_create_refuses_a_bad_value_and_writes_nothing(ctx, body, says):
    before = call(ctx, "/episodes", scope=scope_body(A))["total"]
    err = error(ctx, "/episode/create", scope=scope_body(A), **{"content": "x", **body})
    assert err.code == "bad_request" and says in err.message, err.message
    assert call(ctx, "/episodes", scope=scope_body(A))["total"] == before


def test_edit_changes_and_clears_the_fields(ctx):
    made = create(ctx, content="Bob's exam is in May", category="plan", key="bob_exam")
    edited = call(
        ctx,
        "/episode/edit",
        scope=scope_body(A),
        id=made["id"],
        expected_sha256=made["sha256"],
        priority="high",
        confidence="0.6",
        expires_in="7d",
        category="",
    )
    assert (edited["priority"], edited["confidence"], edited["category"]) == ("high", 0.6, None)
    assert edited["key"] == "bob_exam" and edited["expires_at"] is not None  # key left out
    assert edited["content"] == "Bob's exam is in May"
    cleared = call(
        ctx,
        "/episode/edit",
        scope=scope_body(A),
        id=made["id"],
        expected_sha256=edited["sha256"],
        expires_at=None,
        key="",
    )
    assert cleared["expires_at"] is None and cleared["key"] is None
    assert cleared["priority"] == "high"
    err = error(
        ctx,
        "/episode/edit",
        scope=scope_body(A),
        id=made["id"],
        expected_sha256=cleared["sha256"],
        priority="top",
    )
    assert err.code == "bad_request" and "priority must be one of" in err.message
    assert call(ctx, "/episode", scope=scope_body(A), id=made["id"])["sha256"] == cleared["sha256"]


def test_list_and_search_filter_inside_the_chat(ctx):
    ids = {
        "hobby": create(ctx, content="ferry timetable", tags=["Hobby"])["id"],
        "plan": create(ctx, content="ferry trip plan", category="plan")["id"],
        "high": create(ctx, content="ferry refund", priority="high")["id"],
        "soon": create(ctx, content="ferry strike", expires_in="3d")["id"],
    }
    ids["agent"] = ctx.vault.remember(NewEpisode(A, "ferry seats guessed", source="agent")).id
    create(ctx, scope=B, content="ferry timetable", tags=["hobby"])  # another chat: never
    names = {v: k for k, v in ids.items()}
    # The fixture's own two memories of chat A were stored by an assistant: unverified.
    cases = [
        ({"tags": ["HOBBY"]}, {"hobby"}),
        ({"category": "plan"}, {"plan"}),
        ({"priority": "high"}, {"high"}),
        ({"verified": False}, {"agent", "fixture"}),
        ({"verified": "yes"}, {"hobby", "plan", "high", "soon"}),
        ({"expiring_within": "7d"}, {"soon"}),
        ({"tags": ["hobby"], "priority": "high"}, set()),
    ]
    for filters, want in cases:
        listed = call(ctx, "/episodes", scope=scope_body(A), **filters)
        got = [names.get(i["id"], "fixture") for i in listed["items"]]
        assert set(got) == want and listed["total"] == len(got), filters
        assert got.count("fixture") in (0, 2)
        found = call(ctx, "/search", scope=scope_body(A), query="ferry", top_k=50, **filters)
        assert {names.get(i["id"], "fixture") for i in found["items"]} <= want, filters
        assert {names[i["id"]] for i in found["items"] if i["id"] in names} == want - {"fixture"}
    err = error(ctx, "/search", scope=scope_body(A), query="ferry", verified="perhaps")
    assert err.code == "bad_request" and "verified filter must be yes or no" in err.message
