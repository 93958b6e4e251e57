"""What every `!memory` subcommand shares: the resolved invocation (`Call`), the early
answer (`Reply`) and the parsing of the chat's parameters (pages, status flags, one id).

Moved out of memory_actions.py so the subcommand modules (actions, transfer, health,
candidates, consolidate) import it without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from indexer.engine import Engine
from vault.errors import NotFoundError
from vault.layout.keys import ScopeId
from vault.layout.store import StoredEpisode
from vault.writes.operations import Vault

from .memory_views import echo

# Upstream's status vocabulary; MemVault deletes by removing the file, so `deleted` never
# matches anything but is accepted like upstream accepts it.
UPSTREAM_STATUSES = ("active", "superseded", "archived", "deleted")


class Reply(Exception):
    """Stop here and answer with this text (usage, not found, nothing to do)."""

    def __init__(self, text: str, outcome: str = "usage") -> None:
        super().__init__(text)
        self.text = text
        self.outcome = outcome


@dataclass(frozen=True)
class Call:
    """One `!memory` invocation, resolved: whose memory, who asks, with what parameters."""

    memory: Any  # memory_service.MemoryService (not imported: components load standalone)
    scope: ScopeId
    params: tuple[str, ...]
    sender_id: str
    sender_name: str
    query_id: int
    vault: Vault | None = None
    engine: Engine | None = None
    kb_state: str = "unknown"  # none | inactive | active | unknown (pipeline_memory.kb_state)
    kb_id: str | None = None
    fetched: Any = None  # what a Spec's `prepare` read from the host first (memory_migrate)

    @property
    def v(self) -> Vault:
        assert self.vault is not None
        return self.vault

    @property
    def e(self) -> Engine:
        assert self.engine is not None
        return self.engine


# -- parameter parsing ---------------------------------------------------------------


def parse_page(params: tuple[str, ...], usage: str) -> int:
    if len(params) > 1:
        raise Reply(usage)
    if not params:
        return 1
    try:
        return max(1, int(params[0]))
    except ValueError:
        raise Reply(usage) from None


def parse_statuses(params: tuple[str, ...]) -> tuple[list[str], tuple[str, ...]]:
    """Upstream's shared status flags; returns (statuses, the other parameters)."""
    statuses = ["active"]
    rest: list[str] = []
    i = 0
    while i < len(params):
        value = params[i]
        flag = {
            "--include-superseded": "superseded",
            "--include-archived": "archived",
            "--include-deleted": "deleted",
        }.get(value)
        if flag:
            if flag not in statuses:
                statuses.append(flag)
        elif value == "--all-statuses":
            statuses = sorted(UPSTREAM_STATUSES)
        elif value == "--status":
            if i + 1 >= len(params):
                raise Reply("Usage: --status <active|superseded|archived|deleted>")
            wanted = params[i + 1].strip().lower()
            if wanted not in UPSTREAM_STATUSES:
                raise Reply("status must be one of: active, superseded, archived, deleted")
            statuses = [wanted]
            i += 1
        else:
            rest.append(value)
        i += 1
    return statuses, tuple(rest)


def one_id(call: Call, usage: str) -> str:
    if len(call.params) != 1:
        raise Reply(usage)
    return call.params[0]


def find(call: Call, raw_id: str) -> StoredEpisode:
    """The episode with this id in this chat's scope; ids of other scopes are not found."""
    try:
        return call.v.find_episode(call.scope, raw_id)
    except NotFoundError:
        raise Reply(
            f"[Memory] Episode {echo(raw_id)} not found. Use !memory list (or archived, "
            "superseded) to see the ids of this chat.",
            "not_found",
        ) from None
