"""What the injector recalled in a chat's current turn, so `retrieve` does not hand the model
the same memories again (the injector owns recall).

On LangBot 4.11 the runner (LocalAgent) calls our KnowledgeEngine.retrieve for the KBs in
ITS config in the same turn the injector already recalled for; its request carries no query
id, only session_name, bot_uuid and sender_id. So the injector records, per (chat, sender),
its newest turn; `retrieve` looks the entry up and `plan_retrieve` decides:

- same question (whitespace-normalised) and this KB was searched by the injector: serve
  nothing the injector recalled (placed, or left out by its budget) and run no second search;
- another question (or a KB the injector did not search): search, minus what the injector
  placed and what an earlier retrieve of this turn served;
- no entry (the injector did not run: no sender, a failure, the KB only on the runner, or
  the entry is older than the TTL): search and serve as without an injector.

Pure state plus one lock: no LangBot types, no I/O. Bounded (LRU) and short-lived (TTL), so
a stale entry never withholds a memory from a later turn.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from vault.layout.keys import ScopeId

CAPACITY = 1024
TTL_SECONDS = 120.0

# (index_key, profile_key, sender_id): a tuple of injective parts, so two chats never share
# an entry. index_key alone is not enough: with isolation "bot" every chat of a bot has the
# same index_key, and chat B's retrieve must not withhold what chat A's prompt got.
LedgerKey = tuple[str, str, str]


def ledger_key(scope: ScopeId, sender_id: str) -> LedgerKey:
    return (scope.index_key, scope.profile_key, sender_id.strip())


def normalise(query: str) -> str:
    """The question as both sides compare it: runs of whitespace are one space."""
    return " ".join(query.split())


@dataclass(frozen=True)
class InjectorTurn:
    """One successful injector turn of one (chat, sender)."""

    query_id: int
    session_name: str
    query: str  # normalised; "" = the injector recalled nothing (no text)
    kb_ids: frozenset[str]  # the MemVault KBs whose libraries the injector searched
    recalled_ids: tuple[str, ...]  # passed the floor (placed or left out by the budget)
    placed_ids: tuple[str, ...]  # in the memory block of default_prompt
    served_ids: tuple[str, ...] = ()  # what retrieve already served in this turn
    at: float = field(default=0.0, compare=False)  # ledger clock, set by record()


@dataclass(frozen=True)
class RetrievePlan:
    search: bool
    exclude: frozenset[str]  # ids never to serve in this turn
    withheld: tuple[str, ...]  # when not searching: what the injector already recalled


def plan_retrieve(entry: InjectorTurn | None, query: str, kb_id: str) -> RetrievePlan:
    if entry is None:
        return RetrievePlan(True, frozenset(), ())
    if entry.query and normalise(query) == entry.query and kb_id in entry.kb_ids:
        # The same search already ran: its passing results were recalled by the injector
        # and its budget decided which went in. Nothing is left for retrieve to add.
        return RetrievePlan(False, frozenset(entry.recalled_ids), entry.recalled_ids)
    return RetrievePlan(True, frozenset(entry.placed_ids) | frozenset(entry.served_ids), ())


class TurnLedger:
    def __init__(
        self,
        capacity: int = CAPACITY,
        ttl: float = TTL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if capacity < 1 or ttl <= 0:
            raise ValueError("capacity must be >= 1 and ttl > 0")
        self._capacity = capacity
        self._ttl = ttl
        self._clock = clock
        self._entries: OrderedDict[LedgerKey, InjectorTurn] = OrderedDict()
        # The injector runs on the event loop, retrieve too, but either may move to a worker
        # thread; one lock keeps every read-modify-write whole.
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def clear(self, key: LedgerKey) -> None:
        """A new turn starts for this (chat, sender): the last one's entry is void."""
        with self._lock:
            self._entries.pop(key, None)

    def forget_session(self, session_name: str) -> int:
        """Void every entry of a chat, for a turn that failed before it knew bot and sender."""
        with self._lock:
            doomed = [k for k, e in self._entries.items() if e.session_name == session_name]
            for key in doomed:
                del self._entries[key]
            return len(doomed)

    def record(self, key: LedgerKey, entry: InjectorTurn) -> None:
        with self._lock:
            self._entries[key] = replace(entry, at=self._clock())
            self._entries.move_to_end(key)
            while len(self._entries) > self._capacity:
                self._entries.popitem(last=False)

    def lookup(self, key: LedgerKey) -> InjectorTurn | None:
        """The entry of this (chat, sender), or None when there is none or it expired."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            if self._clock() - entry.at > self._ttl:
                del self._entries[key]
                return None
            return entry

    def note_served(self, key: LedgerKey, query_id: int, ids: Iterable[str]) -> None:
        """Retrieve served these in the entry's turn: a second retrieve call (another KB of
        the runner) must not serve them again. Ignored when the entry changed meanwhile."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry.query_id != query_id:
                return
            served = tuple(dict.fromkeys((*entry.served_ids, *ids)))
            self._entries[key] = replace(entry, served_ids=served)


def retrieve_record(
    previous: object,
    kb_id: str,
    served_ids: Iterable[str],
    withheld_ids: Iterable[str],
    searched: bool,
    at: str,
) -> dict[str, object]:
    """The snapshot's `retrieve` after one more retrieve call of the same turn (a runner with
    two MemVault KBs calls twice): ids accumulate, `searched` is whether any call searched."""
    before = previous if isinstance(previous, dict) else {}

    def ids(name: str, new: Iterable[str]) -> list[str]:
        old = before.get(name)
        return list(dict.fromkeys([*(old if isinstance(old, list) else []), *new]))

    return {
        "served_ids": ids("served_ids", served_ids),
        "withheld_ids": ids("withheld_ids", withheld_ids),
        "searched": bool(before.get("searched")) or searched,
        "kb_ids": ids("kb_ids", [kb_id]),
        "at": at,
    }
