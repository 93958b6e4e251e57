"""LongTermMemory's `exact_match_boost`: a query that IS an episode id, a speaker or a tag
finds that memory first.

Pure and versioned. The rule looks at the whole query only (stripped, any case for names and
tags), so a question that merely mentions a name or a tag ranks exactly as before: it never
matches. An id needs no index to be found: Engine.search reads the episode with that id from
the scope's manifest (`pinned`), so a query like `ep-20260101-a1b2` answers that memory even
when no word of its text matches. Ranking: an id match comes before a speaker or tag match,
which comes before everything else; inside a tier the normal score decides.
"""

from __future__ import annotations

from indexer.backends.records import ChunkDoc
from vault.format.tags import tag_key

EXACT_VERSION = "exact-1"
# Tier of each kind of match (higher ranks first); no match is tier 0.
TIERS: dict[str, int] = {"id": 2, "speaker": 1, "tag": 1}
# A speaker name or tag shorter than this is too common a word to mean "that one".
MIN_NAME_CHARS = 2


def exact_kind(query: str, doc: ChunkDoc) -> str | None:
    """Which field of `doc` the whole query equals: "id", "speaker", "tag", or None."""
    wanted = query.strip()
    if not wanted or doc.kind != "episode":
        return None
    if wanted == doc.episode_id:  # ids are case-sensitive, as the vault stores them
        return "id"
    if len(wanted) < MIN_NAME_CHARS:
        return None
    folded = wanted.casefold()
    names = (doc.speaker_name, doc.speaker_id)
    if any(name and folded == name.strip().casefold() for name in names):
        return "speaker"
    key = tag_key(wanted)
    if key and any(tag_key(tag) == key for tag in doc.tags):
        return "tag"
    return None


def tier(kind: str | None) -> int:
    return TIERS.get(kind or "", 0)
