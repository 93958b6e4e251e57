"""Which memories a list or a search keeps: tag, category, priority, verified, expiring soon.

One frozen spec, parsed once from what a person or a model typed (`memvault list/search
--tag T ...`, `recall_memory`'s parameters, the console's filter controls). A listing of
files applies it with `admits`; a search hands it to the indexes, which apply the same rules
inside their queries, before ranking (indexer.retrieval.filters), so a filter never thins out a
top-k that other memories filled. Tags match by vault.format.tags.tag_key (case-folded), like the
index.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from vault.errors import BadRequestError
from vault.format.durations import parse_duration
from vault.format.model import CATEGORIES, PRIORITIES, Episode
from vault.format.tags import tag_key, tag_keys

_YES = ("yes", "true", "y", "1")
_NO = ("no", "false", "n", "0")


@dataclass(frozen=True)
class Filters:
    """Every field narrows; the default keeps everything. `tags` are tag_keys, all needed."""

    tags: tuple[str, ...] = ()
    category: str | None = None
    priority: str | None = None
    verified: bool | None = None
    expiring_within: timedelta | None = None

    def any(self) -> bool:
        return bool(
            self.tags
            or self.category is not None
            or self.priority is not None
            or self.verified is not None
            or self.expiring_within is not None
        )

    def expiry_bounds(self, now: int) -> tuple[int, int] | None:
        """(after, until) in unix seconds: expires_at must be > after and <= until."""
        if self.expiring_within is None:
            return None
        return now, now + int(self.expiring_within.total_seconds())

    def admits(self, episode: Episode, now: datetime) -> bool:
        """The rule the indexes apply, for a memory read from its file."""
        if self.tags and not set(self.tags) <= {tag_key(t) for t in episode.tags}:
            return False
        if self.category is not None and episode.category != self.category:
            return False
        if self.priority is not None and episode.priority != self.priority:
            return False
        if self.verified is not None and episode.verified != self.verified:
            return False
        if self.expiring_within is not None:
            when = episode.expires_at
            if when is None or not now < when <= now + self.expiring_within:
                return False
        return True


def parse_filters(
    *,
    tags: object = None,
    category: object = None,
    priority: object = None,
    verified: object = None,
    expiring_within: object = None,
) -> Filters:
    """From typed or sent values ("" / None = not given); a bad one raises BadRequestError
    naming the field and what to write."""
    return Filters(
        tags=_tags(tags),
        category=_choice("category", category, CATEGORIES),
        priority=_choice("priority", priority, PRIORITIES),
        verified=_verified(verified),
        expiring_within=_within(expiring_within),
    )


def _tags(raw: object) -> tuple[str, ...]:
    if raw is None or raw == "":
        return ()
    items = [raw] if isinstance(raw, str) else raw
    if not isinstance(items, list | tuple) or not all(isinstance(t, str) for t in items):
        raise BadRequestError('tag filter must be a tag or a list of tags, e.g. ["travel"]')
    return tag_keys(items)


def _choice(name: str, raw: object, options: tuple[str, ...]) -> str | None:
    if raw is None or raw == "":
        return None
    if isinstance(raw, str) and raw.strip().lower() in options:
        return raw.strip().lower()
    raise BadRequestError(f"{name} filter must be one of {', '.join(options)} (got {raw!r:.60})")


def _verified(raw: object) -> bool | None:
    if raw is None or raw == "":
        return None
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.strip().lower() in _YES:
        return True
    if isinstance(raw, str) and raw.strip().lower() in _NO:
        return False
    raise BadRequestError(f"verified filter must be yes or no (got {raw!r:.60})")


def _within(raw: object) -> timedelta | None:
    if raw is None or raw == "":
        return None
    if not isinstance(raw, str):
        raise BadRequestError(
            f"expiring_within must be a duration like 7d, 12h or 2w (got {raw!r:.60})"
        )
    return parse_duration(raw)
