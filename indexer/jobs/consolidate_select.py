"""Which episodes of one chat a consolidation folds into one summary: a pure selection.

Planning is pure so a preview and the run that applies it can select again from the files
and compare: the same files, settings and clock give the same selection, and anything a
person edited in between shows as a different fingerprint (the run then refuses).
Near-duplicates are judged by the embedding model's calibrated line (indexer.backends.calibration,
the one supersede uses), from vectors the caller computed; nothing here reads or writes.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np

from vault.errors import BadRequestError
from vault.format.model import CORRECTION_TAGS, Episode
from vault.format.tags import tag_keys
from vault.git.secret_guard import secrets_in
from vault.layout.store import StoredEpisode

# Why an episode was picked, in the order they are shown.
REASONS = ("superseded", "expired", "old", "low_importance", "duplicate")


@dataclass(frozen=True)
class ConsolidateSettings:
    """Thresholds of one consolidation (plugin settings, CLI flags); defaults are cautious."""

    older_than_days: int = 90
    max_importance: int = 1  # importance at or below this counts as low
    keep_importance: int = 4  # an old memory at least this important is kept (age alone)
    superseded: bool = True
    duplicates: bool = True
    max_episodes: int = 40  # one summary, one prompt: the rest waits for the next run
    min_episodes: int = 2  # folding a single memory into a "summary" gains nothing
    apply_profile_updates: bool = False

    def __post_init__(self) -> None:
        checks = [
            (self.older_than_days >= 1, "older_than_days must be 1 or more (days)"),
            (0 <= self.max_importance <= 5, "max_importance must be from 0 (none) to 5"),
            (1 <= self.keep_importance <= 6, "keep_importance must be from 1 to 6 (never)"),
            (2 <= self.max_episodes <= 200, "max_episodes must be from 2 to 200"),
            (2 <= self.min_episodes <= self.max_episodes, "min_episodes must be 2..max_episodes"),
        ]
        for ok, message in checks:
            if not ok:
                raise BadRequestError(message)

    def as_json(self) -> dict[str, object]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Reason:
    code: str  # one of REASONS
    detail: str  # for a person: "120 days old (older than 90)"
    other: str | None = None  # duplicate: the episode it repeats

    def as_json(self) -> dict[str, object]:
        return {"code": self.code, "detail": self.detail, "other": self.other}


@dataclass(frozen=True)
class Pick:
    stored: StoredEpisode
    reasons: tuple[Reason, ...]

    @property
    def id(self) -> str:
        return self.stored.episode.id


@dataclass(frozen=True)
class Selection:
    picks: tuple[Pick, ...]  # priority low first, then oldest first
    skipped: tuple[tuple[str, str], ...]  # (rel, why) qualifying files left alone
    left_over: int  # qualifying episodes beyond max_episodes (the next run takes them)
    threshold: float | None  # the duplicate line used (None: duplicates not checked)

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(p.id for p in self.picks)

    def fingerprint(self) -> str:
        """What the selection is made of: each file's bytes and why it was picked."""
        rows = [
            [p.id, p.stored.rel, p.stored.sha, [[r.code, r.other] for r in p.reasons]]
            for p in self.picks
        ]
        return digest_of({"picks": rows, "skipped": [list(s) for s in self.skipped]})


