"""A key event belongs to one person of one bot: whichever chat it was opened in, it is found
for exactly that (bot, sender) and for no other, whatever the ids hold (`../`, `:`, `/`,
unicode, case, a name too long for a folder). Real files, real folders."""

from __future__ import annotations

import tempfile
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import git
from vault.errors import BadRequestError
from vault.events import Actor, load_events, open_event, open_events, parse_event_types
from vault.layout.layout import classify
from vault.layout.names import UnsafeNameError, encode_name
from vault.writes.create import init_vault
from vault.writes.operations import Vault

TYPES = parse_event_types(["appointment: a booked visit"])
BOTS = [None, "bot-1", "bot-2", "a:b", "a", "b/../c", "机器人", "BOT-1"]
PEOPLE = [
    "u1",
    "u2",
    "U1",
    "../u1",
    "u1/..",
    "u1:x",
    "u1:",
    ":u1",
    "ü1",
    "u1 ",
    "x" * 300,
    "x" * 301,
]
CHATS = ["group_1", "person_u1", "group_a:b", "person_../u1", "group_机器人"]

opening = st.tuples(st.sampled_from(BOTS), st.sampled_from(PEOPLE), st.sampled_from(CHATS))


def new_vault(tmp: str) -> Vault:
    init_vault(Path(tmp) / "v", git=False)
    return Vault(Path(tmp) / "v", git=False)


@settings(max_examples=40, deadline=None)
@given(openings=st.lists(opening, min_size=1, max_size=8))
def test_an_event_is_found_for_its_bot_and_person_from_any_chat_and_for_no_one_else(openings):
    with tempfile.TemporaryDirectory() as tmp:
        vault = new_vault(tmp)
        mine: dict[tuple[str | None, str], set[str]] = defaultdict(set)
        for bot, person, chat in openings:
            stored = open_event(vault, Actor(bot, person, None, chat), "appointment", "x", TYPES)
            # ids are stripped as every speaker id is read back ("u1 " is "u1")
            mine[(bot, person.strip())].add(stored.event.id)
            # the file sits in that person's folder of that bot, and says so
            bot_folder = "_nobot" if bot is None else encode_name(bot)
            folder = encode_name(person.strip())
            assert stored.rel.startswith(f"bots/{bot_folder}/people/{folder}/events/")
            role = classify(vault.root, stored.rel)
            assert (role.kind, role.bot, role.speaker, role.index_key) == (
                "event",
                bot,
                person.strip(),
                None,
            )
        for bot in BOTS:
            for person in PEOPLE:
                found = {s.event.id for s in open_events(vault.layout, bot, person, 100)}
                assert found == mine.get((bot, person.strip()), set()), (bot, person)


@pytest.mark.parametrize("person", ["..", ".", "", "   ", "a\x00b"])
def test_a_sender_id_that_cannot_be_a_folder_is_refused_and_nothing_is_written(tmp_path, person):
    init_vault(tmp_path / "v", git=True)
    vault = Vault(tmp_path / "v", git=True)
    with pytest.raises((UnsafeNameError, BadRequestError)):
        open_event(vault, Actor("bot-1", person, None, "group_1"), "appointment", "x", TYPES)
    assert not (vault.root / "bots" / "bot-1" / "people").exists()
    assert not list(vault.root.glob("bots/**/*.md"))


def test_a_long_sender_id_keeps_its_own_folder_and_its_full_id(tmp_path):
    """Past the folder-name cap the name is a prefix plus a hash, with the full id in `.id`:
    two ids sharing the prefix still get two folders, each with its own events."""
    init_vault(tmp_path / "v", git=True)
    vault = Vault(tmp_path / "v", git=True)
    long_a, long_b = "p" * 300 + "a", "p" * 300 + "b"
    a = open_event(vault, Actor("bot-1", long_a, None, "group_1"), "appointment", "a's", TYPES)
    b = open_event(vault, Actor("bot-1", long_b, None, "group_1"), "appointment", "b's", TYPES)
    assert a.path.parent.parent != b.path.parent.parent
    assert (a.path.parent.parent / ".id").read_text(encoding="utf-8") == long_a
    assert [s.event.summary for s in load_events(vault.layout, "bot-1", long_a)[0]] == ["a's"]
    assert [s.event.summary for s in load_events(vault.layout, "bot-1", long_b)[0]] == ["b's"]
    # the `.id` marker is committed with the event, so a clone reads the same folder
    tracked = git(vault.root, "ls-files").split("\n")
    assert vault.layout.rel(a.path.parent.parent / ".id") in tracked
    assert a.rel in tracked and b.rel in tracked
