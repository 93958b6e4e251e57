"""What one recall found, and why it found nothing: the reason every surface shows for an
empty recall (the injection snapshot, `!memory`, the Memory Console, the recall_memory tool),
decided here from what the search itself saw, never guessed again by a caller.

`explain` (pure) takes the facts in this order, the first that holds wins:

1. `no_text`: the message has nothing to search (an image, only spaces).
2. no candidate at all came back: `rebuilding` while the index's start-up sync has not
   finished (a memory may not be indexed yet), else `no_memories` (the chat and its attached
   libraries hold none), `no_active` (none with the statuses asked for, unexpired),
   `filtered` (the field filters leave none), `no_match` (memories exist, none matched).
3. candidates came back, none passed: `gate` (the message gate skipped the message:
   "greeting"), `rebuilding` (the sync still runs: what passes may not be indexed yet),
   `floor` (best relevance below the floor, with both numbers).

Callers that know a reason no search can see build it with the same type: `unavailable`
(no index to search), `error` (the search raised), `budget` (recalled, but nothing fit the
injection budget), `filtered` after a caller's own filters (the recall tool's speaker/time
filters). Versioned (WHY_VERSION): a snapshot keeps `as_json()`, an older or newer reader
parses what it knows and shows the stored English words for a kind it does not.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from indexer.gate.rules import GateDecision
from indexer.retrieval.search import SearchResult

WHY_VERSION = "why-1"
NO_TEXT, GATE, FLOOR, REBUILDING = "no_text", "gate", "floor", "rebuilding"
NO_MEMORIES, NO_ACTIVE, FILTERED, NO_MATCH = "no_memories", "no_active", "filtered", "no_match"
UNAVAILABLE, ERROR, BUDGET = "unavailable", "error", "budget"
KINDS = (
    NO_TEXT, GATE, FLOOR, REBUILDING, NO_MEMORIES, NO_ACTIVE, FILTERED, NO_MATCH,
    UNAVAILABLE, ERROR, BUDGET,
)  # fmt: skip
DETAIL_CHARS = 200  # a reason quoting a setting or an error stays one short line
# The English wording of each form of a reason ({best} and {floor} with two decimals). The
# Memory Console's i18n files hold the same sentences as `why_<form>` (en_US equal to these).
FORMS = {
    NO_TEXT: "the message has no text to search",
    GATE: "gate ({detail})",
    FLOOR: "below the floor (best {best} < {floor})",
    REBUILDING: "index rebuilding (the start-up sync has not finished)",
    "rebuilding_best": "index rebuilding (the start-up sync has not finished; so far best {best} "
    "< {floor})",
    NO_MEMORIES: "chat has no memories",
    NO_ACTIVE: "chat has no active memories ({count} archived, superseded or expired)",
    "no_status": "chat has no {detail} memories ({count} with another status)",
    "no_status_none": "chat has no {detail} memories",
    FILTERED: "no memory matches the filters ({detail})",
    "filtered_some": "none of the {count} relevant memories matches the filters ({detail})",
    NO_MATCH: "no memory matched the message",
    UNAVAILABLE: "index unavailable ({detail})",
    ERROR: "recall failed ({detail})",
    BUDGET: "nothing fit the budget ({count} recalled, {budget} characters)",
}


def relevant(results: Sequence[SearchResult]) -> list[SearchResult]:
    """The results (in rank order) whose absolute relevance reaches the floor they were
    searched with: what injection, `retrieve`, `recall_memory` and `!memory search` use.
    Each is judged on its own: rank also weighs recency, importance and speaker, so a
    relevant memory can rank after one that is not (and must still be recalled). A result
    without a relevance (no calibration) does not pass: recalling nothing beats recalling
    the unjudged."""
    return [r for r in results if r.relevance is not None and r.relevance.passed]


@dataclass(frozen=True)
class WhyEmpty:
    """Why a recall brought nothing, with the numbers that decided it."""

    kind: str
    detail: str = ""  # gate: its reason; filtered: the filters; unavailable/error: the message
    best: float | None = None  # gate/floor/rebuilding: the best relevance of the candidates
    floor: float | None = None  # ... and the floor it was judged against
    count: int = 0  # floor/gate: candidates judged; filtered: relevant ones; budget: recalled;
    # no_active: memories held but left out; rebuilding: memories indexed so far
    budget: int = 0  # budget: the injection budget in characters
    said: str = ""  # the words a snapshot stored (a kind this version does not know)

    def form(self) -> str:
        """Which wording of FORMS this reason takes (the console translates each one)."""
        if self.kind == REBUILDING and self.best is not None:
            return "rebuilding_best"
        if self.kind == NO_ACTIVE and (self.detail or "active") != "active":
            return "no_status" if self.count else "no_status_none"
        if self.kind == FILTERED and self.count:
            return "filtered_some"
        return self.kind if self.kind in FORMS else ""

    def words(self) -> str:
        """ "gate (greeting)", "below the floor (best 0.31 < 0.44)", "chat has no memories"."""
        form = self.form()
        if not form:
            return self.said or self.kind
        best = "none" if self.best is None else f"{self.best:.2f}"
        return FORMS[form].format(
            detail=self.detail,
            best=best,
            floor=f"{self.floor or 0.0:.2f}",
            count=self.count,
            budget=self.budget,
        )

    def as_json(self) -> dict[str, Any]:
        """The snapshot's `why`: every number, and the English words for any reader."""
        return {
            "version": WHY_VERSION,
            "kind": self.kind,
            "detail": self.detail,
            "best": None if self.best is None else round(self.best, 4),
            "floor": self.floor,
            "count": self.count,
            "budget": self.budget,
            "form": self.form(),
            "words": self.words(),
        }

    @classmethod
    def from_json(cls, data: object) -> WhyEmpty | None:
        """A stored `why` (a snapshot is a file a person may edit): None when it is no
        reason at all; a kind this version does not know keeps its stored words."""
        if not isinstance(data, Mapping) or not isinstance(data.get("kind"), str):
            return None
        said = data.get("words")
        return cls(
            kind=data["kind"][:40],
            detail=_text(data.get("detail")),
            best=_number(data.get("best")),
            floor=_number(data.get("floor")),
            count=_count(data.get("count")),
            budget=_count(data.get("budget")),
            said=_text(said) if data["kind"] not in KINDS else "",
        )


