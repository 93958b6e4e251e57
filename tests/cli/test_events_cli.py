"""`memvault events list|show|close` end to end: the console script's own main() over a real
vault with real git; closing from the shell is audited and committed like the tool's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import git
from tests.helpers.cli_run import run_main
from vault.events import Actor, open_event, parse_event_types
from vault.files import audit
from vault.writes.create import init_vault
from vault.writes.operations import Vault

TYPES = parse_event_types(["appointment: a booked visit", "complaint: unhappy"])
ALICE = Actor("bot-1", "u:42/é", "Alice", "group_1")
BOB = Actor("bot-1", "u7", "Bob", "group_1")


@pytest.fixture
def world(tmp_path: Path):
    init_vault(tmp_path / "v", git=True)
    vault = Vault(tmp_path / "v", git=True)
    dentist = open_event(vault, ALICE, "appointment", "Dentist on Tuesday", TYPES)
    soup = open_event(vault, BOB, "complaint", "Cold soup", TYPES)
    other_bot = open_event(
        vault, Actor("bot-2", "u:42/é", None, "group_1"), "complaint", "x", TYPES
    )
    return vault, dentist, soup, other_bot


def run(vault: Vault, *argv: str) -> tuple[int, str, str]:
    ran = run_main("--vault", vault.root, *argv)
    return ran.returncode, ran.stdout, ran.stderr


def test_list_shows_each_person_of_the_bot_and_only_that_bot(world, capsys):
    vault, dentist, soup, other_bot = world
    code, out, _ = run(vault, "events", "list", "--bot", "bot-1", "--json")
    assert code == 0
    data = json.loads(out)
    got = {p["speaker"]: [e["id"] for e in p["events"]] for p in data["people"]}
    assert got == {"u:42/é": [dentist.event.id], "u7": [soup.event.id]}
    code, out, _ = run(vault, "events", "list", "--bot", "bot-1", "--speaker", "u7")
    assert code == 0 and soup.event.id in out and dentist.event.id not in out
    assert other_bot.event.id not in out


def test_show_and_close_one_persons_event(world, capsys):
    vault, dentist, _, _ = world
    who = ["--bot", "bot-1", "--speaker", "u:42/é"]
    code, out, _ = run(vault, "events", "show", dentist.event.id, *who, "--json")
    shown = json.loads(out)
    assert code == 0 and shown["summary"] == "Dentist on Tuesday" and shown["status"] == "open"
    assert [h["kind"] for h in shown["history"]] == ["opened"]
    before = git(vault.root, "rev-parse", "HEAD").strip()
    code, out, err = run(
        vault,
        "events",
        "close",
        dentist.event.id,
        *who,
        "--resolution",
        "Done, no cavities",
    )
    assert (code, err) == (0, "") and "closed: Done, no cavities" in out
    assert git(vault.root, "rev-list", "--count", f"{before}..HEAD").strip() == "1"
    (last,) = audit.read(vault.layout.person_audit_path("bot-1", "u:42/é"))[0][-1:]
    assert (last.operation, last.source) == ("close_event", "user")
    code, out, _ = run(vault, "events", "list", *who, "--status", "closed", "--json")
    assert [e["resolution"] for e in json.loads(out)["people"][0]["events"]] == [
        "Done, no cavities"
    ]


def test_another_persons_id_and_a_closed_event_are_refused_with_exit_2(world, capsys):
    vault, dentist, soup, _ = world
    head = git(vault.root, "rev-parse", "HEAD").strip()
    code, _, err = run(
        vault,
        "events",
        "close",
        soup.event.id,
        "--bot",
        "bot-1",
        "--speaker",
        "u:42/é",
        "--resolution",
        "not mine",
    )
    assert code == 2 and f"no event {soup.event.id} for this person" in err
    code, _, err = run(
        vault,
        "events",
        "close",
        dentist.event.id,
        "--bot",
        "bot-2",
        "--speaker",
        "u:42/é",
        "--resolution",
        "wrong bot",
    )
    assert code == 2 and "no event" in err
    assert git(vault.root, "rev-parse", "HEAD").strip() == head
    assert soup.path.read_text(encoding="utf-8").count("status: open") == 1
