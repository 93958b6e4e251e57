"""SearchQuery: one search of one chat, as a frozen value built where the question arrives.

`memvault search`, the plugin's `recall_memory` tool and `!memory search`, the turn's
injection, the KB retrieve, the console's /search and the jobs (candidate extraction, the
isolation probe) each build ONE SearchQuery; Engine.search takes it as it is and turns it
into the ranker's indexer.retrieval.search.SearchRequest (index keys, filters as chunk ids,
the episode an id names). Construction refuses what no search can run, with a message that
says what to pass instead; equal inputs give equal values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from indexer.retrieval.filters import Filters
from indexer.retrieval.ranking import RankWeights
from indexer.retrieval.relevance import DEFAULT_FLOOR
from indexer.retrieval.search import MODES
from vault.errors import BadRequestError
from vault.layout.keys import ScopeId


@dataclass(frozen=True)
class SearchQuery:
    """Search `query` inside `scope` (and the KB `libraries` attached to its pipeline: one
    ranking, see indexer.retrieval.search). `now`: unix seconds (None: the clock); `decay`
    False: no time decay; `filters` apply inside both index queries, before ranking;
    `gate`: the message gate (indexer.gate.rules) may skip the query, then nothing passes."""

    query: str
    scope: ScopeId
    top_k: int = 5
    mode: str = "hybrid"
    speaker_id: str = ""
    # Other sender ids of the same linked person (vault.persons): their memories in THIS
    # scope rank as the current speaker's. Ranking only: the scope is never widened.
    linked_speakers: Sequence[str] = ()  # stored as a tuple
    statuses: tuple[str, ...] = ("active",)
    include_profiles: bool = False
    now: int | None = None
    decay: bool = True
    weights: RankWeights | None = None
    libraries: Sequence[ScopeId] = ()  # stored as a tuple
    floor: float = DEFAULT_FLOOR
    filters: Filters | None = None
    gate: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.query, str):
            raise BadRequestError(f"the query must be text (got {type(self.query).__name__})")
        scopes = (self.scope, *self.libraries)
        if not all(isinstance(s, ScopeId) for s in scopes):
            raise BadRequestError(
                "the scope and each library must be a ScopeId: build it with ScopeId(bot, session)"
            )
        if isinstance(self.top_k, bool) or not isinstance(self.top_k, int):
            raise BadRequestError(f"top_k must be a whole number (got {self.top_k!r})")
        if self.mode not in MODES:
            raise BadRequestError(f"mode must be one of {', '.join(MODES)} (got {self.mode!r})")
        # A list from argparse or JSON: stored as tuples, so the value is hashable and equal.
        object.__setattr__(self, "statuses", tuple(self.statuses))
        object.__setattr__(self, "libraries", tuple(self.libraries))
        object.__setattr__(self, "linked_speakers", tuple(self.linked_speakers))
