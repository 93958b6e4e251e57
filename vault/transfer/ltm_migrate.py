"""Bring a LongTermMemory installation into a vault in one go: every chat's profiles and
memories, through the one import (vault.transfer.exchange: one mapping, one idempotence
rule, so a second run adds nothing).

The records are read at the edges (vault.transfer.langbot_data from LangBot's data folder,
the plugin's `!memory migrate ltm` through the host's vector API) and sorted per chat by
vault.transfer.ltm_records; this module imports each chat and says what happened, per
chat, in words a person can act on.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from vault.errors import BadInput
from vault.transfer.exchange import import_payload
from vault.transfer.ltm_records import Unplaced, sort_records
from vault.writes.operations import Vault

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ChatResult:
    chat: str  # session_key
    isolation: str  # how LongTermMemory shared its memories: session | bot
    result: dict[str, Any] | None  # import_payload's answer; None when refused whole
    refused_whole: str = ""  # why the chat could not be imported at all


@dataclass
class Migration:
    dry_run: bool
    chats: list[ChatResult] = field(default_factory=list)
    unplaced: list[Unplaced] = field(default_factory=list)
    probes: int = 0

    def total(self, name: str) -> int:
        return sum(c.result[name] for c in self.chats if c.result)

    @property
    def refused(self) -> int:
        per_item = sum(len(c.result["refused"]) for c in self.chats if c.result)
        return per_item + len(self.unplaced) + sum(1 for c in self.chats if c.refused_whole)

    def as_json(self) -> dict[str, Any]:
        return {
            "dry_run": self.dry_run,
            "chats": [
                {"chat": c.chat, "isolation": c.isolation, "refused_whole": c.refused_whole}
                | (c.result or {})
                for c in self.chats
            ],
            "unplaced": [{"record": u.what, "reason": u.reason} for u in self.unplaced],
            "health_probes_skipped": self.probes,
            "imported": self.total("imported"),
            "already_present": self.total("skipped"),
            "profiles": self.total("profiles"),
            "refused": self.refused,
        }


def migrate(
    vault: Vault,
    storage: Iterable[tuple[str, bytes]],
    vectors: Iterable[dict[str, Any]],
    *,
    dry_run: bool = False,
    audit_session: str | None = None,
) -> Migration:
    """Import every chat the records name (profiles first, per chat); `dry_run` writes
    nothing and counts what an import would do."""
    found = sort_records(storage, vectors, audit_session=audit_session)
    done = Migration(dry_run, unplaced=list(found.unplaced), probes=found.probes)
    for (_, _, isolation), batch in sorted(found.batches.items(), key=lambda kv: _order(kv[0])):
        chat = batch.scope.session_key if isolation == "session" else batch.scope.user_key
        try:
            # Counted first: a chat with nothing new is not written at all (no audit line,
            # no commit), so a second run of the whole migration changes nothing.
            result = import_payload(vault, batch.scope, batch.payload, dry_run=True)
            if not dry_run and (result["imported"] or result["profiles"]):
                result = import_payload(vault, batch.scope, batch.payload, source="import")
        except BadInput as exc:  # a chat whose key can have no folder: said, never written
            done.chats.append(ChatResult(chat, isolation, None, str(exc)))
            continue
        done.chats.append(ChatResult(chat, isolation, result))
        log.info(
            "event=ltm_migrate chat=%s isolation=%s dry_run=%s imported=%d present=%d "
            "refused=%d profiles=%d",
            chat,
            isolation,
            dry_run,
            result["imported"],
            result["skipped"],
            len(result["refused"]),
            result["profiles"],
        )
    return done


def _order(key: tuple[str | None, str, str]) -> tuple[str, str, str]:
    bot, session, isolation = key
    return (bot or "", isolation, session)


def _counts(result: dict[str, Any]) -> int:
    names = ("imported", "skipped", "deleted", "profiles", "profiles_skipped")
    return sum(result[n] for n in names) + len(result["refused"])


def migration_text(done: Migration) -> str:
    """Per chat: new / already imported / refused (with what to fix), then the totals."""
    verb = "would import" if done.dry_run else "imported"
    lines = [f"LongTermMemory -> MemVault{' (dry run: nothing written)' if done.dry_run else ''}"]
    empty = [c for c in done.chats if c.result is not None and not _counts(c.result)]
    for c in done.chats:
        if c in empty:
            continue
        where = "memories shared by the whole bot" if c.isolation == "bot" else "chat"
        if c.result is None:
            lines.append(f"  {where} {c.chat}: refused: {c.refused_whole}")
            continue
        r = c.result
        line = (
            f"  {where} {c.chat}: {r['imported']} new, {r['skipped']} already imported, "
            f"{len(r['refused'])} refused"
        )
        if r["deleted"]:
            line += f", {r['deleted']} deleted in LongTermMemory (not brought back)"
        if r["profiles"] or r["profiles_skipped"]:
            line += f"; profiles {r['profiles']} new, {r['profiles_skipped']} kept as they are"
        lines.append(line)
        lines += [f"    refused {x['item']}: {x['reason']}" for x in r["refused"]]
    lines += [f"  refused {u.what}: {u.reason}" for u in done.unplaced]
    if empty:  # upstream writes an empty profile for every chat and speaker it meets
        lines.append(f"  {len(empty)} chat(s) with nothing to bring (empty profiles only)")
    if done.probes:
        lines.append(f"  skipped {done.probes} leftover health-check record(s) (no memories)")
    if any(c.isolation == "bot" for c in done.chats):
        lines.append(
            "  note: memories shared by the whole bot go to bots/<bot>/episodes/ and are "
            "recalled only with MemVault's isolation set to `bot`"
        )
    lines.append(
        f"{verb} {done.total('imported')} memories and {done.total('profiles')} profiles in "
        f"{len(done.chats)} scope(s); {done.total('skipped')} already imported; "
        f"{done.refused} refused"
    )
    if not done.chats and not done.unplaced:
        lines.append("nothing found: is this LongTermMemory's data (see README, Coming from)?")
    return "\n".join(lines)
