"""The contract every index backend (full text, vectors) keeps; one test suite checks both."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Protocol

from indexer.backends.records import ChunkDoc, Hit
from vault.errors import Unavailable

DEFAULT_STATUSES: tuple[str, ...] = ("active",)
DEFAULT_KINDS: tuple[str, ...] = ("episode",)


class IndexLockedError(Unavailable, RuntimeError):
    """Another process holds the index writer; the message names the lock and what to do."""


class IndexMismatchError(Unavailable, RuntimeError):
    """The folder holds an index this code cannot use (other schema/model/format): rebuild it."""


class IndexMissingError(Unavailable, FileNotFoundError):
    """A reader asked for an index no writer has made yet: open it as writer once (`memvault
    reindex`). A FileNotFoundError too, for the callers that treat it like a missing file."""


def scope_keys(index_key: str | Sequence[str]) -> tuple[str, ...]:
    """The index keys a search filters on, each once, in order. A bare str is one key (it
    is also a Sequence of characters, which must never be read as keys)."""
    keys = (index_key,) if isinstance(index_key, str) else tuple(index_key)
    for key in keys:
        if not isinstance(key, str):
            raise TypeError(f"an index key is a str (got {key!r})")
    return tuple(dict.fromkeys(keys))


class SearchBackend(Protocol):
    def upsert(self, docs: Sequence[ChunkDoc]) -> None:
        """Add or replace chunks by chunk_id (replace = delete + add). Visible after commit()."""

    def delete(self, chunk_ids: Iterable[int]) -> None:
        """Remove chunks; ids the index does not hold are ignored."""

    def commit(self) -> None:
        """Make every change durable on disk and visible to search before returning."""

    def search(
        self,
        query: str,
        index_key: str | Sequence[str],
        limit: int,
        *,
        statuses: Sequence[str] = DEFAULT_STATUSES,
        kinds: Sequence[str] = DEFAULT_KINDS,
        now: int | None = None,
        allowed: Collection[int] | None = None,
    ) -> list[Hit]:
        """Best first, only chunks of `index_key` (or of any of several keys: ONE ranking,
        scores comparable across them) with those statuses and kinds, filtered inside the
        index before ranking (never a post-filter of a global top-k). With `now`
        (unix seconds), chunks whose expires_at is set and <= now are left out. `allowed`
        (field filters: indexer.retrieval.filters) keeps only those chunk ids, also before ranking;
        an empty set gives []. Any text a user types is a valid query: it never raises, an
        empty query gives []."""

    def ids(self) -> set[int]:
        """Every chunk_id the index holds (committed)."""

    def close(self) -> None: ...
