"""The reference memory of the knowledge bases a chat's pipeline attaches (MemVault
knowledge bases, plugin knowledge_store): each KB's own scope `bots/_nobot/sessions/kb_<kb
id>/`, searched in ONE pool with the chat's own memory (indexer.retrieval.search)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from vault.layout.keys import ScopeId
from vault.layout.names import UnsafeNameError
from vault.writes.operations import Vault

log = logging.getLogger(__name__)

LIBRARY_PREFIX = "kb_"


def library_scope(kb_id: str) -> ScopeId:
    """The KB's own scope. Always session-isolated: in `bot` isolation a no-bot scope would
    otherwise land in the shared `global` key."""
    return ScopeId(None, f"{LIBRARY_PREFIX}{kb_id}", "session")


def present_libraries(vault: Vault, libraries: Sequence[ScopeId]) -> tuple[ScopeId, ...]:
    """The libraries (attached to THIS pipeline) that hold episodes, each once: what a
    search passes as `libraries` so they rank in ONE pool with the chat's own memory
    (indexer.retrieval.search; ranking separate searches would rescale a lone weak library hit to a
    perfect score). A library whose folder is unsafe (e.g. a symlink) is skipped, logged."""
    present: dict[str, ScopeId] = {}
    for library in libraries:
        try:
            found = vault.layout.episodes_dir(library).is_dir()  # a stat, not a scan
        except UnsafeNameError as exc:
            log.warning("memvault=library_skipped library=%s error=%r", library.label(), str(exc))
            continue
        if found:
            present.setdefault(library.index_key, library)
    return tuple(present.values())
