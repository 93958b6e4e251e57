"""The console endpoints through the one dispatcher both hosts use, on a real vault, real
indexes and the embedded model: what a person at the console would see and change."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from console.api import ROUTES, dispatch
from console.context import ConsoleContext
from console.errors import ApiError
from tests.console.conftest import A, B, scope_body
from vault.writes.new_episode import NewEpisode
from vault.writes.snapshots import write_snapshot


def call(ctx: ConsoleContext, endpoint: str, **body: object) -> object:
    return dispatch(ctx, endpoint, body)


def error(ctx: ConsoleContext, endpoint: str, **body: object) -> ApiError:
    with pytest.raises(ApiError) as caught:
        dispatch(ctx, endpoint, body)
    return caught.value


def first(ctx: ConsoleContext, scope=A, **extra: object) -> dict:
    return call(ctx, "/episodes", scope=scope_body(scope), **extra)["items"][0]


# -- scope ids from the page are untrusted ------------------------------------------------


@pytest.mark.parametrize(
    ("bad", "field", "fix"),
    [
        ({"bot": "bot-a", "session": ".."}, "session", "path parts"),
        ({"bot": "..", "session": "group_1"}, "bot", "path parts"),
        ({"bot": "bot-a", "session": "group\x001"}, "session", "NUL"),
        ({"bot": "bot-a", "session": "g" * 5000}, "session", "at most 1024"),
        ({"bot": "bot-a", "session": ""}, "session", "missing"),
        ({"bot": "bot-a"}, "session", "missing"),
        ({"bot": 5, "session": "group_1"}, "bot", "must be a string"),
        (
            {"bot": "bot-a", "session": "group_1", "isolation": "everyone"},
            "isolation",
            "one of session, bot",
        ),
    ],
)
@pytest.mark.parametrize("endpoint", ["/episodes", "/profiles", "/audit", "/history"])
def test_bad_scope_ids_are_refused_with_a_reason(shared_ctx, bad, field, fix, endpoint):
    err = error(shared_ctx, endpoint, scope=bad)  # refused: nothing written, one ctx for all
    assert err.code == "bad_request" and err.status == 400
    # The message names the field to fix and the rule it broke, in a line a person reads:
    # the hostile value is not echoed back whole (5000 characters, a NUL).
    assert field in err.message and fix in err.message, err.message
    assert len(err.message) < 200 and "\x00" not in err.message, err.message


def test_traversal_looking_ids_stay_inside_their_own_folder(ctx):
    # `../bot-b` is a legal (odd) bot id: it is encoded into one folder name, so it can
    # only ever name an empty scope, never bot-b's chat.
    sneaky = {"bot": "../bot-b", "session": "person_9"}
    assert call(ctx, "/episodes", scope=sneaky)["total"] == 0
    found = call(ctx, "/search", scope=sneaky, query="spare key flowerpot")["items"]
    assert found == []
    # ...while the same query in bot-b's own chat does find it (the search works here).
    real = call(ctx, "/search", scope=scope_body(B), query="spare key flowerpot")["items"]
    assert [h["content"] for h in real][:1] == ["Bob hides the spare key under the blue flowerpot"]
    absolute = {"bot": "/etc", "session": "passwd"}
    assert call(ctx, "/profiles", scope=absolute)["session"]["exists"] is False


def test_unknown_endpoint_and_non_object_body(ctx):
    assert error(ctx, "/../etc/passwd").code == "not_found"
    with pytest.raises(ApiError) as caught:
        dispatch(ctx, "/episodes", ["not", "an", "object"])
    assert caught.value.code == "bad_request"


def test_every_scoped_endpoint_answers_only_from_its_scope(ctx):
    a, b = scope_body(A), scope_body(B)
    listed = call(ctx, "/episodes", scope=a)
    assert listed["total"] == 2
    assert all(i["path"].startswith("bots/bot-a/") for i in listed["items"])
    own = {"Alice is going to Beijing next week", "小明喜欢喝燕麦拿铁"}
    mine = call(ctx, "/search", scope=a, query="When is Alice going to Beijing?")["items"]
    assert mine and mine[0]["content"] == "Alice is going to Beijing next week"
    assert {h["content"] for h in mine} <= own
    # Bob's memory matches this query word for word in his chat, and never shows up in A's.
    leak = "spare key under the blue flowerpot"
    hits = call(ctx, "/search", scope=a, query=leak)["items"]
    assert {h["content"] for h in hits} <= own
    assert all(h["path"].startswith("bots/bot-a/sessions/group_1/") for h in hits)
    assert "flowerpot" in call(ctx, "/search", scope=b, query=leak)["items"][0]["content"]
    bob = first(ctx, B)
    assert error(ctx, "/episode", scope=a, id=bob["id"]).code == "not_found"
    assert error(ctx, "/episode/delete", scope=a, id=bob["id"]).code == "not_found"
    history = call(ctx, "/history", scope=a)["commits"]
    assert history and all(
        f.startswith("bots/bot-a/sessions/group_1/") for c in history for f in c["files"]
    )
    b_commit = call(ctx, "/history", scope=b)["commits"][0]["sha"]
    assert error(ctx, "/history/diff", scope=a, sha=b_commit).code == "not_found"
    audit = call(ctx, "/audit", scope=a)["items"]
    assert audit and all("Bob" not in e["summary"] for e in audit)
    exported = call(ctx, "/export", scope=a)
    assert {e["content"] for e in exported["episodes"]} == {
        "Alice is going to Beijing next week",
        "小明喜欢喝燕麦拿铁",
    }


# -- reading -----------------------------------------------------------------------------


def test_scopes_lists_bots_and_chats_with_counts(ctx):
    bots = {b["bot"]: b for b in call(ctx, "/scopes")["bots"]}
    assert set(bots) == {"bot-a", "bot-b"}
    (chat,) = bots["bot-a"]["chats"]
    assert chat == {
        "session": "group_1",
        "session_key": "bot-a:group_1",
        "folder": "bots/bot-a/sessions/group_1",
        "speakers": 1,
        "episodes": 2,
    }


def test_derive_turns_ids_into_keys_and_folders(ctx):
    out = call(
        ctx, "/derive", bot="bot-a", launcher_type="group", launcher_id="77", isolation="bot"
    )
    assert out["session_key"] == "bot-a:group_77"
    assert out["user_key"] == "bot:bot-a"
    assert out["episodes_folder"] == "bots/bot-a/episodes"
    assert out["profile_path"] == "bots/bot-a/sessions/group_77/profile.yaml"
    none = call(ctx, "/derive", session="person_5", isolation="bot")
    assert none["session_key"] == "person_5" and none["user_key"] == "global"
    assert error(ctx, "/derive", bot="bot-a").code == "bad_request"


def test_search_explains_each_score(ctx):
    items = call(ctx, "/search", scope=scope_body(A), query="Beijing trip")["items"]
    assert items[0]["content"] == "Alice is going to Beijing next week"
    explain = items[0]["explain"]
    assert explain["versions"]["fusion"].startswith("zconf")
    assert {"text", "vector"} <= set(explain["sources"])
    zh = call(ctx, "/search", scope=scope_body(A), query="燕麦拿铁", mode="text")["items"]
    assert zh[0]["content"] == "小明喜欢喝燕麦拿铁"
    assert error(ctx, "/search", scope=scope_body(A), query="x", top_k=500).code == "bad_request"


def test_injection_snapshot_is_per_chat(ctx):
    assert call(ctx, "/injection", scope=scope_body(A)) is None
    write_snapshot(ctx.vault.root, A, {"chars": 42, "episodes": ["ep_1"]})
    assert call(ctx, "/injection", scope=scope_body(A))["chars"] == 42
    assert call(ctx, "/injection", scope=scope_body(B)) is None


def test_audit_pages_newest_first(ctx):
    for i in range(5):
        ctx.vault.remember(NewEpisode(A, f"note number {i}"))
    page1 = call(ctx, "/audit", scope=scope_body(A), page_size=3)
    assert page1["total"] == 9 and page1["pages"] == 3
    assert page1["items"][0]["summary"] == "note number 4"
    page3 = call(ctx, "/audit", scope=scope_body(A), page_size=3, page=3)
    assert len(page3["items"]) == 3


def test_health_cards_and_probe(ctx, tmp_path):
    bad = ctx.vault.root / "bots/bot-a/sessions/group_1/episodes/2026/11/broken.md"
    bad.parent.mkdir(parents=True, exist_ok=True)
    bad.write_text("---\nimportance: [\n---\nbody\n", encoding="utf-8")
    before = bad.read_bytes()
    out = call(ctx, "/health", scope=scope_body(A))
    cards = {c["id"]: c for c in out["cards"]}
    assert cards["files"]["level"] == "amber" and out["level"] == "amber"
    assert cards["isolation"]["level"] == "green"
    assert any(p["path"].endswith("broken.md") and p["line"] >= 1 for p in out["problems"])
    listed = call(ctx, "/episodes", scope=scope_body(A))
    assert listed["total"] == 2  # the rest of the chat keeps working
    assert [p["path"].rsplit("/", 1)[1] for p in listed["problems"]] == ["broken.md"]
    assert bad.read_bytes() == before  # reported, never rewritten
    assert not any(p.name.startswith("__memvault") for p in (ctx.vault.root / "bots").iterdir())


# -- writing -----------------------------------------------------------------------------


def test_archive_restore_verify_edit_delete_round_trip(ctx):
    scope = scope_body(A)
    ep = first(ctx)
    archived = call(ctx, "/episode/archive", scope=scope, id=ep["id"], expected_sha256=ep["sha256"])
    assert archived["status"] == "archived"
    assert call(ctx, "/episodes", scope=scope)["total"] == 1
    restored = call(
        ctx, "/episode/restore", scope=scope, id=ep["id"], expected_sha256=archived["sha256"]
    )
    assert restored["status"] == "active"
    edited = call(
        ctx,
        "/episode/edit",
        scope=scope,
        id=ep["id"],
        content="小明改喝美式咖啡了",
        tags=["coffee", "update"],
        expected_sha256=restored["sha256"],
    )
    text = (ctx.vault.root / edited["path"]).read_text(encoding="utf-8")
    assert "小明改喝美式咖啡了" in text and "燕麦" not in text
    assert edited["tags"] == ["coffee", "update"] and edited["id"] == ep["id"]
    hits = call(ctx, "/search", scope=scope, query="美式咖啡", mode="text")["items"]
    assert hits and hits[0]["id"] == ep["id"]  # searchable as soon as the call returns
    ctx.vault.remember(NewEpisode(A, "an agent's guess", source="agent"))
    guess = first(ctx)
    assert guess["verified"] is False
    verified = call(
        ctx, "/episode/verify", scope=scope, id=guess["id"], expected_sha256=guess["sha256"]
    )
    assert verified["verified"] is True
    call(ctx, "/episode/delete", scope=scope, id=guess["id"], expected_sha256=verified["sha256"])
    assert not (ctx.vault.root / guess["path"]).exists()
    ops = [e["operation"] for e in call(ctx, "/audit", scope=scope)["items"][:6]]
    assert ops == ["forget", "verify", "remember", "edit", "restore", "archive"]
    assert all(e["source"] == "console" for e in call(ctx, "/audit", scope=scope)["items"][:1])


def test_edit_keeps_what_a_person_wrote_in_front_matter(ctx):
    ep = first(ctx)
    path = ctx.vault.root / ep["path"]
    text = path.read_text(encoding="utf-8").replace("---\n", "---\n# my note\nmood: sunny\n", 1)
    path.write_text(text, encoding="utf-8")
    fresh = call(ctx, "/episode", scope=scope_body(A), id=ep["id"])
    call(
        ctx,
        "/episode/edit",
        scope=scope_body(A),
        id=ep["id"],
        content="new text",
        expected_sha256=fresh["sha256"],
    )
    after = path.read_text(encoding="utf-8")
    assert "# my note\nmood: sunny\n" in after and after.rstrip().endswith("new text")


def test_profile_update_writes_the_yaml_file(ctx):
    view = call(ctx, "/profiles", scope=scope_body(A))
    session = view["session"]
    assert session["profile"]["name"] == "Project chat"
    (alice,) = view["speakers"]
    assert alice["speaker"] == "u1"
    out = call(
        ctx,
        "/profile/update",
        scope=scope_body(A),
        field="traits",
        action="add",
        value="plans trips early",
        expected_sha256=session["sha256"],
    )
    path = ctx.vault.root / session["path"]
    assert "plans trips early" in path.read_text(encoding="utf-8")
    assert out["sha256"] != session["sha256"] and out["profile"]["traits"] == ["plans trips early"]
    new = call(
        ctx,
        "/profile/update",
        scope=scope_body(A),
        speaker="u2",
        field="name",
        action="set",
        value="Bob",
        expected_sha256=None,
    )
    assert new["exists"] and new["path"].endswith("speakers/u2.yaml")


def test_edits_never_overwrite_a_change_the_page_has_not_seen(ctx):
    scope = scope_body(A)
    ep = first(ctx)
    path = ctx.vault.root / ep["path"]
    path.write_text(path.read_text(encoding="utf-8") + "\nadded by hand\n", encoding="utf-8")
    for endpoint, extra in [
        ("/episode/edit", {"content": "console text"}),
        ("/episode/archive", {}),
        ("/episode/verify", {}),
        ("/episode/delete", {}),
    ]:
        err = error(ctx, endpoint, scope=scope, id=ep["id"], expected_sha256=ep["sha256"], **extra)
        assert err.code == "conflict" and err.status == 409 and "reload" in err.message
    assert "added by hand" in path.read_text(encoding="utf-8")
    profile = call(ctx, "/profiles", scope=scope)["session"]
    prof_path = ctx.vault.root / profile["path"]
    prof_path.write_text(prof_path.read_text(encoding="utf-8") + "# hand comment\n", "utf-8")
    err = error(
        ctx,
        "/profile/update",
        scope=scope,
        field="notes",
        action="set",
        value="x",
        expected_sha256=profile["sha256"],
    )
    assert err.code == "conflict"
    assert str(ctx.vault.root) not in err.message and profile["path"] in err.message
    assert prof_path.read_text(encoding="utf-8").endswith("# hand comment\n")
    created = error(
        ctx,
        "/profile/update",
        scope=scope,
        speaker="u1",
        field="name",
        action="set",
        value="x",
        expected_sha256=None,
    )
    assert created.code == "conflict"
    assert error(ctx, "/episode/edit", scope=scope, id=ep["id"], content="x").code == "bad_request"


def test_concurrent_console_edits_one_wins_the_other_is_told(ctx):
    ep = first(ctx)
    results: list[object] = []

    def edit(text: str) -> None:
        try:
            results.append(
                call(
                    ctx,
                    "/episode/edit",
                    scope=scope_body(A),
                    id=ep["id"],
                    content=text,
                    expected_sha256=ep["sha256"],
                )
            )
        except ApiError as exc:
            results.append(exc)

    threads = [threading.Thread(target=edit, args=(f"version {i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wins = [r for r in results if isinstance(r, dict)]
    losses = [r for r in results if isinstance(r, ApiError)]
    assert len(wins) == 1 and len(losses) == 3
    assert all(e.code == "conflict" for e in losses)
    on_disk = Path(ctx.vault.root / ep["path"]).read_text(encoding="utf-8")
    assert wins[0]["content"] in on_disk


def test_export_then_import_into_another_chat(ctx):
    payload = call(ctx, "/export", scope=scope_body(A))
    target = {"bot": "bot-a", "session": "group_2"}
    out = call(ctx, "/import", scope=target, payload=payload)
    assert out["imported"] == 2
    again = call(ctx, "/import", scope=target, payload=payload)
    assert again["imported"] == 0 and again["skipped"] == 2
    assert error(ctx, "/import", scope=target, payload="nope").code == "bad_request"


def test_every_route_is_in_the_contract():
    contract = (Path(__file__).parents[2] / "console" / "API.md").read_text(encoding="utf-8")
    missing = [r for r in ROUTES if f"`{r}`" not in contract]
    assert missing == []
