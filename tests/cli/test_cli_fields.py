"""`memvault remember` sets Synapse's fields and `list/search` filter by them (issue 14, item
2), run as a real subprocess like a person would, over a real vault and real indexes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.cli.test_cli import SCOPE, run_json
from tests.helpers.cli_run import memvault
from vault.format.yamlio import parse_datetime
from vault.layout.keys import ScopeId
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

CHAT = ScopeId("b1", "group_123")


@pytest.fixture
def cli_vault(tmp_path):
    root = tmp_path / "memory"
    memvault("init", str(root), "--no-git")
    return root


def remember(root, text, *options: str) -> str:
    return memvault("remember", text, *SCOPE, *options, env_vault=root).stdout.strip()


def test_remember_sets_every_field_and_the_file_says_so(cli_vault):
    before = datetime.now(UTC).replace(microsecond=0)  # the vault clock keeps whole seconds
    ep_id = remember(
        cli_vault,
        "Alice's visa appointment is on Monday",
        "--priority",
        "HIGH",
        "--expires-in",
        "30d",
        "--confidence",
        "0.8",
        "--category",
        "plan",
        "--tag",
        "Travel",
        "--tag",
        " travel ",
        "--tag",
        "visa",
        "--key",
        "alice_visa",
    )
    shown = run_json("show", ep_id, *SCOPE, vault=cli_vault)
    assert (shown["priority"], shown["category"], shown["key"]) == ("high", "plan", "alice_visa")
    assert shown["confidence"] == 0.8 and shown["tags"] == ["Travel", "visa"]
    expires = parse_datetime(shown["expires_at"])
    assert before + timedelta(days=30) <= expires <= datetime.now(UTC) + timedelta(days=30)
    text = (cli_vault / shown["path"]).read_text("utf-8")
    for line in ("priority: high", "confidence: 0.8", "category: plan", "key: alice_visa"):
        assert f"\n{line}\n" in text, text
    assert "\nexpires_at: " in text

    at = remember(cli_vault, "The lease ends", "--expires-at", "2099-06-30T18:00:00Z")
    assert run_json("show", at, *SCOPE, vault=cli_vault)["expires_at"] == "2099-06-30T18:00:00Z"


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (["--priority", "urgent"], "priority must be one of low, normal, high, critical"),
        (["--confidence", "1.5"], "confidence must be a number from 0 to 1"),
        (["--confidence", "sure"], "confidence must be a number from 0 to 1"),
        (["--confidence", "nan"], "confidence must be a number from 0 to 1"),
        (["--expires-in", "soon"], "duration 'soon' is not understood"),
        (["--expires-in", "0d"], "is zero"),
        (["--expires-at", "next week"], "expires_at must be an ISO 8601 time"),
        (["--expires-at", "2001-01-01"], "is not in the future"),
        (["--expires-in", "7d", "--expires-at", "2099-01-01"], "not both"),
    ],
)
def test_remember_refuses_a_bad_value_and_writes_nothing(cli_vault, options, says):
    proc = memvault("remember", "x", *SCOPE, *options, env_vault=cli_vault, code=2)
    assert says in proc.stderr, proc.stderr
    assert not list(cli_vault.glob("**/episodes/**/*.md"))


def _world(root) -> dict[str, str]:
    """Memories in the CLI's chat with one distinguishing field each, all matching "ferry"."""
    ids = {
        "tagged": remember(root, "ferry timetable for the island", "--tag", "Hobby"),
        "planned": remember(root, "ferry trip plan", "--category", "plan"),
        "urgent": remember(root, "ferry ticket refund", "--priority", "high"),
        "soon": remember(root, "ferry strike this week", "--expires-in", "3d"),
        "later": remember(root, "ferry summer schedule", "--expires-in", "30d"),
    }
    # The CLI writes as the person ("user": verified); an assistant's memory is not.
    ids["agent"] = (
        Vault(root, git=False).remember(NewEpisode(CHAT, "ferry seats guessed", source="agent")).id
    )
    return ids


FILTERS = [
    (["--tag", "hobby"], {"tagged"}),
    (["--tag", "HOBBY"], {"tagged"}),
    (["--tag", "hObBy", "--priority", "high"], set()),
    (["--category", "plan"], {"planned"}),
    (["--priority", "high"], {"urgent"}),
    (["--verified", "no"], {"agent"}),
    (["--verified", "yes"], {"tagged", "planned", "urgent", "soon", "later"}),
    (["--expiring-within", "7d"], {"soon"}),
    (["--expiring-within", "60d"], {"soon", "later"}),
]


def test_list_and_search_filter_by_every_field(cli_vault):
    ids = _world(cli_vault)
    names = {v: k for k, v in ids.items()}
    for options, want in FILTERS:
        listed = run_json("list", *SCOPE, *options, vault=cli_vault)
        assert {names[i["id"]] for i in listed["items"]} == want, options
        assert listed["total"] == len(want)
        found = run_json("search", "ferry", *SCOPE, "--top-k", "20", *options, vault=cli_vault)
        assert {names[i["id"]] for i in found} == want, options


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (["--verified", "maybe"], "verified filter must be yes or no"),
        (["--priority", "top"], "priority filter must be one of low, normal, high, critical"),
        (["--category", "gossip"], "category filter must be one of identity"),
        (["--expiring-within", "a week"], "is not understood"),
    ],
)
@pytest.mark.parametrize("command", [["list"], ["search", "ferry"]])
def test_list_and_search_refuse_a_bad_filter(cli_vault, command, options, says):
    proc = memvault(*command, *SCOPE, *options, env_vault=cli_vault, code=2)
    assert says in proc.stderr, proc.stderr


def test_a_search_filter_is_applied_before_the_top_k(cli_vault):
    vault = Vault(cli_vault, git=False)
    for i in range(30):
        vault.remember(NewEpisode(CHAT, f"ferry timetable {i}", source="user"))
    target = vault.remember(
        NewEpisode(
            CHAT,
            "lunch notes: the printer on floor two jams, the weather is grey, and someone took "
            "the ferry to work; the budget review moved to Thursday afternoon",
            tags=["Rare"],
            source="user",
            created_at=datetime.now(UTC) - timedelta(days=200),
        ),
    )
    top = run_json("search", "ferry", *SCOPE, "--top-k", "3", vault=cli_vault)
    assert target.id not in [i["id"] for i in top]  # it would not survive a post-filter
    found = run_json("search", "ferry", *SCOPE, "--top-k", "1", "--tag", "rare", vault=cli_vault)
    assert [i["id"] for i in found] == [target.id]
