"""The after-reply extraction queue (memvault_plugin/candidate_queue.py): bounded, oldest dropped
with one log line, at most one job running per chat, a streaming turn extracted once."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict

from hypothesis import given, settings
from hypothesis import strategies as st
from memvault_plugin.candidate_queue import ExtractionQueue

SUBMITS = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 5), st.integers(0, 99)), max_size=40)


class Recorder:
    def __init__(self) -> None:
        self.running: dict[int, int] = {}
        self.most_at_once = 0
        self.ran: list[tuple[int, int, int]] = []

    async def run(self, job: tuple[int, int, int]) -> None:
        chat = job[0]
        self.running[chat] = self.running.get(chat, 0) + 1
        assert self.running[chat] == 1, f"two jobs of chat {chat} at once"
        self.most_at_once = max(self.most_at_once, sum(self.running.values()))
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        self.ran.append(job)
        self.running[chat] -= 1


@settings(max_examples=60, deadline=None)
@given(submits=SUBMITS, max_pending=st.integers(1, 8), parallel=st.integers(1, 3))
def test_what_runs_is_the_newest_of_each_turn_within_the_bound(submits, max_pending, parallel):
    async def scenario() -> tuple[Recorder, ExtractionQueue]:
        recorder = Recorder()
        queue = ExtractionQueue(
            recorder.run, max_pending=max_pending, parallel=parallel, settle_s=0.0
        )
        for chat, turn, payload in submits:  # one burst: nothing runs in between
            queue.submit(chat, str(turn), (chat, turn, payload), f"chat{chat}")
        await queue.drain(10)
        return recorder, queue

    recorder, queue = asyncio.run(scenario())
    # the model: first-seen order, a repeat replaces the payload, overflow drops the oldest
    model: OrderedDict[tuple[int, int], int] = OrderedDict()
    dropped = 0
    for chat, turn, payload in submits:
        if (chat, turn) not in model and len(model) >= max_pending:
            model.popitem(last=False)
            dropped += 1
        model[(chat, turn)] = payload
    assert sorted(recorder.ran) == sorted((c, t, p) for (c, t), p in model.items())
    for chat in {c for c, _ in model}:  # each chat's jobs in the order they came
        assert [t for c, t, _ in recorder.ran if c == chat] == [t for c, t in model if c == chat]
    assert queue.dropped == dropped and queue.pending == 0
    assert recorder.most_at_once <= parallel


async def test_a_full_queue_drops_the_oldest_with_one_log_line(caplog):
    ran: list[str] = []

    async def run(job: str) -> None:
        ran.append(job)

    queue = ExtractionQueue(run, max_pending=2, settle_s=0.0)
    caplog.set_level(logging.WARNING, logger="memvault_plugin.candidate_queue")
    for turn in ("1", "2", "3"):
        queue.submit("chat", turn, f"job{turn}", "bot-1:group_1")
    await queue.drain(5)
    assert ran == ["job2", "job3"]
    (line,) = [r.getMessage() for r in caplog.records]
    assert line.startswith("memvault=candidates_dropped chat=bot-1:group_1 query_id=1")
    assert "reason=queue_full max_pending=2" in line


async def test_a_streaming_turn_runs_once_with_its_last_text_after_it_settled():
    started: list[tuple[str, float]] = []

    async def run(job: str) -> None:
        started.append((job, time.monotonic()))

    queue = ExtractionQueue(run, settle_s=0.3)
    queue.submit("chat", "7", "Have a", "c")
    await asyncio.sleep(0.15)
    queue.submit("chat", "7", "Have a great trip!", "c")  # the next chunk, text so far
    last = time.monotonic()
    await queue.drain(5)
    assert [job for job, _ in started] == ["Have a great trip!"]
    assert started[0][1] - last >= 0.29


async def test_a_job_that_raises_is_logged_and_the_chats_next_job_still_runs(caplog):
    ran: list[str] = []

    async def run(job: str) -> None:
        if job == "bad":
            raise ValueError("boom")
        ran.append(job)

    queue = ExtractionQueue(run, settle_s=0.0)
    queue.submit("chat", "1", "bad", "c")
    queue.submit("chat", "2", "good", "c")
    await queue.drain(5)
    assert ran == ["good"]
    failed = [r.getMessage() for r in caplog.records if "candidates_failed" in r.getMessage()]
    assert failed == ["memvault=candidates_failed chat=c query_id=1 reason=internal"]
