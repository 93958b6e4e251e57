"""Key-event files as a person reads and edits them: the history is appended and dated, a
note cannot fake a history entry, a person's own edits survive MemVault's changes, and a
malformed file is reported and skipped, never rewritten (real files, real git)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault.events import (
    Actor,
    close_event,
    load_events,
    open_event,
    parse_event,
    parse_event_types,
    update_event,
)
from vault.health.check import check_vault
from vault.writes.create import init_vault
from vault.writes.operations import Vault

TYPES = parse_event_types(["appointment: a booked visit", "order_issue: a problem with an order"])
ALICE = Actor("bot-1", "u1", "Alice", "group_1")


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    init_vault(tmp_path / "v", git=True)
    return Vault(tmp_path / "v", git=True)


def test_a_new_event_file_says_what_a_person_needs_and_reads_back(vault):
    stored = open_event(vault, ALICE, "appointment", "Dentist on Tuesday at 3pm", TYPES)
    assert stored.rel == f"bots/bot-1/people/u1/events/{stored.event.id}.md"
    text = stored.path.read_text(encoding="utf-8")
    assert text.startswith(f"---\nid: {stored.event.id}\ntype: appointment\nstatus: open\n")
    assert "opened_in: group_1\n" in text and "speaker: {id: u1, name: Alice}\n" in text
    assert "\n### " in text and "opened in group_1\nDentist on Tuesday at 3pm\n" in text
    back = parse_event(text, rel_path=stored.rel)
    assert (back.type, back.status, back.summary) == ("appointment", "open", stored.event.summary)
    assert [h.kind for h in back.history()] == ["opened"]


NOTE_TEXT = st.lists(
    st.sampled_from(
        ["a", "b", " ", "#", "###", "\n", "\t", ":", "[", ")", "<", "&", "中", "é", "\\"]
    ),
    max_size=30,
).map("".join)
FORGED = st.sampled_from(
    ["### 2026-01-01T00:00:00Z closed", "  ### 2026-01-01T00:00:00Z note in x", "# title", "---"]
)


@settings(max_examples=30, deadline=None)
@given(notes=st.lists(NOTE_TEXT, min_size=1, max_size=4), forged=FORGED)
def test_each_note_is_one_dated_entry_and_no_note_fakes_another(notes, forged):
    """Whatever a chat says in a note (a line shaped like a history heading included), the
    history holds exactly the entries MemVault appended, in order, each with its text."""
    said = [n for n in (*notes, f"x\n{forged}\nstill waiting") if n.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        init_vault(Path(tmp) / "v", git=False)
        vault = Vault(Path(tmp) / "v", git=False)
        eid = open_event(vault, ALICE, "order_issue", "Order 42 arrived broken", TYPES).event.id
        for note in said:
            done = update_event(vault, ALICE, eid, note)
        history = done.event.history()
        assert [h.kind for h in history] == ["opened"] + ["note"] * len(said)
        assert all(h.at is not None and h.chat == "group_1" for h in history)
        expected = [n.replace("\r\n", "\n").replace("\r", "\n").strip() for n in said]
        assert [h.text for h in history[1:]] == expected
        # and the file still reads the same way from disk
        again = parse_event(done.path.read_bytes(), rel_path=done.rel)
        assert [h.kind for h in again.history()] == [h.kind for h in history]


def test_a_persons_own_lines_survive_a_note_and_a_close(vault):
    stored = open_event(vault, ALICE, "appointment", "Dentist Tuesday", TYPES)
    text = stored.path.read_text(encoding="utf-8")
    edited = text.replace("status: open\n", "status: open  # checked with the clinic\n")
    edited = edited.replace("---\n###", "---\nCall the clinic first.\n\n###", 1)
    edited = edited.replace("opened_in:", "room: 4B\nopened_in:")
    stored.path.write_text(edited, encoding="utf-8")
    update_event(vault, ALICE, stored.event.id, "moved to Wednesday")
    done = close_event(vault, ALICE, stored.event.id, "went fine")
    final = done.path.read_text(encoding="utf-8")
    assert "# checked with the clinic" in final and "room: 4B" in final
    assert "Call the clinic first." in final
    assert done.event.extra == (("room", "4B"),)
    assert [h.kind for h in done.event.history()] == ["opened", "note", "closed"]
    assert (done.event.status, done.event.resolution) == ("closed", "went fine")
    assert done.event.closed_at is not None and "&id" not in final


def test_a_malformed_event_is_reported_and_skipped_never_rewritten(vault):
    good = open_event(vault, ALICE, "appointment", "Dentist Tuesday", TYPES)
    folder = good.path.parent
    broken = folder / "evt_broken.md"
    broken_bytes = (
        b"---\nid: evt_broken\ntype: appointment\nstatus: maybe\nsummary: x\n"
        b"opened_at: 2026-11-30T04:20:00Z\n---\nhi\n"
    )
    broken.write_bytes(broken_bytes)
    no_front = folder / "notes.md"
    no_front.write_bytes(b"just a note I typed\n")
    stored, problems = load_events(vault.layout, "bot-1", "u1")
    assert [s.event.id for s in stored] == [good.event.id]
    assert sorted((p.path.rsplit("/", 1)[-1], p.line) for p in problems) == [
        ("evt_broken.md", 4),
        ("notes.md", 1),
    ]
    assert "status must be one of open, closed" in next(
        p.message for p in problems if p.path.endswith("evt_broken.md")
    )
    report = check_vault(vault.root)
    assert {p.path.rsplit("/", 1)[-1] for p in report.problems} == {"evt_broken.md", "notes.md"}
    # the rest keeps working, and nothing touched the person's files
    update_event(vault, ALICE, good.event.id, "confirmed")
    assert broken.read_bytes() == broken_bytes
    assert no_front.read_bytes() == b"just a note I typed\n"


def test_a_hand_written_event_without_optional_fields_is_valid(vault):
    folder = vault.root / "bots" / "bot-1" / "people" / "u1" / "events"
    folder.mkdir(parents=True)
    (folder / "evt_hand.md").write_text(
        "---\ntype: complaint\nsummary: soup was cold\nopened_at: 2026-11-30\n---\n",
        encoding="utf-8",
    )
    (stored,), problems = load_events(vault.layout, "bot-1", "u1")
    assert problems == []
    e = stored.event
    assert (e.id, e.status, e.type, e.updated_at) == ("evt_hand", "open", "complaint", None)
    assert e.last_change == e.opened_at
    assert check_vault(vault.root).ok


def test_check_names_a_person_folder_that_is_no_encoded_id(vault):
    """`bad name` (a space) is not what encode_name makes, so no sender id reads it: said."""
    folder = vault.root / "bots" / "bot-1" / "people" / "bad name" / "events"
    folder.mkdir(parents=True)
    (folder / "evt_x.md").write_text(
        "---\ntype: complaint\nsummary: s\nopened_at: 2026-11-30\n---\n", encoding="utf-8"
    )
    report = check_vault(vault.root)
    assert any(
        p.path == "bots/bot-1/people/bad name" and "not an encoded id" in p.message
        for p in report.problems
    ), report.problems
