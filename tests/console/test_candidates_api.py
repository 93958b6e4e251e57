"""The console's candidate endpoints through the one dispatcher both hosts use, on a real
vault (git on), real indexes and the embedded model, with candidate files written by
vault.candidates (what extraction writes; no LLM needed): list, accept, edit then accept,
reject, and what is refused (another chat's id, a stale page, bad input)."""

from __future__ import annotations

import string
from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from console.api import dispatch
from console.context import ConsoleContext
from console.errors import ApiError
from tests.conftest import git
from tests.console.conftest import A, B, scope_body
from vault.candidates import Candidate, Evidence, write_candidates
from vault.format.model import Speaker
from vault.redaction.redact import redact

WHEN = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)
ALICE = Speaker("u1", "Alice")
PLAN = "Alice flies to Tokyo on 12 March for the robotics fair"


def call(ctx: ConsoleContext, endpoint: str, **body: object) -> dict:
    return dispatch(ctx, endpoint, body)


def error(ctx: ConsoleContext, endpoint: str, **body: object) -> ApiError:
    with pytest.raises(ApiError) as caught:
        dispatch(ctx, endpoint, body)
    return caught.value


def propose(ctx: ConsoleContext, scope=A, **kw: object) -> dict:
    """One pending candidate file written the way extraction writes it; its console item."""
    fields: dict[str, object] = {
        "id": "",
        "created_at": WHEN,
        "kind": "episode",
        "body": PLAN,
        "speaker": ALICE,
        "evidence": Evidence("I fly to Tokyo on March 12 for the robotics fair", WHEN),
        "proposed_by": "fake-llm",
        "tags": ("travel",),
    }
    (written,) = write_candidates(ctx.vault, scope, [Candidate(**(fields | kw))])
    items = call(ctx, "/candidates", scope=scope_body(scope), status="all")["items"]
    return next(i for i in items if i["id"] == written.id)


def search(ctx: ConsoleContext, query: str, scope=A) -> list[str]:
    items = call(ctx, "/search", scope=scope_body(scope), query=query, mode="text")["items"]
    return [i["content"] for i in items]


def commits(ctx: ConsoleContext) -> int:
    return int(git(ctx.vault.root, "rev-list", "--count", "HEAD").strip())


def head_files(ctx: ConsoleContext) -> set[str]:
    return set(git(ctx.vault.root, "show", "--name-only", "--format=", "HEAD").split())


def decide(ctx: ConsoleContext, action: str, item: dict, scope=A, **extra: object) -> dict:
    body = {"scope": scope_body(scope), "id": item["id"], "expected_sha256": item["sha256"]}
    return call(ctx, f"/candidate/{action}", **(body | extra))


# -- listing -------------------------------------------------------------------------------


def test_list_is_pending_first_with_a_status_filter_and_pages(ctx):
    old = propose(ctx, body="Bob moved the standup to 10:30", created_at=WHEN.replace(day=2))
    decide(ctx, "reject", old)
    newer = propose(ctx, body="Alice's sister is called Mei", created_at=WHEN.replace(day=3))
    plan = propose(ctx)
    listed = call(ctx, "/candidates", scope=scope_body(A))
    assert [i["id"] for i in listed["items"]] == [newer["id"], plan["id"]]  # pending, newest 1st
    assert listed["counts"] == {"pending": 2, "accepted": 0, "rejected": 1}
    every = call(ctx, "/candidates", scope=scope_body(A), status="all")
    # The rejected one is the newest but no decision is left on it: it comes after.
    assert [i["status"] for i in every["items"]] == ["pending", "pending", "rejected"]
    only = call(ctx, "/candidates", scope=scope_body(A), status="rejected")["items"]
    assert [(i["id"], i["text"]) for i in only] == [(old["id"], "Bob moved the standup to 10:30")]
    second = call(ctx, "/candidates", scope=scope_body(A), status="all", page=2, page_size=2)
    assert (second["total"], second["pages"], [i["id"] for i in second["items"]]) == (
        3,
        2,
        [old["id"]],
    )
    item = plan
    assert (item["kind"], item["speaker"], item["proposed_by"]) == (
        "episode",
        {"id": "u1", "name": "Alice"},
        "fake-llm",
    )
    assert (
        item["evidence"].startswith("I fly to Tokyo")
        and item["evidence_at"] == "2026-03-01T09:30:00Z"
    )
    assert item["path"].startswith("bots/bot-a/sessions/group_1/candidates/")
    assert len(item["sha256"]) == 64


def test_a_redacted_proposal_says_so_and_holds_no_secret(ctx):
    item = propose(ctx, body="The wifi password is hunter2secret for the office")
    assert item["redacted"] == ["password"]
    assert "hunter2secret" not in item["text"] and "[redacted:password]" in item["text"]


