"""The real-host suite reads key events out of a logged model request (hostsuite/llm_requests
`take_apart`): these tie that reader to the block MemVault really renders (plugin
events_block), so a change of the block's wording or entry syntax fails here, not as a
puzzling verdict on the real host, and event ids are never counted as memories."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from hostsuite.checks_events import NONE_OPEN, OPENED
from hostsuite.llm_requests import MEMORY_HEAD, Request, table, take_apart
from indexer.injection import events_block
from vault.events import Event, EventType

TYPES = (EventType("appointment", "a booked visit"),)
AT = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def event(event_id: str, minutes: int) -> Event:
    at = AT + timedelta(minutes=minutes)
    return Event(id=event_id, type="appointment", summary=f"visit {event_id}", opened_at=at)


def request(*messages: tuple[str, str]) -> Request:
    return Request(0.0, tuple({"role": r, "content": c} for r, c in messages))


@given(
    st.lists(
        st.from_regex(r"evt_2026120[1-9]_[0-9a-f]{6}", fullmatch=True), max_size=5, unique=True
    )
)
def test_the_ids_of_memvaults_key_events_block_are_event_ids_not_memories(ids: list[str]) -> None:
    block = events_block.render([event(e, i) for i, e in enumerate(ids)], TYPES)
    record = "[1] [2026-12-01T11:55:20Z] (id:ep_a, importance:2) <mem>x</mem>"
    seen = take_apart(
        request(
            ("system", f"{MEMORY_HEAD}\n<memory-records>\n{record}\n</memory-records>"),
            ("system", block.text),
            ("user", "q"),
        ),
        "A",
        (),
    )
    assert seen.event_ids == tuple(ids) == block.ids
    assert seen.ids == ("ep_a",) and seen.duplicates == 0  # events are not memories
    assert (NONE_OPEN in seen.events) == (not ids)
    assert table([seen]).splitlines()[2].rstrip().endswith(",".join(ids) or "none open")


def test_a_request_without_the_block_has_no_key_events_column_value() -> None:
    seen = take_apart(request(("system", "You are a bot."), ("user", "q")), "A", ())
    assert seen.events == "" and seen.event_ids == ()
    assert table([seen]).splitlines()[2].rstrip().endswith("-")


def test_the_suite_reads_the_id_from_open_events_real_answer() -> None:
    from components.tools.open_event import _opened

    from vault.events import StoredEvent

    stored = StoredEvent(event("evt_20261201_7f3a9c", 0), None, "x.md", "sha")  # type: ignore[arg-type]
    match = OPENED.search(_opened(stored))
    assert match is not None and match.group(1) == "evt_20261201_7f3a9c"
