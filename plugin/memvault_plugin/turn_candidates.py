"""Candidate memories from each answered turn (NormalMessageResponded), after the reply.

When the `candidates` setting is on and the pipeline opted in to memory (a MemVault KB is
attached, as for injection and the tools), the handler reads the turn (the last user
message from the query vars, the reply from the event, the sender) in four parallel host
calls, queues one job (candidate_queue) and returns: LangBot sends the reply only after
every handler returned. The job then runs indexer.jobs.candidates_extract.extract in the memory
service's worker thread with the host model (host_llm), writing pending candidate files
under the chat's folder; with `candidates_auto_accept` each is accepted at once as
`verified: false`. Candidates are never indexed as memory, so nothing here reaches recall
until a person (or auto-accept) accepts it.

A streaming reply fires the event once per chunk, with the text so far: a chunk of a turn
already read (same chat and query id, the reply grown) only updates the queued job, without
host calls; the queue starts a job once its turn was quiet for a moment (candidate_queue).

Recent turns: LangBot 4.11 keeps the history in its transcript store, not in the event's
`session.using_conversation.messages` (empty there); when that list has messages they are
used, otherwise the turns this process saw answered in the chat (the last few, in memory).

A failing model (unreachable, timeout, refusal, malformed answer) logs one line
`memvault=candidates_failed` and changes nothing; so does a vault that cannot be written.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections import OrderedDict, deque
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from indexer.jobs.candidates_extract import extract
from indexer.jobs.candidates_prompt import Turn
from indexer.jobs.llm import LLMError
from vault.candidates import Candidate, accept_candidate
from vault.format.model import Speaker
from vault.layout.keys import ScopeId

from . import pipeline_memory as pm
from .candidate_queue import ExtractionQueue

log = logging.getLogger(__name__)

COMMAND_PREFIXES = ("!", "！")  # LangBot's default command prefixes
RECENT_TURNS = 3  # earlier turns (6 messages): enough for "as I said", little to pay
RECENT_MESSAGES = 2 * RECENT_TURNS
RECENT_CHATS = 256  # chats whose recent turns are kept in memory (least recently used out)
TURN_MAX_CHARS = 2000  # of one message sent to the model
STREAMED = 64  # turns remembered to recognise a streaming reply's next chunk


@dataclass(frozen=True)
class TurnJob:
    query_id: int
    scope: ScopeId
    speaker: Speaker | None
    user_text: str
    reply: str
    recent: tuple[Turn, ...]
    at: datetime


class RecentTurns:
    """The last few turns of each chat this process saw answered (in memory only)."""

    def __init__(self, per_chat: int = RECENT_TURNS, chats: int = RECENT_CHATS) -> None:
        self._chats: OrderedDict[ScopeId, deque[tuple[int, Turn, Turn]]] = OrderedDict()
        self._per_chat = per_chat
        self._max_chats = chats

    def before(self, scope: ScopeId, query_id: int) -> tuple[Turn, ...]:
        """The chat's earlier turns, oldest first (never the turn `query_id` itself)."""
        kept = self._chats.get(scope, ())
        return tuple(t for qid, user, answer in kept if qid != query_id for t in (user, answer))

    def add(self, scope: ScopeId, query_id: int, user: Turn, answer: Turn) -> None:
        """Record a turn; the same turn again (a longer streamed reply) replaces it."""
        kept = self._chats.pop(scope, None) or deque(maxlen=self._per_chat)
        if kept and kept[-1][0] == query_id:
            kept.pop()
        kept.append((query_id, user, answer))
        self._chats[scope] = kept
        while len(self._chats) > self._max_chats:
            self._chats.popitem(last=False)


def _cut(text: str) -> str:
    return text if len(text) <= TURN_MAX_CHARS else text[: TURN_MAX_CHARS - 1] + "…"


def _said_at(raw: Any) -> datetime:
    """The message time from the query var `msg_create_time` (epoch seconds), else now."""
    if isinstance(raw, int | float) and not isinstance(raw, bool) and raw > 0:
        try:
            return datetime.fromtimestamp(raw, UTC).replace(microsecond=0)
        except (OverflowError, OSError, ValueError):
            pass
    return datetime.now(UTC).replace(microsecond=0)


def _conversation(event: Any) -> tuple[Turn, ...]:
    """The host's conversation history on the event, when it carries one."""
    conversation = getattr(getattr(event, "session", None), "using_conversation", None)
    messages = getattr(conversation, "messages", None) or []
    turns = [
        Turn(m.role, _cut(m.content))
        for m in messages
        if m.role in ("user", "assistant") and isinstance(m.content, str) and m.content.strip()
    ]
    return tuple(turns[-RECENT_MESSAGES:])