def test_a_malformed_candidate_file_is_reported_and_the_rest_still_listed(ctx):
    plan = propose(ctx)
    broken = ctx.vault.layout.candidates_dir(A) / "cand_broken.md"
    broken.write_text("---\nid: cand_broken\nkind: [unclosed\n---\nhi\n", encoding="utf-8")
    listed = call(ctx, "/candidates", scope=scope_body(A))
    assert [i["id"] for i in listed["items"]] == [plan["id"]]
    assert [p["path"] for p in listed["problems"]] == [
        "bots/bot-a/sessions/group_1/candidates/cand_broken.md"
    ]
    assert broken.read_text(encoding="utf-8").startswith("---\nid: cand_broken\nkind: [unclosed")


# -- deciding ------------------------------------------------------------------------------


def test_accept_makes_it_a_searchable_memory_in_one_commit(ctx):
    item = propose(ctx)
    assert PLAN not in search(ctx, "Tokyo robotics fair")  # a proposal is never memory
    before = commits(ctx)
    done = decide(ctx, "accept", item)
    assert commits(ctx) == before + 1
    episode = done["episode"]
    assert (episode["content"], episode["source"], episode["verified"]) == (PLAN, "candidate", True)
    assert done["candidate"]["status"] == "accepted"
    assert done["candidate"]["accepted_as"] == episode["id"]
    assert {episode["path"], item["path"]} <= head_files(ctx)  # the memory and the decision
    assert search(ctx, "Tokyo robotics fair")[:1] == [PLAN]
    audit = call(ctx, "/audit", scope=scope_body(A))["items"]
    assert ("accept_candidate", "console") in {(a["operation"], a["source"]) for a in audit}
    assert call(ctx, "/candidates", scope=scope_body(A))["items"] == []


def test_edit_then_accept_stores_the_edited_text_redacted(ctx):
    item = propose(ctx)
    edited = "Alice flies to Osaka on 14 March; the booking password: kite-Flyer-88"
    done = decide(ctx, "accept", item, text=edited)
    stored = ctx.vault.find_episode(A, done["episode"]["id"])
    body = stored.episode.body
    assert body == "Alice flies to Osaka on 14 March; the booking password: [redacted:password]"
    assert "kite-Flyer-88" not in stored.path.read_text(encoding="utf-8")
    assert "kite-Flyer-88" not in git(ctx.vault.root, "log", "-p", "--all")
    assert search(ctx, "Osaka")[:1] == [body]
    assert PLAN not in search(ctx, "Tokyo robotics fair")  # the proposed text was not stored


def test_reject_keeps_it_out_of_memory_and_marks_the_file(ctx):
    item = propose(ctx)
    before = commits(ctx)
    done = decide(ctx, "reject", item)
    assert commits(ctx) == before + 1
    assert done["episode"] is None and done["candidate"]["status"] == "rejected"
    path = ctx.vault.root / item["path"]
    assert "status: rejected" in path.read_text(encoding="utf-8")  # kept until purged
    assert PLAN not in search(ctx, "Tokyo robotics fair")
    assert call(ctx, "/episodes", scope=scope_body(A), status="all")["total"] == 2  # as seeded
    again = error(ctx, "/candidate/accept", **_body(done["candidate"]))
    assert again.status == 400 and "already rejected" in again.message


def test_edit_then_accept_a_profile_change_writes_the_edited_value(ctx):
    item = propose(
        ctx,
        kind="profile",
        body="Alice now prefers green tea",
        profile="speaker",
        field="preferences",
        key="drink",
        value="green tea",
    )
    done = decide(ctx, "accept", item, value="jasmine green tea")
    assert done["episode"] is None and done["candidate"]["accepted_as"] == "profile:speaker:u1"
    speakers = call(ctx, "/profiles", scope=scope_body(A))["speakers"]
    alice = next(p for p in speakers if p["speaker"] == "u1")
    assert "drink: jasmine green tea" in alice["profile"]["preferences"]


def test_with_bot_isolation_the_chat_reviews_its_own_and_accepts_into_the_shared_pool(ctx):
    item = propose(ctx)
    shared = {**scope_body(A), "isolation": "bot"}
    listed = call(ctx, "/candidates", scope=shared)["items"]
    assert [i["id"] for i in listed] == [item["id"]]  # the chat's own folder, either way
    done = call(
        ctx, "/candidate/accept", scope=shared, id=item["id"], expected_sha256=item["sha256"]
    )
    assert done["episode"]["path"].startswith("bots/bot-a/episodes/")
    hits = call(ctx, "/search", scope=shared, query="Tokyo robotics fair", mode="text")["items"]
    assert [h["content"] for h in hits][:1] == [PLAN]


def _body(item: dict, scope=A) -> dict:
    return {"scope": scope_body(scope), "id": item["id"], "expected_sha256": item["sha256"]}


# -- refused -------------------------------------------------------------------------------


@pytest.mark.parametrize("action", ["accept", "reject"])
def test_another_chats_candidate_is_not_found_and_never_touched(ctx, action):
    theirs = propose(ctx, B, body="Bob's locker code is behind the blue flowerpot")
    path = ctx.vault.root / theirs["path"]
    before, count = path.read_bytes(), commits(ctx)
    err = error(ctx, f"/candidate/{action}", **(_body(theirs) | {"scope": scope_body(A)}))
    assert (err.code, err.status) == ("not_found", 404)
    assert theirs["id"] in err.message and "group_1" in err.message  # says where it looked
    assert path.read_bytes() == before and commits(ctx) == count
    assert call(ctx, "/candidates", scope=scope_body(A), status="all")["items"] == []
    assert "flowerpot" not in str(search(ctx, "Bob locker blue flowerpot"))


