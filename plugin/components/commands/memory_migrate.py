"""`!memory migrate ltm [--dry-run] [--kb <uuid>]`: bring LongTermMemory's memories (L2) of
every chat across in one go, through the host's vector API.

A thin adapter. `fetch` (on the event loop) finds LongTermMemory's knowledge base (every
knowledge base of the workspace but MemVault's own, whose rows carry upstream's metadata:
`user_key` and `content`) and lists all of it with `vector_list`, which LangBot 4.11.2 allows
any plugin of the workspace (pkg/rag/service/runtime.py checks the workspace only).
`migrate_ltm` (off the loop) imports it with vault.transfer.ltm_migrate, the code
`memvault migrate ltm` runs: one mapping, one idempotence rule, a second run adds nothing.

The profiles (L1) cannot come this way: LangBot gives a plugin only its own storage. The
reply says how to bring them (the CLI reads LangBot's database; or upstream's export).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import Any

from memvault_plugin import pipeline_memory as pm

from vault.transfer.ltm_migrate import migrate, migration_text

from .memory_call import Call, Reply

log = logging.getLogger(__name__)

USAGE = "Usage: !memory migrate ltm [--dry-run] [--kb <knowledge base uuid>]"
PAGE = 100  # rows per vector_list call (Milvus caps offset + limit at 16384)
L1_NOTE = (
    "Profiles (L1) stay in LongTermMemory's own plugin storage, which LangBot lets no other "
    "plugin read. Bring them all with `memvault migrate ltm --langbot-data <LangBot's data "
    "folder>` on the LangBot machine, or per chat: `!memory export` in LongTermMemory, then "
    "`!memory import l2 <that JSON>` here. Do not uninstall LongTermMemory with its data "
    "deleted before that."
)


@dataclass(frozen=True)
class Fetched:
    dry_run: bool
    kbs: tuple[str, ...]  # the knowledge bases read
    vectors: list[dict[str, Any]] = field(default_factory=list)


def parse(params: tuple[str, ...]) -> tuple[bool, str | None]:
    if not params or params[0] != "ltm":
        raise Reply(USAGE)
    dry, kb, rest = False, None, list(params[1:])
    while rest:
        word = rest.pop(0)
        if word == "--dry-run":
            dry = True
        elif word == "--kb" and rest:
            kb = rest.pop(0)
        else:
            raise Reply(USAGE)
    return dry, kb


def looks_upstream(item: Any) -> bool:
    meta = item.get("metadata") if isinstance(item, dict) else None
    return isinstance(meta, dict) and "user_key" in meta and "content" in meta


async def _rows(plugin: Any, kb: str, *, detect: bool) -> list[dict[str, Any]] | None:
    """Every row of `kb`; None when `detect` and its first page holds no upstream row."""
    rows: list[dict[str, Any]] = []
    while True:
        page = await plugin.vector_list(
            collection_id=kb, filters=None, limit=PAGE, offset=len(rows)
        )
        items = [i for i in (page or {}).get("items") or [] if isinstance(i, dict)]
        if detect and not rows and not any(looks_upstream(i) for i in items):
            return None
        rows += items
        total = (page or {}).get("total", -1)
        if len(items) < PAGE or (isinstance(total, int) and 0 <= total <= len(rows)):
            return rows


ADMIN = 2  # LangBot's privilege of a command sent from a chat that is an admin of the bot
NOT_ADMIN = (
    "[Memory] Only a bot admin can migrate (it reads every chat of LongTermMemory's knowledge "
    "base and names them): LangBot: Bots -> this bot -> admins; or run `memvault migrate ltm "
    "--langbot-data <LangBot's data folder>` on the LangBot machine."
)


async def fetch(plugin: Any, call: Call) -> Call:
    dry, kb = parse(call.params)
    if call.privilege < ADMIN:
        raise Reply(NOT_ADMIN, "forbidden")
    own = set(await pm.memory_kb_configs(plugin))
    if kb is not None:
        wanted = [kb]
    else:
        listed = await plugin.list_knowledge_bases()
        wanted = [str(k.get("uuid")) for k in listed if k.get("uuid") and k["uuid"] not in own]
    read: list[str] = []
    vectors: list[dict[str, Any]] = []
    for uuid in wanted:
        try:
            rows = await _rows(plugin, uuid, detect=kb is None)
        except Exception as exc:  # noqa: BLE001 - a KB of another engine may refuse listing
            if kb is not None:
                raise Reply(
                    f"[Memory] Cannot list knowledge base {uuid}: {exc}", "bad_input"
                ) from None
            log.info("event=ltm_migrate_skip kb=%s error=%r", uuid, str(exc))
            continue
        if rows is not None:
            read.append(uuid)
            vectors += rows
    log.info("event=ltm_migrate_fetch kbs=%s rows=%d dry_run=%s", read, len(vectors), dry)
    return replace(call, fetched=Fetched(dry, tuple(read), vectors))


def migrate_ltm(call: Call) -> str:
    fetched: Fetched = call.fetched
    if not fetched.kbs:
        return (
            "[Memory] No LongTermMemory knowledge base found in this workspace (none of its "
            "rows carry LongTermMemory's user_key). Name it: !memory migrate ltm --kb <uuid>.\n"
            + L1_NOTE
        )
    done = migrate(
        call.v, [], fetched.vectors, dry_run=fetched.dry_run, audit_session=call.scope.session
    )
    lines = [f"[Memory] Read {len(fetched.vectors)} row(s) of {', '.join(fetched.kbs)}."]
    lines.append(migration_text(done))
    mine = call.memory.settings.isolation
    if any(c.isolation != mine for c in done.chats):
        lines.append(
            f"Warning: MemVault's isolation is `{mine}`; memories LongTermMemory kept "
            f"{'per chat' if mine == 'bot' else 'for the whole bot'} are recalled only "
            f"with isolation `{'session' if mine == 'bot' else 'bot'}`."
        )
    lines.append(L1_NOTE)
    return "\n".join(lines)