FILTER_FIELDS = ("tags", "category", "priority", "verified", "expiring_within")


def filter_names(filters: object) -> tuple[str, ...]:
    """The field filters (vault.format.episode_filter.Filters) that are set, by name."""
    return tuple(n for n in FILTER_FIELDS if getattr(filters, n, None) not in (None, ()))


def limited(text: str) -> str:
    """One line of at most DETAIL_CHARS: a detail quoting an error or a setting."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= DETAIL_CHARS else flat[: DETAIL_CHARS - 1] + "…"


def unavailable(message: str) -> WhyEmpty:
    return WhyEmpty(UNAVAILABLE, limited(message))


def failed(exc: BaseException) -> WhyEmpty:
    return WhyEmpty(ERROR, limited(f"{type(exc).__name__}: {exc}"))


@dataclass(frozen=True)
class Found:
    """One recall: its results (rank order, passing or not) and why none passed."""

    results: tuple[SearchResult, ...]
    why: WhyEmpty | None  # None: something passed the floor
    gate: GateDecision | None = None  # the message gate's decision (None: gate off)

    @property
    def passed(self) -> list[SearchResult]:
        return relevant(self.results)


def explain(
    query: str,
    results: Sequence[SearchResult],
    gate: GateDecision | None,
    floor: float,
    *,
    ready: bool = True,
    counts: Callable[[], tuple[int, int]] = lambda: (0, 0),
    statuses: Sequence[str] = ("active",),
    filters: Sequence[str] = (),
) -> WhyEmpty | None:
    """Why nothing of `results` passed (None when something did). `ready`: the index's
    start-up sync has finished; `counts()`: (memories, recallable) of the searched scopes,
    read only when no candidate came back; `filters`: the names of the field filters asked
    for, when none of the scopes' memories passes them."""
    if relevant(results):
        return None
    if not query.strip():
        return WhyEmpty(NO_TEXT)
    if not results:
        if not ready:
            return WhyEmpty(REBUILDING, count=counts()[0])
        memories, recallable = counts()
        if memories == 0:
            return WhyEmpty(NO_MEMORIES)
        if recallable == 0:
            return WhyEmpty(NO_ACTIVE, "/".join(statuses), count=memories)
        if filters:
            return WhyEmpty(FILTERED, ", ".join(filters))
        if gate is not None and not gate.recall:
            return WhyEmpty(GATE, limited(gate.reason), None, floor)
        return WhyEmpty(NO_MATCH)
    judged = [r.relevance.value for r in results if r.relevance is not None]
    best = max(judged) if judged else None
    if gate is not None and not gate.recall:
        return WhyEmpty(GATE, limited(gate.reason), best, floor, len(results))
    if not ready:
        return WhyEmpty(REBUILDING, best=best, floor=floor, count=len(results))
    return WhyEmpty(FLOOR, best=best, floor=floor, count=len(results))


def _text(value: object) -> str:
    return limited(value) if isinstance(value, str) else ""


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