@pytest.mark.parametrize("action", ["accept", "reject"])
def test_a_decision_over_a_file_changed_since_it_was_shown_is_refused(ctx, action):
    item = propose(ctx)
    path = ctx.vault.root / item["path"]
    hand = path.read_text(encoding="utf-8").replace("robotics fair", "robotics fair (hotel booked)")
    path.write_text(hand, encoding="utf-8")  # a person's edit the page has not seen
    count = commits(ctx)
    err = error(ctx, f"/candidate/{action}", **_body(item))
    assert (err.code, err.status) == ("conflict", 409)
    assert "changed on disk" in err.message and "reload" in err.message
    assert path.read_text(encoding="utf-8") == hand and commits(ctx) == count
    assert call(ctx, "/episodes", scope=scope_body(A), status="all")["total"] == 2
    # After a reload the person decides on what is there now.
    fresh = propose_reload(ctx, item["id"])
    assert "hotel booked" in fresh["text"]
    done = decide(ctx, action, fresh)
    assert done["candidate"]["status"] == ("accepted" if action == "accept" else "rejected")


def propose_reload(ctx: ConsoleContext, cid: str) -> dict:
    items = call(ctx, "/candidates", scope=scope_body(A), status="all")["items"]
    return next(i for i in items if i["id"] == cid)


@pytest.mark.parametrize(
    ("change", "fix"),
    [
        ({"expected_sha256": None}, "`expected_sha256` is missing"),
        ({"expected_sha256": "abc"}, "64-hex sha256"),
        ({"text": ""}, "`text` is empty"),
        ({"text": "   \n "}, "`text` is empty"),
        ({"text": 42}, "`text` must be a string"),
        ({"text": "ghp_abcdefghijklmnopqrstuvwxyz0123456789"}, "only a secret"),
        ({"value": "tea"}, "only a profile candidate has a value"),
        ({"id": "../../b/cand_1"}, "candidate id"),
        ({"id": ""}, "`id` is missing"),
    ],
)
def test_bad_input_is_refused_saying_what_to_fix_and_changes_nothing(ctx, change, fix):
    item = propose(ctx)
    path = ctx.vault.root / item["path"]
    before, count = path.read_bytes(), commits(ctx)
    body = _body(item) | change
    err = error(ctx, "/candidate/accept", **{k: v for k, v in body.items() if v is not None})
    assert (err.code, err.status) == ("bad_request", 400)
    assert fix in err.message, err.message
    assert path.read_bytes() == before and commits(ctx) == count


def test_a_bad_status_filter_names_the_choices(ctx):
    err = error(ctx, "/candidates", scope=scope_body(A), status="maybe")
    assert err.status == 400 and "pending, all, accepted, rejected" in err.message


# -- classes of input ----------------------------------------------------------------------

_WORDS = st.text(
    alphabet=string.ascii_letters + string.digits + " ,.;'-" + "周末去上海看展览", min_size=1
)
_SECRET = st.text(alphabet=string.ascii_letters + string.digits, min_size=8, max_size=16)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(words=_WORDS.filter(lambda s: any(c.isalnum() for c in s)), secret=st.none() | _SECRET)
def test_any_edited_text_is_stored_as_typed_with_secrets_replaced(ctx, words, secret):
    """Whatever a person types, the memory holds the text as typed (trimmed), with the
    vault's redaction applied and never a secret."""
    assume(secret is None or secret not in words)
    text = words if secret is None else f"{words} password: {secret}"
    done = decide(ctx, "accept", propose(ctx), text=text)
    stored = ctx.vault.find_episode(A, done["episode"]["id"])
    assert stored.episode.body == done["episode"]["content"] == redact(text.strip()).text
    assert redact(stored.episode.body).kinds == ()
    if secret is not None:
        assert secret not in stored.path.read_text(encoding="utf-8")
        assert "[redacted:password]" in stored.episode.body


@pytest.fixture
def theirs(ctx: ConsoleContext) -> dict:
    """One of B's candidates (a fixture: the same one for every example of a test)."""
    return propose(ctx, B, body="Bob keeps the spare key under the blue flowerpot")


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(cid=st.text(min_size=1, max_size=80) | st.just("THEIRS"))
def test_any_id_from_the_page_only_ever_reaches_this_chats_folder(ctx, theirs, cid):
    cid = theirs["id"] if cid == "THEIRS" else cid
    path = ctx.vault.root / theirs["path"]
    before = path.read_bytes()
    for action in ("accept", "reject"):
        body = {"scope": scope_body(A), "id": cid, "expected_sha256": "0" * 64}
        err = error(ctx, f"/candidate/{action}", **body)
        assert err.status in (400, 404), err.message
    assert path.read_bytes() == before
