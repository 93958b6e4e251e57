"""Two host answers the injector needs every turn that change only when a knowledge base is
created, deleted or attached: MemVault's own KB list (plugin storage `kb_configs`) and the
pipeline's KB list (`list_pipeline_knowledge_bases`). Each is a host round trip, and the host
serialises them (LangBot 4.11.2, bench.host_turns: four calls in parallel 24 ms p50, two
11 ms), so they are kept here, in the plugin process, with these rules:

- This process's KnowledgeEngine creates and deletes MemVault's KBs: it calls `changed()`
  right after writing `kb_configs`, so the next turn sees a new or deleted KB at once.
- Anything else (a second plugin process, a storage edit, a KB deleted in LangBot while the
  plugin was down) is seen within REFRESH_SECONDS: an older answer is asked again.
- The pipeline's list is kept per value of the turn's `_knowledge_base_uuids` query var:
  LangBot 4.11 answers list_pipeline_knowledge_bases from that var (and which KBs exist), so
  a pipeline whose KBs changed sends another value and is asked. A host that does not send
  the var is asked every turn.
- An answer asked for before a `changed()` is not kept (it may predate the change).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

REFRESH_SECONDS = 10.0
MAX_PIPELINES = 64  # distinct `_knowledge_base_uuids` values kept (least recently used go)
KB_VAR = "_knowledge_base_uuids"

ListKey = tuple[str, ...]


@dataclass(frozen=True)
class _Kept:
    value: Any
    at: float


def list_key(query_vars: Mapping[str, Any]) -> ListKey | None:
    """The pipeline list's cache key: the turn's KB var, None when the host sent none (or
    not a list: the host's own answer for that is not worth guessing)."""
    value = query_vars.get(KB_VAR)
    if not isinstance(value, list):
        return None
    return tuple(str(v) for v in value)


class KbCache:
    def __init__(
        self, clock: Callable[[], float] = time.monotonic, refresh: float = REFRESH_SECONDS
    ) -> None:
        self._clock = clock
        self._refresh = refresh
        self._generation = 0
        self._configs: _Kept | None = None
        self._lists: OrderedDict[ListKey, _Kept] = OrderedDict()
        # Until a turn shows otherwise: then every turn asks for the list with its other calls.
        self.host_sends_var = True

    @property
    def generation(self) -> int:
        """Take it before asking the host; pass it to keep_*()."""
        return self._generation

    def changed(self, configs: Mapping[str, Any] | None = None) -> None:
        """This process wrote `kb_configs` (a KB created or deleted): forget every answer and
        keep `configs`, what was just written, as the fresh MemVault list."""
        self._generation += 1
        self._lists.clear()
        self._configs = None if configs is None else _Kept(dict(configs), self._clock())

    def _fresh(self, kept: _Kept | None) -> bool:
        return kept is not None and 0 <= self._clock() - kept.at < self._refresh

    def configs(self) -> dict[str, dict[str, Any]] | None:
        """MemVault's KBs if known and fresh, else None (ask the host)."""
        if not self._fresh(self._configs):
            return None
        assert self._configs is not None
        return dict(self._configs.value)

    def keep_configs(self, configs: Mapping[str, Any], generation: int) -> None:
        if generation == self._generation:
            self._configs = _Kept(dict(configs), self._clock())

    def asks_list_up_front(self) -> bool:
        """Ask for the pipeline's list together with the query vars (before its key is
        known): the host sends no var, or nothing fresh is kept, so a miss is likely."""
        return not self.host_sends_var or not any(self._fresh(k) for k in self._lists.values())

    def pipeline_kbs(self, key: ListKey | None) -> list[Any] | None:
        """The host's last answer for this var value if fresh, else None (ask the host)."""
        kept = self._lists.get(key) if key is not None else None
        if not self._fresh(kept):
            return None
        assert kept is not None
        self._lists.move_to_end(key)  # type: ignore[arg-type]
        return list(kept.value)

    def keep_pipeline_kbs(self, key: ListKey | None, kbs: Sequence[Any], generation: int) -> None:
        if key is None or generation != self._generation:
            return
        self._lists[key] = _Kept(list(kbs), self._clock())
        self._lists.move_to_end(key)
        while len(self._lists) > MAX_PIPELINES:
            self._lists.popitem(last=False)
