"""The shell's `--linked-people` (the plugin's setting linked_people) end to end, through the
console script's own main() over a real vault with git and real indexes (tiny TEST FAKE
embedder): `events list` shows a linked person's events from all its sender ids, `search`
ranks the person's memories in the chat as the speaker's; without the flag, and for the
person's ids on another bot, nothing crosses. `check` reports a malformed person file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli_run import run_main
from vault.events import Actor, open_event, parse_event_types
from vault.persons import link
from vault.writes.create import init_vault
from vault.writes.operations import Vault

TYPES = parse_event_types(["appointment: a booked visit"])
QQ, TG = "12345", "777000111"


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    init_vault(tmp_path / "v", git=True)
    made = Vault(tmp_path / "v", git=True)
    link(made, "bot-1", "alice", [QQ, TG], name="Alice")
    return made


def run(vault: Vault, *argv: str) -> tuple[int, str, str]:
    ran = run_main("--vault", vault.root, *argv)
    return ran.returncode, ran.stdout, ran.stderr


def events_of(vault: Vault, *flags: str, bot: str = "bot-1") -> list[str]:
    code, out, err = run(vault, "events", "list", "--bot", bot, "--speaker", TG, "--json", *flags)
    assert code == 0, err
    (person,) = json.loads(out)["people"]
    return [e["id"] for e in person["events"]]


def test_events_list_shows_the_linked_persons_events_only_when_asked(vault):
    qq_event = open_event(vault, Actor("bot-1", QQ, None, "group_10001"), "appointment", "x", TYPES)
    other_bot = open_event(vault, Actor("bot-2", QQ, None, "group_1"), "appointment", "y", TYPES)
    assert events_of(vault) == []
    assert events_of(vault, "--linked-people") == [qq_event.event.id]
    assert events_of(vault, "--linked-people", bot="bot-2") == []  # unlinked there
    assert other_bot.event.id not in events_of(vault, "--linked-people")


def search_lines(vault: Vault, *flags: str) -> list[str]:
    code, out, err = run(
        vault,
        "search",
        "prefers tea",
        "--bot",
        "bot-1",
        "--session",
        "group_10001",
        "--speaker",
        TG,
        "--explain",
        "--json",
        *flags,
    )
    assert code == 0, err
    return [item["content"] for item in json.loads(out) if item["explain"]["speaker"] > 1.0]


def test_search_ranks_the_persons_memories_as_the_speakers_only_when_asked(
    vault, cli_tiny_embedder
):
    code, _, err = run(
        vault, "remember", "Alice prefers tea", "--bot", "bot-1", "--session", "group_10001",
        "--speaker", QQ,
    )  # fmt: skip
    assert code == 0, err
    code, _, err = run(
        vault, "remember", "Bob prefers tea too", "--bot", "bot-1", "--session", "group_10001",
        "--speaker", "555",
    )  # fmt: skip
    assert code == 0, err
    assert search_lines(vault) == []
    assert search_lines(vault, "--linked-people") == ["Alice prefers tea"]


def test_check_reports_a_malformed_person_file_and_leaves_it(vault):
    path = vault.root / "bots/bot-1/persons/alice/person.yaml"
    path.write_bytes(b"senders: 12345\n")
    code, out, _ = run(vault, "check", "--json")
    assert code == 1
    problems = json.loads(out)["problems"]
    assert [p["path"] for p in problems] == ["bots/bot-1/persons/alice/person.yaml"]
    assert "senders must be a list" in problems[0]["message"]
    assert path.read_bytes() == b"senders: 12345\n"
