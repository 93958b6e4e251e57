"""Episode files: Markdown with optional YAML front matter (DESIGN.md 5).

Only the body is required, so a note someone typed by hand is a valid episode; everything
the front matter leaves out falls back to a default that stays stable for that file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ruamel.yaml.comments import CommentedMap

from vault.format.episode_fields import FIELD_ORDER, EpisodeFields
from vault.format.ids import episode_id_problem
from vault.format.model import (
    CATEGORIES,
    PRIORITIES,
    SOURCES,
    STATUSES,
    Episode,
    FormatError,
    default_confidence,
    default_verified,
)
from vault.format.yamledit import edit_value, rt_edit, split_lines
from vault.format.yamlio import Block, decode, describe, dump, load_block, plain_value


@dataclass(frozen=True)
class FrontMatter:
    """A file cut at its front-matter markers; joining the parts gives the text back."""

    yaml: str | None  # None when the file has no front matter
    head: str  # the opening `---` line, with its line ending ("" without front matter)
    close: str  # the closing `---`/`...` line
    body: str  # everything after the closing line, untouched
    body_line: int  # 1-based file line where the body starts


def split_front_matter(text: str) -> FrontMatter:
    lines = split_lines(text)
    if not lines or not _is_marker(lines[0], ("---",)):
        return FrontMatter(None, "", "", text, 1)
    for index in range(1, len(lines)):
        if _is_marker(lines[index], ("---", "...")):
            body_line = index + 2 if index + 1 < len(lines) else index + 1
            rest = "".join(lines[index + 1 :])
            return FrontMatter("".join(lines[1:index]), lines[0], lines[index], rest, body_line)
    raise FormatError(
        "front matter opened with --- on line 1 is never closed: add a line with just --- "
        "after the last field (or remove the first --- line)",
        1,
    )


def _is_marker(line: str, markers: tuple[str, ...]) -> bool:
    # Trailing blanks are invisible in an editor, so `--- ` still counts as a marker.
    return line.rstrip(" \t\r\n") in markers


def normalise_body(body: str) -> str:
    return body.replace("\r\n", "\n").replace("\r", "\n").strip()


# --------------------------------------------------------------------------- parsing


def required_front_matter(data: bytes | str, missing: str) -> tuple[FrontMatter, Block]:
    """The cut file and its front matter as a mapping, for the files that cannot do without
    one (candidates, key events; an episode's front matter is optional): FormatError with
    `missing` when there are no --- markers."""
    text, _ = decode(data)
    parts = split_front_matter(text)
    if parts.yaml is None:
        raise FormatError(missing, 1)
    block = load_block(parts.yaml, first_line=2, what="front matter")
    if not isinstance(block.data, dict):
        raise FormatError("front matter must be `field: value` lines", 2)
    return parts, block


def parse_episode(data: bytes | str, *, rel_path: str, mtime: float) -> Episode:
    text, _ = decode(data)
    parts = split_front_matter(text)
    fields: dict[str, Any] = {}
    lines: dict[str, int] = {}
    if parts.yaml is not None:
        block = load_block(parts.yaml, first_line=2, what="front matter")
        if isinstance(block.data, dict):
            fields, lines = block.data, block.key_lines
        elif block.data is not None:
            raise FormatError(
                f"front matter must be `field: value` lines (found {_kind(block.data)}): "
                "fix the lines between the --- markers",
                2,
            )
    body = normalise_body(parts.body)
    if not body:
        raise FormatError(
            "episode has no text: write the memory below the front matter", parts.body_line
        )
    return EpisodeFields(fields, lines).episode(body, rel_path, mtime)


def _kind(value: object) -> str:
    return "a list" if isinstance(value, list) else f"the text {describe(value)}"


# --------------------------------------------------------------------------- writing


def render_episode(ep: Episode) -> str:
    """A new episode file: front matter in DESIGN.md 5 order, then the body.

    Raises ValueError unless the text reads back (parse_episode, the parser sync and `check`
    use) as exactly `ep`, body line endings aside: a writer can never save a memory that its
    own reader rejects or reads differently (e.g. a blank speaker id, a padded key).
    """
    _check(ep)
    text = _render(ep)
    try:
        back = parse_episode(text, rel_path="", mtime=ep.created_at.timestamp())
    except FormatError as exc:
        raise ValueError(f"cannot write episode {ep.id}: it would not read back: {exc}") from None
    wanted = dataclasses.replace(ep, body=normalise_body(ep.body))
    names = [f.name for f in dataclasses.fields(Episode)]
    differ = [name for name in names if getattr(back, name) != getattr(wanted, name)]
    if differ:
        raise ValueError(
            f"cannot write episode {ep.id}: {', '.join(differ)} would read back differently "
            "(blank or padded text?)"
        )
    return text


def _render(ep: Episode) -> str:
    fields: dict[str, Any] = {"id": ep.id, "created_at": ep.created_at}
    if ep.updated_at is not None:
        fields["updated_at"] = ep.updated_at
    if ep.speaker is not None:
        fields["speaker"] = plain_value(ep.speaker)
    fields |= {"priority": ep.priority, "importance": ep.importance}
    fields |= {"tags": list(ep.tags), "status": ep.status}
    optional = {"key": ep.key, "category": ep.category, "source": ep.source}
    fields |= {k: v for k, v in optional.items() if v is not None}
    if ep.verified != default_verified(ep.source):
        fields["verified"] = ep.verified
    if ep.confidence != default_confidence(ep.source):
        fields["confidence"] = ep.confidence
    if ep.expires_at is not None:
        fields["expires_at"] = ep.expires_at
    if ep.superseded_by is not None:
        fields["superseded_by"] = ep.superseded_by
    for name, value in ep.extra:
        if name in FIELD_ORDER or name in fields:
            raise ValueError(f"extra field {name!r} clashes with a known or earlier field")
        fields[name] = value
    return "---\n" + dump(fields) + "---\n" + normalise_body(ep.body) + "\n"


def _check(ep: Episode) -> None:
    # Refuse to write a file that parse_episode (and `memvault check`) would reject.
    problems = [
        (episode_id_problem(ep.id) is not None, f"id {ep.id[:40]!r} is not valid"),
        (not normalise_body(ep.body), "body is empty"),
        (type(ep.importance) is not int or not 1 <= ep.importance <= 5, "importance not 1..5"),
        (ep.priority not in PRIORITIES, f"priority {ep.priority!r}"),
        (ep.status not in STATUSES, f"status {ep.status!r}"),
        (ep.source not in SOURCES, f"source {ep.source!r}"),
        (ep.category is not None and ep.category not in CATEGORIES, f"category {ep.category!r}"),
        (not 0.0 <= ep.confidence <= 1.0, "confidence not 0..1"),
    ]
    bad = [message for failed, message in problems if failed]
    if bad:
        raise ValueError("cannot write episode: " + ", ".join(bad))


def edit_front_matter(data: bytes, changes: Mapping[str, object], *, current: Episode) -> bytes:
    """Set top-level front-matter keys, leaving every other byte of the file as it was.

    `id` and `created_at` are written from `current` when the file does not state them, so
    an edit (which changes the file's mtime) never changes the episode's id or date.
    """
    text, bom = decode(data)
    first = split_lines(text)[:1]
    newline = "\r\n" if first and first[0].endswith("\r\n") else "\n"
    parts = split_front_matter(text)
    stated: dict[str, Any] = {}
    if parts.yaml is not None:
        loaded = load_block(parts.yaml, first_line=2, what="front matter").data
        stated = loaded if isinstance(loaded, dict) else {}
    pinned = {
        name: value
        for name, value in (("id", current.id), ("created_at", current.created_at))
        if not str(stated.get(name) or "").strip() and name not in changes
    }
    if parts.yaml is None:
        fields = {k: plain_value(v) for k, v in (pinned | dict(changes)).items()}
        front = dump(fields).replace("\n", newline)
        new_text = f"---{newline}{front}---{newline}{text}"
    else:

        def mutate(root: CommentedMap) -> None:
            for name, value in pinned.items():
                if name in root:
                    root[name] = edit_value(value)
                else:  # id first, created_at right after it, as DESIGN.md 5 orders them
                    at = list(root).index("id") + 1 if name == "created_at" and "id" in root else 0
                    root.insert(at, name, edit_value(value))
            for name, value in changes.items():
                root[name] = edit_value(value)

        front = rt_edit(parts.yaml, mutate, newline=newline)
        new_text = parts.head + front + parts.close + parts.body
    # Never hand back a file that would no longer parse (e.g. status: bogus).
    parse_episode(new_text, rel_path="", mtime=current.created_at.timestamp())
    return (b"\xef\xbb\xbf" if bom else b"") + new_text.encode("utf-8")
