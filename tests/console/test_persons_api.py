"""The console's people endpoints through the one dispatcher both hosts use, on a real vault
with git: the linked persons of the chat's bot, linking a sender id (refused, naming the
person, when it is someone else's already), unlinking, a malformed file shown as a problem
and never rewritten; and the page's control, in every language the page speaks."""

from __future__ import annotations

import json
import re

import pytest

from console.api import dispatch
from console.context import ConsoleContext
from console.errors import ApiError
from tests.conftest import git
from tests.console.conftest import A, B, scope_body
from tests.helpers.paths import REPO

WEB = REPO / "console" / "web"


def call(ctx: ConsoleContext, endpoint: str, **body: object) -> dict:
    return dispatch(ctx, endpoint, body)


def error(ctx: ConsoleContext, endpoint: str, **body: object) -> ApiError:
    with pytest.raises(ApiError) as caught:
        dispatch(ctx, endpoint, body)
    return caught.value


def test_link_list_and_unlink_a_person_of_the_chats_bot(ctx):
    assert call(ctx, "/persons", scope=scope_body(A)) == {
        "bot": "bot-a",
        "persons": [],
        "problems": [],
    }
    made = call(ctx, "/person/link", scope=scope_body(A), person="alice", sender="12345")
    assert made["changed"] == ["12345"] and made["person"]["senders"] == ["12345"]
    again = call(ctx, "/person/link", scope=scope_body(A), person="alice", sender="777000111")
    assert again["person"]["senders"] == ["12345", "777000111"]
    listed = call(ctx, "/persons", scope=scope_body(A))["persons"]
    assert [(p["id"], p["senders"], p["path"]) for p in listed] == [
        ("alice", ["12345", "777000111"], "bots/bot-a/persons/alice/person.yaml")
    ]
    assert call(ctx, "/persons", scope=scope_body(B))["persons"] == []  # another bot
    assert git(ctx.vault.root, "log", "-1", "--format=%s") == "link_person bot-a:group_1 alice\n"
    gone = call(ctx, "/person/unlink", scope=scope_body(A), sender="12345")
    assert gone["changed"] == ["12345"] and gone["person"]["senders"] == ["777000111"]
    missing = error(ctx, "/person/unlink", scope=scope_body(A), sender="12345")
    assert missing.code == "not_found" and "not linked" in missing.message


def test_a_sender_of_another_person_is_refused_naming_it(ctx):
    call(ctx, "/person/link", scope=scope_body(A), person="alice", sender="12345")
    refused = error(ctx, "/person/link", scope=scope_body(A), person="bob", sender="12345")
    assert refused.code == "bad_request" and "already linked to person 'alice'" in refused.message
    assert not (ctx.vault.root / "bots/bot-a/persons/bob").exists()


@pytest.mark.parametrize(
    ("field", "value"), [("sender", ".."), ("sender", "a\x00b"), ("person", ""), ("person", 3)]
)
def test_bad_ids_are_refused_and_nothing_is_written(ctx, field, value):
    body = {"scope": scope_body(A), "person": "alice", "sender": "12345", field: value}
    assert error(ctx, "/person/link", **body).code == "bad_request"
    assert not (ctx.vault.root / "bots/bot-a/persons").exists()


def test_a_malformed_person_file_is_a_problem_and_is_not_rewritten(ctx):
    path = ctx.vault.root / "bots/bot-a/persons/alice/person.yaml"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"senders: 12345\n")
    listed = call(ctx, "/persons", scope=scope_body(A))
    assert listed["persons"] == []
    (problem,) = listed["problems"]
    assert problem["path"] == "bots/bot-a/persons/alice/person.yaml"
    refused = error(ctx, "/person/link", scope=scope_body(A), person="alice", sender="1")
    assert refused.code == "bad_request" and "fix that file first" in refused.message
    assert path.read_bytes() == b"senders: 12345\n"


def test_the_page_links_and_unlinks_through_these_endpoints_in_every_language():
    """events.js calls each endpoint and names only messages every language has."""
    script = (WEB / "events.js").read_text("utf-8")
    for endpoint in ("/persons", "/person/link", "/person/unlink"):
        assert f"MV.call('{endpoint}'" in script
    keys = set(re.findall(r"'(per_\w+)'", script))
    assert {"per_title", "per_link", "per_unlink", "per_done_link", "per_none"} <= keys
    for path in sorted((WEB / "i18n").glob("*.json")):
        messages = json.loads(path.read_text("utf-8"))
        assert sorted(keys - set(messages)) == [], path.name
        assert set(re.findall(r"\{(\w+)\}", messages["per_done_link"])) == {"sender", "person"}
