"""Episode files: Markdown with optional YAML front matter (DESIGN.md 5).

Only the body is required, so a note someone typed by hand is a valid episode; everything
the front matter leaves out falls back to a default that stays stable for that file.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import PurePosixPath
from typing import Any, TypeVar

from ruamel.yaml.comments import CommentedMap

from vault.model import (
    CATEGORIES,
    DEFAULT_IMPORTANCE,
    DEFAULT_SOURCE,
    SOURCES,
    STATUSES,
    Episode,
    FormatError,
    Speaker,
    default_confidence,
    default_verified,
)
from vault.yamledit import edit_value, rt_edit, split_lines
from vault.yamlio import (
    decode,
    describe,
    dump,
    field_error,
    load_block,
    parse_datetime,
    plain_value,
    to_bool,
    to_float,
    to_int,
)

# DESIGN.md 5 order; render writes known fields in this order, then extra fields.
FIELD_ORDER: tuple[str, ...] = (
    "id",
    "created_at",
    "speaker",
    "importance",
    "tags",
    "status",
    "key",
    "category",
    "source",
    "verified",
    "confidence",
    "expires_at",
    "superseded_by",
)
_DATETIME = "a date and time like 2026-11-30T04:20:00Z"
# People type Chinese commas in comma-separated tags as often as ASCII ones.
_TAG_SEPARATORS = re.compile(r"[,，]")
_T = TypeVar("_T")
_N = TypeVar("_N", int, float)


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


def derived_episode_id(rel_path: str) -> str:
    """The id of a file without one: stable for its vault-relative path until renamed."""
    posix = PurePosixPath(rel_path.replace("\\", "/")).as_posix()
    return "md_" + hashlib.sha1(posix.encode("utf-8")).hexdigest()[:12]


def _normalise_body(body: str) -> str:
    return body.replace("\r\n", "\n").replace("\r", "\n").strip()


# --------------------------------------------------------------------------- parsing


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
    body = _normalise_body(parts.body)
    if not body:
        raise FormatError(
            "episode has no text: write the memory below the front matter", parts.body_line
        )
    return _Fields(fields, lines).episode(body, rel_path, mtime)


def _kind(value: object) -> str:
    return "a list" if isinstance(value, list) else f"the text {describe(value)}"


class _Fields:
    """Front-matter values with their lines, turned into typed Episode fields."""

    def __init__(self, data: dict[str, Any], lines: dict[str, int]) -> None:
        self.data = data
        self.lines = lines

    def line(self, name: str) -> int:
        return self.lines.get(name, 1)

    def text(self, name: str, value: object = None, *, nested: bool = False) -> str | None:
        raw = value if nested else self.data.get(name)
        if raw is None:
            return None
        if not isinstance(raw, str):
            raise field_error(name, "a short text", raw, self.line(name))
        return raw.strip() or None

    def convert(self, name: str, fn: Callable[[str], _T], expected: str) -> _T | None:
        raw = self.text(name)
        if raw is None:
            return None
        try:
            return fn(raw)
        except ValueError:
            raise field_error(name, expected, raw, self.line(name)) from None

    def choice(self, name: str, options: tuple[str, ...]) -> str | None:
        raw = self.text(name)
        if raw is not None and raw.lower() not in options:
            raise field_error(name, "one of " + ", ".join(options), raw, self.line(name))
        return raw.lower() if raw is not None else None

    def ranged(self, name: str, fn: Callable[[str], _N], low: _N, high: _N, what: str) -> _N | None:
        value = self.convert(name, fn, what)
        if value is not None and not low <= value <= high:
            raise field_error(name, what, self.data[name], self.line(name))
        return value

    def speaker(self) -> Speaker | None:
        raw = self.data.get("speaker")
        if isinstance(raw, dict):
            sid = self.text("speaker", raw.get("id"), nested=True)
            name = self.text("speaker", raw.get("name"), nested=True)
            if sid is None and name is None:
                raise FormatError(
                    "speaker needs an id or a name: write speaker: {id: u42, name: Alice}",
                    self.line("speaker"),
                )
            return Speaker(sid or name or "", name)
        if isinstance(raw, list):
            raise field_error(
                "speaker", "a name or {id: ..., name: ...}", raw, self.line("speaker")
            )
        sid = self.text("speaker")
        return Speaker(sid, sid) if sid else None

    def tags(self) -> tuple[str, ...]:
        raw = self.data.get("tags")
        if raw is None:
            return ()
        items = _TAG_SEPARATORS.split(raw) if isinstance(raw, str) else raw
        if isinstance(raw, dict) or any(isinstance(i, (list, dict)) for i in items):
            raise field_error(
                "tags",
                "a list like [travel, beijing] or a comma-separated text",
                raw,
                self.line("tags"),
            )
        cleaned = (item.strip() for item in items if item is not None)
        return tuple(dict.fromkeys(tag for tag in cleaned if tag))

    def episode(self, body: str, rel_path: str, mtime: float) -> Episode:
        source = self.choice("source", SOURCES) or DEFAULT_SOURCE
        created = self.convert("created_at", parse_datetime, _DATETIME)
        if created is None:
            # Whole seconds: the value may be written back into the file by an edit.
            created = datetime.fromtimestamp(math.floor(mtime), UTC)
        importance = self.ranged("importance", to_int, 1, 5, "an integer from 1 to 5")
        verified = self.convert("verified", to_bool, "true or false")
        confidence = self.ranged("confidence", to_float, 0.0, 1.0, "a number from 0 to 1")
        return Episode(
            id=self.text("id") or derived_episode_id(rel_path),
            created_at=created,
            body=body,
            speaker=self.speaker(),
            importance=DEFAULT_IMPORTANCE if importance is None else importance,
            tags=self.tags(),
            status=self.choice("status", STATUSES) or "active",
            key=self.text("key"),
            category=self.choice("category", CATEGORIES),
            source=source,
            verified=default_verified(source) if verified is None else verified,
            confidence=default_confidence(source) if confidence is None else confidence,
            expires_at=self.convert("expires_at", parse_datetime, _DATETIME),
            superseded_by=self.text("superseded_by"),
            extra=tuple((k, v) for k, v in self.data.items() if k not in FIELD_ORDER),
        )


# --------------------------------------------------------------------------- writing


def render_episode(ep: Episode) -> str:
    """A new episode file: front matter in DESIGN.md 5 order, then the body."""
    _check(ep)
    fields: dict[str, Any] = {"id": ep.id, "created_at": ep.created_at}
    if ep.speaker is not None:
        fields["speaker"] = plain_value(ep.speaker)
    fields |= {"importance": ep.importance, "tags": list(ep.tags), "status": ep.status}
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
    return "---\n" + dump(fields) + "---\n" + _normalise_body(ep.body) + "\n"


def _check(ep: Episode) -> None:
    # Refuse to write a file that parse_episode (and `memvault check`) would reject.
    problems = [
        (not ep.id.strip(), "id is empty"),
        (not _normalise_body(ep.body), "body is empty"),
        (type(ep.importance) is not int or not 1 <= ep.importance <= 5, "importance not 1..5"),
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
