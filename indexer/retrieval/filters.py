"""Field filters (tag, category, priority, verified, expiring within) inside the index query.

The spec is vault.format.episode_filter.Filters (re-exported here): parsed once from a command
line, a tool call or a console request. A search turns it into the set of chunk ids that
pass, read from the manifest's docs of the searched scopes only (files_index_key), and both
backends take that set as one more filter of their query, next to the scope and the status
(TextIndex: a chunk_id term set; VectorIndex: part of the row mask). So the filter runs
before ranking: a memory that matches is found even when hundreds that do not would outrank
it, which a post-filter of a top-k would lose.

The rules are the ones `Filters.admits` applies to a file, over the indexed doc instead:
tags by vault.format.tags.tag_key (the index stores `tag_keys`), expiry in unix seconds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from vault.format.episode_filter import Filters, parse_filters

__all__ = ["Filters", "allowed_chunks", "filter_sql", "parse_filters"]

_FIELD = "json_extract(c.doc, '$.{name}')"


class ChunkSource(Protocol):
    def scope_chunk_ids(
        self, index_keys: Sequence[str], where: str, params: Sequence[object] = ()
    ) -> set[int]: ...


def filter_sql(filters: Filters, now: int) -> tuple[str, list[object]]:
    """The SQL condition over a file's first-chunk doc `c.doc` and its bound values.
    Only constant text is formatted in; every value a person typed is a parameter."""
    clauses = [f"{_FIELD.format(name='kind')} = 'episode'"]
    params: list[object] = []
    for key in filters.tags:  # every tag asked for, each matched case-folded
        clauses.append("EXISTS (SELECT 1 FROM json_each(c.doc, '$.tag_keys') WHERE value = ?)")
        params.append(key)
    for name in ("category", "priority"):
        value = getattr(filters, name)
        if value is not None:
            clauses.append(f"{_FIELD.format(name=name)} = ?")
            params.append(value)
    if filters.verified is not None:
        # JSON true/false read back as 1/0; a doc indexed before the field counts as verified.
        clauses.append(f"COALESCE({_FIELD.format(name='verified')}, 1) = ?")
        params.append(1 if filters.verified else 0)
    bounds = filters.expiry_bounds(now)
    if bounds is not None:  # 0 = never expires, so `> now` leaves those out too
        expires = _FIELD.format(name="expires_at")
        clauses.append(f"{expires} > ? AND {expires} <= ?")
        params.extend(bounds)
    return " AND ".join(clauses), params


def allowed_chunks(
    source: ChunkSource, index_keys: Sequence[str], filters: Filters, now: int
) -> frozenset[int] | None:
    """The chunk ids of these scopes the filters let through; None = no filter asked."""
    if not filters.any():
        return None
    where, params = filter_sql(filters, now)
    return frozenset(source.scope_chunk_ids(index_keys, where, params))
