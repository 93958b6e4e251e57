"""`!memory`: look at and manage this chat's memory, with LongTermMemory's subcommands.

A thin adapter: it resolves whose memory this is (launcher type/id from the session, the
bot uuid from LangBot), runs the subcommand off the event loop (memory_actions,
memory_health) and always answers with exactly one reply, turning every error into one
line that says what to do. LangBot ignores subcommand aliases, so upstream's aliases are
registered as subcommands of their own, and `*` answers anything unknown with usage
(without it the SDK raises and the user gets no reply at all).
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

from langbot_plugin.api.definition.components.command.command import Command
from langbot_plugin.api.entities.builtin.command.context import CommandReturn, ExecuteContext
from langbot_plugin.api.proxies.query_based_api import QueryBasedAPIProxy
from memvault_plugin import pipeline_memory as pm
from memvault_plugin.error_reply import command_reply

from vault.errors import MemVaultError, kind_of

from . import memory_actions as act
from . import memory_bulk as bulk
from . import memory_candidates as cand
from . import memory_events as events
from . import memory_migrate as migrate
from . import memory_transfer as transfer
from .memory_consolidate import consolidate
from .memory_health import health
from .memory_views import echo

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Spec:
    name: str
    run: Callable[[act.Call], str]
    usage: str
    help: str
    aliases: tuple[str, ...] = ()
    needs_memory: bool = True  # False: runs even when the vault or index is unavailable
    # Reads from the host first, on the event loop (async SDK calls), before `run`.
    prepare: Callable[[Any, act.Call], Awaitable[act.Call]] | None = None


OVERVIEW = "overview: scope, profiles, episode counts, vault"
SPECS: tuple[Spec, ...] = (
    Spec("", act.overview, "!memory", OVERVIEW),
    Spec("profile", act.profile, "!memory profile", "session and speaker profiles", ("p",)),
    Spec("search", act.search, "!memory search <query>", "search this chat's memories", ("s",)),
    Spec("list", act.list_episodes, "!memory list [page]", "active memories", ("l", "ls")),
    Spec("show", act.show, "!memory show <id>", "one memory in full"),
    Spec("forget", act.forget, "!memory forget <id>", "delete a memory", ("f", "del")),
    Spec(
        "archive",
        bulk.archive,
        "!memory archive <id> | archive --speaker/--tag/--before/--status [--yes]",
        "hide a memory from recall; with filters: preview, then --yes archives them all",
    ),
    Spec(
        "delete",
        bulk.delete,
        "!memory delete <id> | delete --speaker/--tag/--before/--status [--yes]",
        "delete a memory; with filters: preview, then --yes deletes them all",
    ),
    Spec("verify", bulk.verify, "!memory verify <id>", "mark a memory as confirmed by a person"),
    Spec("stats", bulk.stats, "!memory stats", "counts by status, priority, category, speaker"),
    Spec("restore", act.restore, "!memory restore <id>", "make a memory active again"),
    Spec("superseded", act.superseded, "!memory superseded [page]", "replaced memories"),
    Spec("archived", act.archived, "!memory archived [page]", "archived memories"),
    Spec("audit", transfer.audit_log, "!memory audit [page|export]", "operations, newest first"),
    Spec(
        "export",
        transfer.export,
        "!memory export [l2] [flags]",
        "profiles or episodes as JSON (a status flag alone means l2)",
        ("e",),
    ),
    Spec("import", transfer.import_l2, "!memory import l2 <json>", "import episodes (JSON)"),
    Spec(
        "migrate",
        migrate.migrate_ltm,
        "!memory migrate ltm [--dry-run] [--kb <uuid>]",
        "bring LongTermMemory's memories of every chat (dry run: counts only)",
        prepare=migrate.fetch,
    ),
    Spec("history", transfer.history, "!memory history <id>", "git history of a memory's file"),
    Spec("candidates", cand.candidates, "!memory candidates [page]", "proposed memories to review"),
    Spec(
        "candidate",
        cand.candidate,
        "!memory candidate accept|reject <id>",
        "accept (into memory) or reject a proposed memory (also: candidates accept|reject)",
    ),
    Spec(
        "consolidate",
        consolidate,
        "!memory consolidate preview|run",
        "fold old memories into one summary: preview changes nothing, run applies it",
    ),
    Spec(
        "events",
        events.events,
        "!memory events [open|closed|all] | events show <id>",
        "your key events with this bot, from every chat",
    ),
    Spec("health", health, "!memory health", "vault, index, embedding, isolation", ("h",), False),
)


FLAGS = "--include-archived --include-superseded --all-statuses --status <status>"


def usage_text() -> str:
    lines = ["Usage:", "  !memory help - this text"]
    for spec in SPECS:
        also = f" (also: {', '.join(spec.aliases)})" if spec.aliases else ""
        lines.append(f"  {spec.usage} - {spec.help}{also}")
    lines.append(f"  flags for search, list and export: {FLAGS}")
    return "\n".join(lines)


class Memory(Command):
    def __init__(self) -> None:
        super().__init__()
        for spec in SPECS:
            for name in (spec.name, *spec.aliases):
                self.subcommand(name=name, help=spec.help, usage=spec.usage)(self._runner(spec))

        @self.subcommand(name="help", help="this usage text", usage="!memory help")
        async def help_(cmd: Memory, ctx: ExecuteContext) -> AsyncGenerator[CommandReturn, None]:
            log.info("memvault=command sub=help query_id=%s", ctx.query_id)
            yield CommandReturn(text=f"[Memory] MemVault long-term memory.\n{usage_text()}")

        @self.subcommand(name="*", help="usage for unknown subcommands", usage="!memory <sub>")
        async def fallback(cmd: Memory, ctx: ExecuteContext) -> AsyncGenerator[CommandReturn, None]:
            word = ctx.crt_params[0] if ctx.crt_params else ""
            log.info("memvault=command sub=unknown word=%r query_id=%s", echo(word), ctx.query_id)
            yield CommandReturn(text=f"[Memory] Unknown subcommand '{echo(word)}'.\n{usage_text()}")

    @staticmethod
    def _runner(
        spec: Spec,
    ) -> Callable[[Memory, ExecuteContext], AsyncGenerator[CommandReturn, None]]:
        async def run(cmd: Memory, ctx: ExecuteContext) -> AsyncGenerator[CommandReturn, None]:
            yield CommandReturn(text=await cmd.respond(spec, ctx))

        return run

    async def respond(self, spec: Spec, ctx: ExecuteContext) -> str:
        """The reply text for one subcommand; never raises (except cancellation)."""
        started = time.perf_counter()
        name = spec.name or "overview"
        scope, outcome = "-", "ok"
        try:
            call = await self._call(ctx, with_kb=spec.name in ("", "health"))
            scope = call.scope.session_key
            if spec.needs_memory:  # MemoryUnavailableError: answered below, by its kind
                vault, engine = call.memory.require()
                call = replace(call, vault=vault, engine=engine)
            if spec.prepare is not None:
                call = await spec.prepare(self.plugin, call)
            text = await call.memory.run(spec.run, call)
        except act.Reply as reply:
            text, outcome = reply.text, reply.outcome
        except MemVaultError as exc:  # any kind: its message, through the one table
            text, outcome = command_reply(exc, name, getattr(ctx, "query_id", None)), exc.kind
        except Exception as exc:  # noqa: BLE001 - the user must always get an answer
            log.exception(
                "memvault=command_failed sub=%s scope=%s query_id=%s error=%r",
                name,
                scope,
                getattr(ctx, "query_id", None),
                str(exc),
            )
            text = (
                f"[Memory] {name} failed ({type(exc).__name__}); the details are in the "
                "plugin log. Run !memory health."
            )
            outcome = kind_of(exc)  # an OSError is unavailable, anything else a bug
        log.info(
            "memvault=command sub=%s scope=%s query_id=%s outcome=%s chars=%d ms=%.1f",
            name,
            scope,
            getattr(ctx, "query_id", None),
            outcome,
            len(text),
            (time.perf_counter() - started) * 1000,
        )
        return text

    async def _call(self, ctx: ExecuteContext, *, with_kb: bool = False) -> act.Call:
        memory = await self.plugin.settled()  # the settings LangBot holds now (live_settings)
        if memory is None:
            raise act.Reply(
                "[Memory] MemVault did not start: see the plugin log, then restart the plugin.",
                "unavailable",
            )
        api = (
            ctx
            if isinstance(ctx, QueryBasedAPIProxy)
            else QueryBasedAPIProxy(
                query_id=ctx.query_id, plugin_runtime_handler=self.plugin.plugin_runtime_handler
            )
        )
        bot_uuid = ctx.session.bot_uuid
        try:
            bot_uuid = await api.get_bot_uuid()
        except Exception as exc:  # noqa: BLE001 - transport errors vary
            log.warning("memvault=bot_uuid_failed query_id=%s error=%r", ctx.query_id, str(exc))
            if not bot_uuid:
                raise act.Reply(
                    "[Memory] LangBot did not say which bot this chat belongs to: try again.",
                    "unavailable",
                ) from None
        try:
            query_vars = await api.get_query_vars() or {}
        except Exception as exc:  # noqa: BLE001 - the speaker is optional
            log.warning("memvault=query_vars_failed query_id=%s error=%r", ctx.query_id, str(exc))
            query_vars = {}
        sender_id = query_vars.get("sender_id") or ctx.session.sender_id or ""
        kb_state, kb_id = "unknown", None
        if with_kb:
            try:
                configs = await pm.memory_kb_configs(self.plugin)
                attached = await api.list_pipeline_knowledge_bases() if configs else []
                kb_state, kb_id = pm.kb_state(configs, attached)
            except Exception as exc:  # noqa: BLE001 - shown as unknown, never fatal
                log.warning("memvault=kb_state_failed query_id=%s error=%r", ctx.query_id, str(exc))
        try:
            scope = memory.scope_of_launcher(
                ctx.session.launcher_type, ctx.session.launcher_id, bot_uuid
            )
        except ValueError as exc:
            raise act.Reply(f"[Memory] This chat has no usable scope: {exc}", "bad_input") from None
        return act.Call(
            memory=memory,
            scope=scope,
            params=tuple(ctx.crt_params),
            sender_id=str(sender_id),
            sender_name=str(query_vars.get("sender_name") or ""),
            query_id=ctx.query_id,
            kb_state=kb_state,
            kb_id=kb_id,
        )
