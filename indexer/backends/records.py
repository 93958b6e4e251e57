"""What the indexes hold: chunks of vault files, parsed once and passed around frozen.

One episode becomes one or more chunks (long bodies are split by heading and paragraph);
profiles become one chunk each. A chunk's `chunk_id` is the integer id used by both the
text index and the vector index; the manifest allocates it and keeps it stable while the
chunk's file and position are unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ChunkDoc:
    chunk_id: int
    episode_id: str  # episode id, or "profile:<index_key>[:<speaker>]" for profiles
    path: str  # vault-relative POSIX path of the file it came from
    ordinal: int  # position of the chunk inside its file, from 0
    kind: str  # episode | profile | speaker
    # The scope filter of both indexes (vault.layout.keys.index_key; profiles: profile_index_key),
    # injective unlike LangBot's joined user_key, which is only ever displayed.
    index_key: str
    text: str  # what is embedded and full-text indexed
    speaker_id: str = ""
    speaker_name: str = ""
    tags: tuple[str, ...] = ()
    status: str = "active"
    created_at: int = 0  # unix seconds, UTC
    importance: int = 2
    expires_at: int = 0  # unix seconds, 0 = never
    # The Synapse fields, so filters apply inside the index query and ranking needs no file.
    # Profiles keep the defaults (they have none of these).
    priority: str = "normal"  # vault.format.model.PRIORITIES
    category: str = ""  # "" = none
    verified: bool = True
    confidence: float = 1.0
    source: str = "user"
    updated_at: int = 0  # unix seconds, 0 = never written by MemVault
    # vault.format.tags.tag_key of each tag: what a tag filter matches (`tags` is for display).
    tag_keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class Hit:
    """One ranked chunk from one index, before fusion."""

    chunk_id: int
    score: float
