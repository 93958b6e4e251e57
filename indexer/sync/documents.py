"""One vault file -> the chunks both indexes hold (ChunkDoc), parsed with the vault parsers.

Also reading one into a manifest entry (`read_file`).

Chunk ids are not decided here: the manifest owns them (stable per path and ordinal), so
`parse_file` returns chunks with a placeholder id and `with_ids` fills them in.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from indexer.backends.chunking import chunk_text
from indexer.backends.records import ChunkDoc
from indexer.sync.disk_scan import role_of
from indexer.sync.manifest_schema import FileEntry
from vault.files.safewrite import content_hash
from vault.format.episodes import parse_episode
from vault.format.model import Episode, FormatError, Profile
from vault.format.profiles import parse_profile
from vault.format.redact_forms import episode_as_sent, redacted_name
from vault.format.tags import tag_keys
from vault.layout.layout import STATE_DIR, FileRole, is_ignored
from vault.layout.links import read_vault_file
from vault.redaction.redact import redact

log = logging.getLogger(__name__)

UNASSIGNED = -1
# A file modified this close to when we looked at it may be modified again within the same
# timestamp tick, with the same size, and the stat would hide it ("racy git"). Such an mtime
# is stored as UNTRUSTED_MTIME so the next sync hashes the file instead of trusting it.
# 2 s covers the coarsest common file systems (FAT); the cost is one extra hash.
RACY_NS = 2_000_000_000
UNTRUSTED_MTIME = -1
_NEVER_INDEXED = (".git", STATE_DIR)


@dataclasses.dataclass(frozen=True)
class ParsedFile:
    role: FileRole
    index_key: str
    docs: tuple[ChunkDoc, ...]  # chunk_id == UNASSIGNED until with_ids


def normalise_paths(root: Path, paths: Iterable[str | os.PathLike[str]]) -> list[str]:
    """Vault-relative POSIX paths worth syncing, none under another ("" = whole vault)."""
    rels: set[str] = set()
    for raw in paths:
        path = Path(raw)
        if path.is_absolute():
            try:
                path = path.relative_to(root)
            except ValueError:
                continue  # outside the vault: not ours
        rel = path.as_posix().strip("/")
        rel = "" if rel == "." else rel
        parts = rel.split("/") if rel else []
        if parts and (parts[0] in _NEVER_INDEXED or any(is_ignored(p) for p in parts)):
            continue
        rels.add(rel)
    if "" in rels:
        return [""]
    return sorted(r for r in rels if not _has_ancestor_in(r, rels))


def _has_ancestor_in(rel: str, rels: set[str]) -> bool:
    # By ancestor lookup, not pairwise: a git checkout hints ~1,000 paths at once.
    parts = rel.split("/")
    return any("/".join(parts[:n]) in rels for n in range(1, len(parts)))


def trusted_mtime(mtime_ns: int, observed_ns: int) -> int:
    """The mtime to record for a file whose stat was taken at `observed_ns` (time_ns)."""
    return mtime_ns if observed_ns - mtime_ns >= RACY_NS else UNTRUSTED_MTIME


def read_file(root: Path, rel: str) -> tuple[FileEntry | None, list[ChunkDoc]]:
    """The manifest entry (without chunk ids) and chunks of one file; None if unreadable.

    A file that does not parse gives an entry carrying the error and no chunks.
    """
    observed = time.time_ns()
    try:
        # fstat of the opened file, then its bytes: a save landing in between leaves a newer
        # stat on disk than the one recorded, so the next sync re-checks the file. Never
        # through a symbolic link (VaultLinkError is an OSError): a link is skipped.
        data, st = read_vault_file(root, rel)
    except OSError:
        return None, []
    role = role_of(root, rel)  # after the read: its folders are proven to be no links
    if role is None:
        return None, []
    mtime = trusted_mtime(st.st_mtime_ns, observed)
    entry = FileEntry(rel, st.st_size, mtime, content_hash(data), role.kind, "")
    try:
        parsed = parse_file(root, rel, data, st.st_mtime, role)
    except FormatError as exc:
        # Recorded, never fixed here (the file is the person's); the caller drops its old
        # chunks so stale text cannot answer while it is broken.
        # `plain`: the line a person at the CLI reads instead (memvault_cli.main).
        plain = f"{rel}:{exc.line}: {exc.message} (skipped; `memvault check` lists every problem)"
        log.warning(
            "sync=parse_error path=%s line=%d error=%r",
            rel,
            exc.line,
            exc.message,
            extra={"plain": plain},
        )
        return replace(entry, error=exc.message, error_line=exc.line), []
    return replace(entry, index_key=parsed.index_key), list(parsed.docs)


def index_key_of(role: FileRole) -> str:
    # Episodes are scoped by their L2 folder; profiles always belong to the session.
    if role.index_key is None:
        raise ValueError(f"a {role.kind} file has no scope key")
    return role.index_key


def parse_file(root: Path, rel: str, data: bytes, mtime: float, role: FileRole) -> ParsedFile:
    """Chunks of one file; raises vault.format.model.FormatError (with a line) if it does not
    parse."""
    key = index_key_of(role)
    if role.kind == "episode":
        episode = parse_episode(data, rel_path=rel, mtime=mtime)
        docs = episode_docs(episode, rel, key)
    else:
        profile = parse_profile(data, rel_path=rel)
        docs = profile_docs(profile, rel, role, key, mtime)
    return ParsedFile(role, key, tuple(docs))


def with_ids(docs: Sequence[ChunkDoc], chunk_ids: Sequence[int]) -> list[ChunkDoc]:
    if len(docs) != len(chunk_ids):
        raise ValueError(f"{len(docs)} chunks but {len(chunk_ids)} ids")
    return [replace(d, chunk_id=cid) for d, cid in zip(docs, chunk_ids, strict=True)]


def fingerprints(doc: ChunkDoc, fields: Mapping[str, Sequence[str] | None]) -> dict[str, str]:
    """Per backend, a hash of the doc fields it is given (None = every field but the id)."""
    prints: dict[str, str] = {}
    for name, names in fields.items():
        names = names or [f for f in doc.__dataclass_fields__ if f != "chunk_id"]
        values = repr(tuple(getattr(doc, f) for f in names)).encode("utf-8")
        prints[name] = hashlib.sha256(values).hexdigest()[:20]
    return prints


def episode_docs(episode: Episode, rel: str, index_key: str) -> list[ChunkDoc]:
    # What MemVault wrote is redacted already; a person's hand-written file may not be.
    # The index is stored under .memvault and is what recall, retrieve and injection send
    # to a model, so it holds the redacted text (the file itself is never rewritten).
    episode = episode_as_sent(episode)
    speaker_id = episode.speaker.id if episode.speaker else ""
    speaker_name = (episode.speaker.name or episode.speaker.id) if episode.speaker else ""
    # The speaker's name goes into the text itself: "what did Alice say about ..." should
    # match on the name in both indexes, and it is how the embedding models were measured.
    prefix = f"{speaker_name}: " if speaker_name else ""
    return [
        ChunkDoc(
            chunk_id=UNASSIGNED,
            episode_id=episode.id,
            path=rel,
            ordinal=ordinal,
            kind="episode",
            index_key=index_key,
            text=prefix + chunk,
            speaker_id=speaker_id,
            speaker_name=speaker_name,
            tags=episode.tags,
            status=episode.status,
            created_at=_unix(episode.created_at),
            importance=episode.importance,
            expires_at=_unix(episode.expires_at) if episode.expires_at else 0,
            priority=episode.priority,
            category=episode.category or "",
            verified=episode.verified,
            confidence=episode.confidence,
            source=episode.source,
            updated_at=_unix(episode.updated_at) if episode.updated_at else 0,
            tag_keys=tag_keys(episode.tags),
        )
        for ordinal, chunk in enumerate(chunk_text(episode.body))
    ]


def profile_docs(
    profile: Profile, rel: str, role: FileRole, index_key: str, mtime: float
) -> list[ChunkDoc]:
    if profile.is_empty():
        return []  # a fresh template says nothing worth finding
    # A hashed speaker folder name without its .id file still needs some stable name.
    speaker = (role.speaker or Path(rel).stem) if role.kind == "speaker" else ""
    # index_key holds no ":", so the speaker part cannot blur into another session's id.
    episode_id = f"profile:{index_key}" + (f":{speaker}" if speaker else "")
    created = _unix(profile.updated_at) if profile.updated_at else int(mtime)
    doc = ChunkDoc(
        chunk_id=UNASSIGNED,
        episode_id=episode_id,
        path=rel,
        ordinal=0,
        kind=role.kind,
        index_key=index_key,
        text=redact(render_profile_text(profile, speaker)).text,
        speaker_id=speaker,
        speaker_name=(redacted_name(profile.name) or "") if speaker else "",
        created_at=created,
    )
    return [doc]


def render_profile_text(profile: Profile, speaker: str = "") -> str:
    lines: list[str] = []
    if profile.name:
        lines.append(f"Name: {profile.name}")
    elif speaker:
        lines.append(f"Speaker: {speaker}")
    if profile.traits:
        lines.append("Traits: " + "; ".join(profile.traits))
    if profile.preferences:
        lines.append("Preferences: " + "; ".join(profile.preferences))
    if profile.notes:
        lines.append("Notes: " + profile.notes.strip())
    return "\n".join(lines)


def _unix(moment: datetime) -> int:
    return int(moment.timestamp())
