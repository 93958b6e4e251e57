"""Episode front matter read field by field: the known fields, their rules and defaults.

Each value is checked where it is read, so an error names the field and its line; a field
the front matter leaves out gets the default DESIGN.md 5 gives it (the id from the path,
the date from the file's mtime).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import PurePosixPath
from typing import Any, TypeVar

from vault.format.ids import episode_id_problem
from vault.format.model import (
    CATEGORIES,
    DEFAULT_IMPORTANCE,
    DEFAULT_SOURCE,
    PRIORITIES,
    SOURCES,
    STATUSES,
    Episode,
    FormatError,
    Speaker,
    default_confidence,
    default_verified,
    importance_priority,
)
from vault.format.tags import normalise_tags
from vault.format.yamlio import (
    describe,
    field_error,
    parse_datetime,
    to_bool,
    to_float,
    to_int,
)

# DESIGN.md 5 order; render writes known fields in this order, then extra fields.
FIELD_ORDER: tuple[str, ...] = (
    "id",
    "created_at",
    "updated_at",
    "speaker",
    "priority",
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
# What a date field must hold, in every front-matter message (episodes, candidates, events).
DATETIME_EXPECTED = "a date and time like 2026-11-30T04:20:00Z"
# People type Chinese commas in comma-separated tags as often as ASCII ones.
_TAG_SEPARATORS = re.compile(r"[,，]")
_T = TypeVar("_T")
_N = TypeVar("_N", int, float)


def derived_episode_id(rel_path: str) -> str:
    """The id of a file without one: stable for its vault-relative path until renamed."""
    posix = PurePosixPath(rel_path.replace("\\", "/")).as_posix()
    return "md_" + hashlib.sha1(posix.encode("utf-8")).hexdigest()[:12]


def clean_text(value: str | None) -> str | None:
    """A short text field as the parser reads it back: stripped, blank = not given."""
    return (value.strip() or None) if value else None


class EpisodeFields:
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
        return clean_text(raw)

    def episode_id(self, rel_path: str) -> str:
        stated = self.text("id")
        if stated is None:
            return derived_episode_id(rel_path)
        if (problem := episode_id_problem(stated)) is not None:
            raise FormatError(
                f"id {describe(stated)} is not valid: {problem}; change the id line, or "
                "delete it so the file gets an id from its path",
                self.line("id"),
            )
        return stated

    def file_id(self, rel_path: str, problem: Callable[[str], str | None]) -> str:
        """The `id` line, else the file's name without `.md` (a candidate's, an event's);
        FormatError when `problem` finds it breaks the id rule."""
        stem = rel_path.rsplit("/", 1)[-1].removesuffix(".md")
        ident = self.text("id") or stem
        if (why := problem(ident)) is not None:
            raise FormatError(f"id {describe(ident)} is not valid: {why}", self.line("id"))
        return ident

    def required_text(self, name: str, example: str) -> str:
        value = self.text(name)
        if value is None:
            raise FormatError(f"{name} is missing: add `{name}: {example}`", self.line(name))
        return value

    def required_choice(self, name: str, options: tuple[str, ...]) -> str:
        value = self.choice(name, options)
        if value is None:
            raise FormatError(
                f"{name} is missing: add `{name}: {options[0]}` (one of {', '.join(options)})",
                self.line(name),
            )
        return value

    def required_moment(self, name: str) -> datetime:
        value = self.moment(name)
        if value is None:
            raise FormatError(f"{name} is missing: add `{name}: 2026-11-30T04:20:00Z`", 2)
        return value

    def extra(self, known: tuple[str, ...] | frozenset[str]) -> tuple[tuple[str, Any], ...]:
        """The fields MemVault does not know, kept as written (in file order)."""
        return tuple((k, v) for k, v in self.data.items() if k not in known)

    def convert(self, name: str, fn: Callable[[str], _T], expected: str) -> _T | None:
        raw = self.text(name)
        if raw is None:
            return None
        try:
            return fn(raw)
        except ValueError:
            raise field_error(name, expected, raw, self.line(name)) from None

    def moment(self, name: str) -> datetime | None:
        return self.convert(name, parse_datetime, DATETIME_EXPECTED)

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
        # [Hobby, hobby] is one tag, shown as first written (vault.format.tags).
        return normalise_tags(item for item in items if item is not None)

    def episode(self, body: str, rel_path: str, mtime: float) -> Episode:
        source = self.choice("source", SOURCES) or DEFAULT_SOURCE
        created = self.moment("created_at")
        if created is None:
            # Whole seconds: the value may be written back into the file by an edit.
            created = datetime.fromtimestamp(math.floor(mtime), UTC)
        importance = self.ranged("importance", to_int, 1, 5, "an integer from 1 to 5")
        verified = self.convert("verified", to_bool, "true or false")
        confidence = self.ranged("confidence", to_float, 0.0, 1.0, "a number from 0 to 1")
        importance = DEFAULT_IMPORTANCE if importance is None else importance
        # A file from before priorities existed keeps its rank: importance maps onto it.
        priority = self.choice("priority", PRIORITIES) or importance_priority(importance)
        return Episode(
            id=self.episode_id(rel_path),
            created_at=created,
            body=body,
            speaker=self.speaker(),
            importance=importance,
            tags=self.tags(),
            status=self.choice("status", STATUSES) or "active",
            key=self.text("key"),
            category=self.choice("category", CATEGORIES),
            source=source,
            verified=default_verified(source) if verified is None else verified,
            confidence=default_confidence(source) if confidence is None else confidence,
            expires_at=self.moment("expires_at"),
            superseded_by=self.text("superseded_by"),
            priority=priority,
            updated_at=self.moment("updated_at"),
            extra=tuple((k, v) for k, v in self.data.items() if k not in FIELD_ORDER),
        )
