"""An event id that two files of one person state is never guessed (the same rule as for
candidates and episodes): the change is refused, naming both files, and neither file is
touched; an id no file states says how to find the right one (real files, real git)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vault.errors import NotFoundError
from vault.events import Actor, close_event, open_event, parse_event_types, update_event
from vault.layout.store import AmbiguousIdError
from vault.writes.create import init_vault
from vault.writes.operations import Vault

TYPES = parse_event_types(["appointment: a booked visit"])
ALICE = Actor("bot-1", "u1", "Alice", "group_1")


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    init_vault(tmp_path / "v", git=True)
    return Vault(tmp_path / "v", git=True)


@pytest.mark.parametrize("change", ["update", "close"])
def test_an_event_id_two_files_state_changes_neither(vault: Vault, change: str) -> None:
    stored = open_event(vault, ALICE, "appointment", "Dentist on Tuesday at 3pm", TYPES)
    copy = stored.path.with_name("copy.md")
    copy.write_bytes(stored.path.read_bytes())
    before = {p: p.read_bytes() for p in (stored.path, copy)}
    with pytest.raises(AmbiguousIdError) as caught:
        if change == "update":
            update_event(vault, ALICE, stored.event.id, "Moved to Wednesday")
        else:
            close_event(vault, ALICE, stored.event.id, "Went to the dentist")
    message = str(caught.value)
    assert stored.rel in message and "people/u1/events/copy.md" in message
    assert "nothing was changed" in message
    assert {p: p.read_bytes() for p in before} == before


def test_an_event_id_no_file_states_says_how_to_list_them(vault: Vault) -> None:
    open_event(vault, ALICE, "appointment", "Dentist on Tuesday at 3pm", TYPES)
    with pytest.raises(NotFoundError, match="memvault events list"):
        update_event(vault, ALICE, "evt_20261130_7f3a9c", "Moved")
