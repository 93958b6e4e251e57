"""The duplicate check of a process that holds an index (vault.writes.duplicates says which
memories a write is compared with, and why a correction never is a duplicate).

`EngineDuplicates` is the Vault's finder once an engine is attached (Engine.attach, or
`install` for a read-only engine):

1. exact: the scope's active episodes as the index's manifest holds them (one SQL read, no
   model, no vectors), the same folded text; the file is then read to confirm it (the file
   is the truth: edited since, it is not what the manifest says);
2. near: a vector search inside the scope's own index_key for the text as the index embeds
   an episode ("<speaker>: <text>", indexer.sync.documents); a memory at or above the
   model's calibrated duplicate line (indexer.backends.calibration.Calibration.
   duplicate_line, or cross_language_line between a Chinese and an English text; both
   measured by bench/dedupe.py) whose names, numbers and negation agree
   with the write's (indexer.same_fact, both texts with their speaker's name, as embedded)
   is the duplicate. Memories of the write's own `key` are skipped:
   the write is their update.

While the index rebuilds its vectors for a new embedding model, the old model keeps
answering (Engine.start_rebuild) and its own calibrated line applies, until the swap. When
the vectors cannot be searched (a provider or the host's vector store refusing), the near
rule is skipped with one warning and the exact one still applies; a write is never refused
because the check could not run. What the index has not read yet (a start-up catch-up still
running, a hand edit inside the debounce) is not found by either rule.
"""

from __future__ import annotations

import logging
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from indexer.backends.calibration import Calibration, calibrate
from indexer.backends.chunking import chunk_text
from indexer.backends.records import ChunkDoc
from indexer.retrieval.search import SearchRequest
from indexer.same_fact import differs, is_chinese
from vault.errors import Unavailable
from vault.format.model import Episode, FormatError
from vault.layout.store import StoredEpisode, VaultReader, read_episode_file
from vault.writes.duplicates import Duplicate, KnownTexts, Probe, comparable, folded

if TYPE_CHECKING:
    from indexer.backends.embeddings import Embedder
    from indexer.retrieval.search import SearchResult
    from indexer.sync.manifest import Manifest
    from vault.writes.operations import Vault


class Index(Protocol):
    """What the check needs of an indexer.engine.Engine (which installs it: not imported)."""

    root: Path
    manifest: Manifest
    embedder: Embedder

    def run(self, request: SearchRequest) -> list[SearchResult]: ...


log = logging.getLogger(__name__)

CANDIDATES = 8  # nearest chunks looked at: the duplicate, if any, is among the first
_ACTIVE_EPISODES = (
    "json_extract(doc, '$.kind') = 'episode' AND json_extract(doc, '$.status') = 'active'"
)


@lru_cache(maxsize=1 << 16)
def _folded(text: str) -> str:
    """`folded`, remembered: a process that holds an index checks every write against the
    whole chat (0.1 s a check for 10,000 memories folded afresh)."""
    return folded(text)


def line_between(scale: Calibration, a: str, b: str) -> float:
    """The duplicate line for texts `a` and `b`: the cross-language one when one of them is
    Chinese and the other not."""
    same = is_chinese(a) == is_chinese(b)
    return scale.duplicate_line if same else scale.cross_language_line


def probe_text(probe: Probe) -> str:
    """The probe as the index embeds an episode: its speaker's name first."""
    return f"{probe.speaker_name}: {probe.body}" if probe.speaker_name else probe.body


def episode_text(episode: Episode) -> str:
    """An episode as the index embeds it (the same rule as `probe_text`)."""
    who = episode.speaker
    name = (who.name or who.id) if who else ""
    return f"{name}: {episode.body}" if name else episode.body


def unprefixed(text: str, speaker_name: str) -> str:
    """A chunk's text without the speaker prefix the index adds."""
    prefix = f"{speaker_name}: " if speaker_name else ""
    return text[len(prefix) :] if prefix and text.startswith(prefix) else text


class EngineDuplicates:
    def __init__(self, engine: Index, reader: VaultReader) -> None:
        self.engine = engine
        self.reader = reader

    def find(self, probe: Probe, chat: KnownTexts | None = None) -> Duplicate | None:
        exact = chat.exact(probe) if chat is not None else self.exact(probe)
        if exact is not None:
            return exact
        try:
            return self.near(probe)
        except Unavailable as exc:  # the embedding provider or the host's vector store
            log.warning(
                "event=duplicate_check_degraded scope=%s rule=near error=%r: only exact "
                "repeats were looked for",
                probe.scope.session_key,
                str(exc),
            )
            return None

    def exact(self, probe: Probe) -> Duplicate | None:
        pieces = chunk_text(probe.body)
        wanted = folded(pieces[0]) if pieces else ""
        rows = self.engine.manifest.scope_texts(probe.scope.index_key, _ACTIVE_EPISODES)
        for episode_id, path, text, speaker_name, _ in rows:  # newest first: it is named
            if episode_id in probe.ignore or _folded(unprefixed(text, speaker_name)) != wanted:
                continue
            stored = self._read(episode_id, path)
            if stored is None or not comparable(stored.episode, probe):
                continue
            if folded(stored.episode.body) == folded(probe.body):  # the file, as it is now
                return Duplicate(stored.episode, stored.rel, "exact")
        return None

    def near(self, probe: Probe) -> Duplicate | None:
        scale = calibrate(self.engine.embedder)
        line = min(scale.duplicate_line, scale.cross_language_line)
        request = SearchRequest(
            query=probe_text(probe),
            index_key=probe.scope.index_key,
            top_k=CANDIDATES,
            mode="vector",
            fusion="rrf",
        )
        best: dict[str, tuple[float, ChunkDoc]] = {}
        for result in self.engine.run(request):
            cosine = result.explain["sources"]["vector"]["raw"]
            doc = result.doc
            if cosine is None or cosine < line or doc.episode_id in probe.ignore:
                continue
            if doc.episode_id not in best or cosine > best[doc.episode_id][0]:
                best[doc.episode_id] = (cosine, doc)
        for cosine, doc in sorted(best.values(), key=lambda item: -item[0]):
            stored = self._read(doc.episode_id, doc.path)
            if stored is None or not comparable(stored.episode, probe):
                continue
            if probe.key and stored.episode.key == probe.key:
                continue  # the write updates the memory of its key
            if cosine < line_between(scale, probe.body, stored.episode.body):
                continue  # the same language: the higher line
            # With the speakers' names: "I went there" said by Caroline is about Caroline.
            if why := differs(probe_text(probe), episode_text(stored.episode)):
                log.info(
                    "event=duplicate_rejected of=%s cosine=%.3f reason=%s", doc.episode_id,
                    cosine, why,
                )  # fmt: skip
                continue
            return Duplicate(stored.episode, stored.rel, "near", float(cosine))
        return None

    def _read(self, episode_id: str, path: str) -> StoredEpisode | None:
        """The episode file as it is now (gone, unreadable or renamed since: None)."""
        layout = self.reader.layout
        try:
            stored = read_episode_file(layout, layout.root / path)
        except (OSError, UnicodeDecodeError, FormatError):
            return None
        return stored if stored.episode.id == episode_id else None


def install(vault: Vault, engine: Index) -> None:
    """Make `engine` the duplicate check of every write through `vault`."""
    vault.duplicates = EngineDuplicates(engine, vault)
