"""The extraction queue: after-reply jobs, bounded, at most one running per chat.

LangBot awaits every NormalMessageResponded handler before it sends the reply, so the
handler only queues a job here and returns. A per-chat asyncio task then takes that chat's
jobs one at a time (oldest first), and at most `parallel` chats extract at once: one slow
model never holds up the others for long, and one chat never runs two extractions that
could propose the same memory twice.

Bounded: when `max_pending` jobs wait, the oldest is dropped with one log line (a backlog of
stale turns is worth less than the newest). A streaming reply fires the event once per chunk
with the text so far: a newer event of the same turn (same chat and query id) replaces the
waiting job, and a job starts only after its turn was quiet for `settle_s`, so one turn costs
one model call, on the whole reply.

The tasks run in an empty contextvars.Context: a task started from an event handler would
otherwise inherit the SDK's per-invocation authority (langbot_plugin.api.proxies.invocation),
which the SDK revokes when the handler returns, so every later host call (invoke_llm) would
fail with "Plugin invocation has ended". In an empty context host calls carry the plugin's
own connection-bound identity, as any call made outside an event does.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

log = logging.getLogger(__name__)

J = TypeVar("J")
MAX_PENDING = 32
PARALLEL = 2
SETTLE_S = 1.5


@dataclass
class _Waiting(Generic[J]):
    job: J
    touched: float  # monotonic time of the turn's latest event
    label: str  # the chat, for log lines


class ExtractionQueue(Generic[J]):
    def __init__(
        self,
        run: Callable[[J], Awaitable[None]],
        *,
        max_pending: int = MAX_PENDING,
        parallel: int = PARALLEL,
        settle_s: float = SETTLE_S,
    ) -> None:
        self._run = run
        self.max_pending = max_pending
        self.settle_s = settle_s
        self._parallel = parallel
        self._slots: asyncio.Semaphore | None = None  # made on the loop that runs the jobs
        self._waiting: OrderedDict[tuple[Hashable, str], _Waiting[J]] = OrderedDict()
        self._chats: dict[Hashable, asyncio.Task[None]] = {}
        self.dropped = 0

    @property
    def pending(self) -> int:
        return len(self._waiting)

    def submit(self, chat: Hashable, turn: str, job: J, label: str = "") -> None:
        """Queue `job` for `chat` (any exact key; `label` names it in logs); never blocks
        (called from the handler)."""
        key = (chat, turn)
        now = time.monotonic()
        if key in self._waiting:  # the same turn again (a streaming chunk): newest wins
            self._waiting[key] = _Waiting(job, now, label)
        else:
            if len(self._waiting) >= self.max_pending:
                (_, old_turn), old = self._waiting.popitem(last=False)
                self.dropped += 1
                log.warning(
                    "memvault=candidates_dropped chat=%s query_id=%s reason=queue_full "
                    "max_pending=%d dropped_total=%d",
                    old.label,
                    old_turn,
                    self.max_pending,
                    self.dropped,
                )
            self._waiting[key] = _Waiting(job, now, label)
        if chat not in self._chats:
            loop = asyncio.get_running_loop()
            self._chats[chat] = loop.create_task(self._drain(chat), context=contextvars.Context())

    async def _drain(self, chat: Hashable) -> None:
        try:
            while True:
                key = next((k for k in self._waiting if k[0] == chat), None)
                if key is None:
                    return  # no await between here and `finally`: submit() sees us gone
                wait = self._waiting[key].touched + self.settle_s - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                    continue  # a newer chunk may have come, or the job was dropped
                waiting = self._waiting.pop(key)
                if self._slots is None:
                    self._slots = asyncio.Semaphore(self._parallel)
                async with self._slots:
                    try:
                        await self._run(waiting.job)
                    except Exception:  # noqa: BLE001 - one bad job must not stop the chat's queue
                        log.exception(
                            "memvault=candidates_failed chat=%s query_id=%s reason=internal",
                            waiting.label,
                            key[1],
                        )
        finally:
            self._chats.pop(chat, None)

    async def drain(self, timeout: float) -> None:
        """Wait until every queued job has run (tests, shutdown); TimeoutError after `timeout`."""
        deadline = time.monotonic() + timeout
        while self._chats:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{len(self._waiting)} extraction job(s) still queued")
            await asyncio.wait(list(self._chats.values()), timeout=left)

    def cancel(self) -> None:
        """Stop every chat's task (plugin shutdown); queued jobs are dropped."""
        for task in list(self._chats.values()):
            task.cancel()
        self._waiting.clear()