class TurnCandidates:
    """The plugin's after-reply extraction: one per plugin (main.MemVaultPlugin)."""

    def __init__(self, plugin: Any) -> None:
        self.plugin = plugin
        self.queue: ExtractionQueue[TurnJob] = ExtractionQueue(self._run)
        self.recent = RecentTurns()
        # Turns already read, by (launcher type, launcher id, query id) -> (job, raw reply):
        # a streaming reply's next chunk updates its job without asking the host again.
        self._streamed: OrderedDict[tuple[str, str, int], tuple[TurnJob, str]] = OrderedDict()
        self._no_model_logged = False

    async def on_responded(self, ctx: Any) -> None:
        """The NormalMessageResponded handler: read the turn, queue it, return. Never raises."""
        memory = await self.plugin.settled()  # the settings LangBot holds now (live_settings)
        if memory is None or not memory.settings.candidates:
            return  # off (the default): no host call, no model call
        try:
            await self._queue_turn(ctx, memory)
        except Exception:  # noqa: BLE001 - memory must never break a reply
            log.exception("memvault=candidates_skipped query_id=%s reason=internal", ctx.query_id)

    async def _queue_turn(self, ctx: Any, memory: Any) -> None:
        event = ctx.event
        if event.funcs_called:  # a step that calls tools; the answer after it is the turn
            return
        reply = str(event.response_text or "").strip()
        if not reply:
            return
        if memory.llm is None:
            if not self._no_model_logged:  # every turn would repeat it: once, and in health
                self._no_model_logged = True
                log.warning(
                    "memvault=candidates_skipped reason=no_model: choose the model in the "
                    "plugin setting candidates_model"
                )
            return
        key = (str(event.launcher_type), str(event.launcher_id), int(ctx.query_id))
        seen = self._streamed.get(key)
        if seen is not None and reply.startswith(seen[1]):  # the same turn, a longer reply
            job = dataclasses.replace(seen[0], reply=_cut(reply))
            self._queue(key, job, reply)
            return
        try:
            configs, pipeline_kbs, query_vars, bot_uuid = await asyncio.gather(
                pm.memory_kb_configs(self.plugin),
                ctx.list_pipeline_knowledge_bases(),
                ctx.get_query_vars(),
                ctx.get_bot_uuid(),
            )
        except Exception as exc:  # noqa: BLE001 - the host failed us; the reply goes on
            log.warning(
                "memvault=candidates_skipped query_id=%s reason=host_calls error=%r",
                ctx.query_id,
                str(exc),
            )
            return
        if not pm.attached_kbs(configs, pipeline_kbs):
            return  # this pipeline did not opt in to memory
        job = self._job(ctx, event, memory, query_vars, bot_uuid, reply)
        if job is not None:
            self._queue(key, job, reply)

    def _queue(self, key: tuple[str, str, int], job: TurnJob, reply: str) -> None:
        self._streamed.pop(key, None)
        self._streamed[key] = (job, reply)
        while len(self._streamed) > STREAMED:
            self._streamed.popitem(last=False)
        who = job.speaker
        user = Turn("user", job.user_text, who.id if who else "", (who.name or "") if who else "")
        self.recent.add(job.scope, job.query_id, user, Turn("assistant", job.reply))
        self.queue.submit(job.scope, str(job.query_id), job, job.scope.session_key)

    def _job(
        self,
        ctx: Any,
        event: Any,
        memory: Any,
        query_vars: dict[str, Any],
        bot_uuid: str | None,
        reply: str,
    ) -> TurnJob | None:
        text = str(query_vars.get("user_message_text", "") or "").strip()
        if not text or text.startswith(COMMAND_PREFIXES):
            return None
        sender_id, sender_name = pm.sender_of(query_vars)
        sender_id = sender_id or str(event.sender_id or "").strip()
        bot = bot_uuid or getattr(event.session, "bot_uuid", None) or None
        try:
            scope = memory.scope_of_launcher(event.launcher_type, event.launcher_id, bot)
        except ValueError as exc:
            log.warning("memvault=candidates_skipped query_id=%s error=%r", ctx.query_id, str(exc))
            return None
        speaker = Speaker(sender_id, sender_name or None) if sender_id else None
        recent = _conversation(event) or self.recent.before(scope, ctx.query_id)
        at = _said_at(query_vars.get("msg_create_time"))
        return TurnJob(ctx.query_id, scope, speaker, _cut(text), _cut(reply), recent, at)

    async def _run(self, job: TurnJob) -> None:
        memory = self.plugin.memory
        try:
            written = await memory.run(self.extract_now, memory, job)
        except LLMError as exc:
            self._failed(job, "llm", exc, str(getattr(memory.llm, "model", "") or ""))
            return
        except Exception as exc:  # noqa: BLE001 - any failure: one line, nothing changed
            log.exception(
                "memvault=candidates_failed query_id=%s scope=%s reason=%s error=%r",
                job.query_id,
                job.scope.session_key,
                type(exc).__name__,
                str(exc),
            )
            return
        log.info(
            "memvault=candidates_written query_id=%s scope=%s count=%d auto_accept=%s",
            job.query_id,
            job.scope.session_key,
            len(written),
            memory.settings.candidates_auto_accept,
        )

    @staticmethod
    def extract_now(memory: Any, job: TurnJob) -> list[Candidate]:
        """One job, in the worker thread: propose and write; auto-accept when set."""
        vault, engine = memory.require()
        llm = memory.llm
        written = extract(
            llm,
            vault,
            engine,
            job.scope,
            job.speaker,
            job.user_text,
            job.reply,
            job.recent,
            memory.settings.candidates_per_turn,
            str(getattr(llm, "model", "") or ""),
            at=job.at,
            log_failure=False,  # _failed logs the one line, with the turn's query id
        )
        if memory.settings.candidates_auto_accept:
            for candidate in written:
                accept_candidate(
                    vault,
                    job.scope,
                    candidate.id,
                    verified=False,
                    source="candidate",
                    query_id=job.query_id,
                )
        return written

    @staticmethod
    def _failed(job: TurnJob, reason: str, exc: Exception, model: str) -> None:
        log.warning(
            "memvault=candidates_failed query_id=%s scope=%s model=%s reason=%s error=%r: "
            "nothing was written",
            job.query_id,
            job.scope.session_key,
            model or "?",
            reason,
            str(exc),
        )
