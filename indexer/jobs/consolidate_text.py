"""A consolidation preview as lines a person reads: one rendering for `memvault consolidate
preview` (indexer/cli/consolidate.py) and `!memory consolidate preview` (the plugin).

Both show the same parts in the same order (what is archived and why, the summary, the
profile changes, what was dropped or skipped, what is left for a later run); only their words
and how they shorten a text differ, and each reader passes those as its `PreviewWords`. What
follows the parts (how to apply the preview) is the reader's own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from indexer.jobs.consolidate_preview import Preview


@dataclass(frozen=True)
class PreviewWords:
    """The templates of one reader (str.format fields in the comments)."""

    head: str  # {scope} {model}
    archive: str  # {n}
    pick: str  # {id} {day} {importance} {status} {why}
    summary: str  # {day} {importance} {tags}
    profile: str  # {state}
    applied: str
    not_applied: str
    dropped: str  # {what}
    skipped: str  # {rel} {why}
    left_over: str  # {n}
    day: Callable[[datetime], str]
    clip: Callable[[str, int], str]  # one line of at most that many characters
    note_chars: int | None = None  # a profile change, drop or skip clipped to this; None: whole
    blank_summary_lines: bool = True  # the summary's blank lines shown as blank lines


def preview_lines(p: Preview, words: PreviewWords) -> list[str]:
    """The parts of a preview that has a summary (one with none says so in its own words)."""
    assert p.summary is not None

    def note(text: str) -> str:
        return text if words.note_chars is None else words.clip(text, words.note_chars)

    lines = [words.head.format(scope=p.scope.label(), model=p.model)]
    lines.append(words.archive.format(n=len(p.archive)))
    for v in p.archive:
        why = "; ".join(r.detail for r in v.reasons)
        day = words.day(v.created_at)
        lines.append(
            words.pick.format(id=v.id, day=day, importance=v.importance, status=v.status, why=why)
        )
        lines.append(f"      {words.clip(v.text, 90)}")
    s = p.summary
    tags = f", tags {', '.join(s.tags)}" if s.tags else ""
    lines.append(
        words.summary.format(day=words.day(s.created_at), importance=s.importance, tags=tags)
    )
    lines.extend(
        f"  {line}" for line in s.text.splitlines() if words.blank_summary_lines or line.strip()
    )
    if p.profile_edits:
        state = words.applied if p.applies_profile_edits else words.not_applied
        lines.append(words.profile.format(state=state))
        lines.extend(f"  {note(e.describe())}" for e in p.profile_edits)
    lines.extend(words.dropped.format(what=note(d)) for d in p.dropped)
    lines.extend(words.skipped.format(rel=rel, why=note(why)) for rel, why in p.skipped)
    if p.left_over:
        lines.append(words.left_over.format(n=p.left_over))
    return lines
