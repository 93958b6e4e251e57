"""One health line, in two forms: the English sentence `!memory health`, `memvault status`
and API readers get, and a code + parameters the Memory Console turns into the reader's
language (console/web/i18n `health_<code>`, its `{name}`s filled from the parameters).

A Check still is the `(level, message)` pair every caller unpacks, compares and prints as
JSON; `code` and `params` ride along. HEALTH_CODES is the vocabulary: every code a check
can say and the parameters its message uses. tests/console/test_i18n_keys.py fails when a
code has no message in a language, or when a message and its code disagree on the names.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Literal

log = logging.getLogger(__name__)

Level = Literal["OK", "WARN", "ERROR"]
Param = str | int | float | None

HEALTH_CODES: dict[str, tuple[str, ...]] = {
    # the vault folder and its files
    "vault_writable": ("root",),
    "vault_not_writable": ("root", "error"),
    "files_ok": ("files",),
    "files_problems": ("count", "files"),
    # git
    "git_off": (),
    "git_on": (),
    "git_not_repo": ("root",),
    "git_commit_failing": ("count", "since", "paths", "reason"),
    "git_interrupted": ("count",),
    "hand_edits_none": (),
    "hand_edits": ("count", "paths", "root"),
    "hand_edits_unknown": ("error",),
    # replicas (vault.git.syncstate)
    "sync_ok": ("remote", "at"),
    "sync_failing": ("remote", "at", "error"),
    "sync_conflicts": ("count", "paths"),
    # the index and its watcher
    "index_unavailable": (),
    "index_writer": ("chunks", "files", "embedding"),
    "index_reader": ("chunks", "files", "embedding"),
    "index_rebuilding": ("target",),
    "index_model_mismatch": ("stored", "active"),
    "index_skipped": ("count", "first"),
    "index_duplicate_ids": ("count", "first"),
    "watcher_none": (),
    "watcher_backlog": ("pending", "age", "since"),
    "watcher_backlog_never": ("pending", "age"),
    "watch_limits": ("watches", "instances", "fallback"),
    "watch_cannot": ("root", "error"),
    "watch_root_gone": ("root",),
    # the embedder
    "embedding_ok": ("identity", "ms"),
    "embedding_failed": ("identity", "error"),
    "embedding_wrong_size": ("identity",),
    # the isolation probe
    "probe_skipped": (),
    "probe_pass": ("isolation",),
    "probe_own_missing": ("side",),
    "probe_leak_search": ("side", "id"),
    "probe_leak_list": ("side", "ids"),
    "probe_leak_action": ("action", "side", "other"),
    "probe_leak_chat": ("id",),
    "probe_error": ("error",),
    "probe_clean": (),
    "probe_leftovers": ("items",),
    # a line only a host knows (a setting it ignored...): shown as written
    "text": ("text",),
}


class Check(tuple[str, str]):
    """(level, message), plus the `code` and `params` the console translates."""

    code: str
    params: dict[str, Param]

    def __new__(
        cls, level: Level, message: str, code: str, params: Mapping[str, Param] | None = None
    ) -> Check:
        self = super().__new__(cls, (level, message))
        self.code = code
        self.params = dict(params or {})
        wanted = HEALTH_CODES.get(code)
        if wanted is None or set(wanted) != set(self.params):
            # A slip in a check must not take the health page down: the console then shows
            # the English message (and this log line says what to fix).
            log.error("memvault=health_code_mismatch code=%s params=%s", code, sorted(self.params))
        return self

    @property
    def level(self) -> str:
        return self[0]

    @property
    def message(self) -> str:
        return self[1]


def as_check(item: tuple[str, str]) -> Check:
    """A plain (level, text) pair (a host's own line) as a Check shown as written."""
    if isinstance(item, Check):
        return item
    level, text = item
    return Check(level, text, "text", {"text": text})  # type: ignore[arg-type]