def digest_of(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def duplicate_pairs(
    ids: Sequence[str], vectors: np.ndarray, threshold: float, *, block: int = 512
) -> list[tuple[str, str, float]]:
    """(a, b, cosine) for every pair of rows at or above `threshold` (rows L2-normalised)."""
    pairs: list[tuple[str, str, float]] = []
    for start in range(0, len(ids), block):  # blocks: N x N at once would not fit for big N
        sims = vectors[start : start + block] @ vectors.T
        rows, cols = np.nonzero(sims >= threshold)
        for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
            i = start + r
            if c > i:
                pairs.append((ids[i], ids[c], float(sims[r, c])))
    return pairs


def eligible_for_duplicates(episodes: Sequence[StoredEpisode]) -> list[StoredEpisode]:
    """The episodes whose vectors select() compares: active ones with a unique id."""
    counts = Counter(s.episode.id for s in episodes)
    return [s for s in episodes if s.episode.status == "active" and counts[s.episode.id] == 1]


def select(
    episodes: Sequence[StoredEpisode],
    settings: ConsolidateSettings,
    now: datetime,
    *,
    pairs: Sequence[tuple[str, str, float]] = (),
    threshold: float | None = None,
) -> Selection:
    """The old, expired, superseded, low-importance and near-duplicate episodes of a chat.

    Archived episodes are already out of recall and stay as they are. Skipped, and named: an
    id two files state (acting on either copy could hit the wrong one), and a file holding
    what looks like a secret (a person's hand-written file: archiving would commit it).
    """
    counts = Counter(s.episode.id for s in episodes)
    by_id = {s.episode.id: s.episode for s in episodes}
    dupes: dict[str, list[tuple[str, float]]] = {}
    if settings.duplicates:
        for a, b, cosine in pairs:
            # A correction (a newer memory of the same key, or one tagged correction) is
            # never folded away as a repeat of what it corrects: only the older one is.
            if not _replaces(by_id.get(a), by_id.get(b)):
                dupes.setdefault(a, []).append((b, cosine))
            if not _replaces(by_id.get(b), by_id.get(a)):
                dupes.setdefault(b, []).append((a, cosine))
    qualifying: list[Pick] = []
    skipped: list[tuple[str, str]] = []
    for stored in episodes:
        reasons = _reasons(stored, settings, now, dupes.get(stored.episode.id, []), threshold)
        if not reasons:
            continue
        if counts[stored.episode.id] > 1:
            skipped.append((stored.rel, f"id {stored.episode.id} is stated by several files"))
            continue
        secrets = sorted({f.kind for f in secrets_in(_committed_text(stored.episode).encode())})
        if secrets:
            # Archiving rewrites and commits the file: the secret would enter git history.
            why = f"holds what looks like a secret ({', '.join(secrets)}): remove it by hand"
            skipped.append((stored.rel, why))
            continue
        qualifying.append(Pick(stored, reasons))
    # Low priority first, then oldest first: what max_episodes cuts is the rest.
    qualifying.sort(key=_pick_order)
    picks = qualifying[: settings.max_episodes]
    if len(picks) < settings.min_episodes:
        picks = []  # too few to be worth a summary: nothing changes
    return Selection(
        tuple(picks),
        tuple(sorted(skipped)),
        max(0, len(qualifying) - len(picks)) if picks else 0,
        threshold if settings.duplicates else None,
    )


def _replaces(newer: Episode | None, older: Episode | None) -> bool:
    """Does `newer` correct `older` (vault.writes.lifecycle: the newest of a key is the current)?"""
    if newer is None or older is None or newer.created_at < older.created_at:
        return False
    if newer.key and newer.key == older.key:
        return newer.created_at > older.created_at or newer.id > older.id
    return bool(set(tag_keys(newer.tags)) & CORRECTION_TAGS)


def _committed_text(ep: Episode) -> str:
    """What archiving the file would commit, as text: body and front-matter values."""
    speaker = (ep.speaker.id, ep.speaker.name or "") if ep.speaker else ()
    extra = [str(value) for _, value in ep.extra]
    return "\n".join([ep.body, ep.key or "", *ep.tags, *speaker, *extra])


def _pick_order(pick: Pick) -> tuple[bool, datetime, str, str]:
    ep = pick.stored.episode
    return (ep.priority != "low", ep.created_at, pick.id, pick.stored.rel)


def _reasons(
    stored: StoredEpisode,
    settings: ConsolidateSettings,
    now: datetime,
    dupes: list[tuple[str, float]],
    threshold: float | None,
) -> tuple[Reason, ...]:
    ep = stored.episode
    if ep.status == "archived":
        return ()
    if ep.status == "superseded":
        if not settings.superseded:
            return ()
        by = f" by {ep.superseded_by}" if ep.superseded_by else ""
        return (Reason("superseded", f"superseded{by}", ep.superseded_by),)
    found: list[Reason] = []
    if ep.is_expired(now):
        found.append(Reason("expired", f"expired on {ep.expires_at:%Y-%m-%d}"))
    age = now - ep.created_at
    # A high or critical priority spares a memory from age alone, as importance does.
    spared = ep.importance >= settings.keep_importance or ep.priority in ("high", "critical")
    if age >= timedelta(days=settings.older_than_days) and not spared:
        detail = f"{age.days} days old (older than {settings.older_than_days})"
        found.append(Reason("old", detail))
    if ep.importance <= settings.max_importance:
        detail = f"importance {ep.importance} (at most {settings.max_importance})"
        found.append(Reason("low_importance", detail))
    elif ep.priority == "low":  # `priority: low` may be consolidated first
        found.append(Reason("low_importance", "priority low"))
    for other, cosine in sorted(dupes, key=lambda d: (-d[1], d[0])):
        line = f" >= {threshold:.2f}" if threshold is not None else ""
        detail = f"says nearly what {other} says (similarity {cosine:.2f}{line})"
        found.append(Reason("duplicate", detail, other))
    return tuple(found)
