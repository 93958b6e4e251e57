"""Candidate files: a proposed memory a person reviews before it can be recalled.

`bots/<bot>/sessions/<session>/candidates/<id>.md`, Markdown with YAML front matter like an
episode: the body is the proposed memory text, the front matter says what kind of memory it
would become (an L2 episode, or one L1 profile change), who said it, the evidence, the model
that proposed it and the review status. Unknown fields are kept, so a person's notes survive.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from vault.format.episode_fields import DATETIME_EXPECTED, EpisodeFields
from vault.format.episodes import normalise_body, required_front_matter
from vault.format.ids import episode_id_problem, file_token_id_problem
from vault.format.model import CATEGORIES, DEFAULT_IMPORTANCE, FormatError, Speaker
from vault.format.profile_edit import FIELDS as PROFILE_FIELDS
from vault.format.profile_edit import LIMITS as SLOT_FIELDS
from vault.format.yamlio import FlowMap, describe, dump, parse_datetime, plain_value, to_int

CANDIDATE_SOURCE = "candidate"
CANDIDATE_STATUSES: tuple[str, ...] = ("pending", "accepted", "rejected")
CANDIDATE_KINDS: tuple[str, ...] = ("episode", "profile")
PROFILE_TARGETS: tuple[str, ...] = ("session", "speaker")
EVIDENCE_MAX = 500
# Ids become file names, CLI arguments and chat commands: a plain token, no path parts.
CANDIDATE_ID_RULE = (
    "a candidate id is 1 to 64 letters, digits and _ . @ - (e.g. cand_20261130_7f3a9c)"
)
FIELD_ORDER: tuple[str, ...] = (
    "id",
    "created_at",
    "source",
    "status",
    "kind",
    "speaker",
    "evidence",
    "proposed_by",
    "redacted",
    "importance",
    "tags",
    "category",
    "profile",
    "field",
    "key",
    "value",
    "previous",
    "supersedes",
    "accepted_as",
    "decided_at",
)


@dataclass(frozen=True)
class Evidence:
    """What was said that the proposal rests on: a message excerpt and when."""

    text: str
    at: datetime | None = None


@dataclass(frozen=True)
class Candidate:
    id: str
    created_at: datetime
    kind: str  # episode | profile
    body: str  # the proposed memory text, as a person reads it
    status: str = "pending"
    speaker: Speaker | None = None
    evidence: Evidence | None = None
    proposed_by: str | None = None  # the model's name
    redacted: tuple[str, ...] = ()  # kinds of secret taken out before it was written
    # kind episode: what the episode gets; `key` is its stable key (supersedes same-key ones)
    importance: int = DEFAULT_IMPORTANCE
    tags: tuple[str, ...] = ()
    category: str | None = None
    # kind profile: one change of the session's or the speaker's profile; `key` = slot key
    profile: str | None = None
    field: str | None = None
    key: str | None = None
    value: str | None = None
    previous: str | None = None
    supersedes: str | None = None  # kind episode: the active episode this one corrects
    accepted_as: str | None = None  # the episode id, or the profile it changed
    decided_at: datetime | None = None
    extra: tuple[tuple[str, Any], ...] = ()


def candidate_id_problem(value: str) -> str | None:
    return file_token_id_problem(value, CANDIDATE_ID_RULE)


# --------------------------------------------------------------------------- parsing


def parse_candidate(data: bytes | str, *, rel_path: str) -> Candidate:
    """A candidate file, or FormatError naming the line a person should fix."""
    parts, block = required_front_matter(
        data,
        "a candidate file starts with front matter (--- lines) saying its id, kind and "
        "status: restore them, or delete the file to drop the proposal",
    )
    body = normalise_body(parts.body)
    if not body:
        raise FormatError(
            "candidate has no text: write the proposed memory below the front matter",
            parts.body_line,
        )
    return _Fields(block.data, block.key_lines).candidate(body, rel_path)


class _Fields(EpisodeFields):
    def strings(self, name: str) -> tuple[str, ...]:
        raw = self.data.get(name)
        if raw is None:
            return ()
        items = [raw] if isinstance(raw, str) else raw
        if not isinstance(items, list) or any(not isinstance(i, str) for i in items if i):
            raise FormatError(f"{name} must be a list like [password]", self.line(name))
        return tuple(dict.fromkeys(i.strip() for i in items if i and i.strip()))

    def evidence(self) -> Evidence | None:
        raw = self.data.get("evidence")
        if raw is None:
            return None
        raw = {"text": raw} if isinstance(raw, str) else raw
        if not isinstance(raw, dict):
            raise FormatError("evidence must be {text: ..., at: ...}", self.line("evidence"))
        text = self.text("evidence", raw.get("text"), nested=True) or ""
        at_raw = self.text("evidence", raw.get("at"), nested=True)
        try:
            at = parse_datetime(at_raw) if at_raw else None
        except ValueError:
            raise FormatError(
                f"evidence at must be {DATETIME_EXPECTED} (got {describe(at_raw)})",
                self.line("evidence"),
            ) from None
        return Evidence(text, at)

    def candidate(self, body: str, rel_path: str) -> Candidate:
        cid = self.file_id(rel_path, candidate_id_problem)
        created = self.required_moment("created_at")
        self.choice("source", (CANDIDATE_SOURCE,))  # absent is fine; anything else is wrong
        kind = self.required_choice("kind", CANDIDATE_KINDS)
        importance = self.ranged("importance", to_int, 1, 5, "an integer from 1 to 5")
        values: dict[str, Any] = {
            "id": cid,
            "created_at": created,
            "kind": kind,
            "body": body,
            "status": self.choice("status", CANDIDATE_STATUSES) or "pending",
            "speaker": self.speaker(),
            "evidence": self.evidence(),
            "proposed_by": self.text("proposed_by"),
            "redacted": self.strings("redacted"),
            "importance": DEFAULT_IMPORTANCE if importance is None else importance,
            "tags": self.tags(),
            "category": self.choice("category", CATEGORIES),
            "key": self.text("key"),
            "supersedes": self.episode_ref("supersedes"),
            "accepted_as": self.text("accepted_as"),
            "decided_at": self.moment("decided_at"),
            "profile": self.choice("profile", PROFILE_TARGETS),
            "field": self.choice("field", PROFILE_FIELDS),
            "value": self.text("value"),
            "previous": self.text("previous"),
            "extra": self.extra(FIELD_ORDER),
        }
        if kind == "profile":
            self.check_profile_change(values)
        return Candidate(**values)

    def episode_ref(self, name: str) -> str | None:
        value = self.text(name)
        if value is not None and (problem := episode_id_problem(value)) is not None:
            raise FormatError(
                f"{name} {describe(value)} is not an episode id: {problem}", self.line(name)
            )
        return value

    def check_profile_change(self, values: dict[str, Any]) -> None:
        missing = [name for name in ("profile", "field", "value") if values[name] is None]
        if missing:
            raise FormatError(
                f"a profile candidate needs {', '.join(missing)}: add e.g. `profile: speaker`, "
                "`field: preferences`, `value: ...` (the new profile value)",
                self.line(missing[0]),
            )
        if values["key"] is not None and values["field"] not in SLOT_FIELDS:
            raise FormatError(
                "key (a slot) is only for traits and preferences: remove it", self.line("key")
            )
        if values["profile"] == "speaker" and values["speaker"] is None:
            raise FormatError(
                "profile: speaker needs a speaker: add a `speaker: {id: ..., name: ...}` line",
                self.line("profile"),
            )


# --------------------------------------------------------------------------- writing


def render_candidate(c: Candidate) -> str:
    """The file text; ValueError unless it reads back as exactly `c` (body line endings
    aside), so MemVault never writes a candidate its own reader rejects or reads otherwise."""
    text = _render(c)
    try:
        back = parse_candidate(text, rel_path=f"{c.id}.md")
    except FormatError as exc:
        raise ValueError(f"cannot write candidate {c.id}: it would not read back: {exc}") from None
    wanted = dataclasses.replace(c, body=normalise_body(c.body))
    differ = [
        f.name
        for f in dataclasses.fields(Candidate)
        if getattr(back, f.name) != getattr(wanted, f.name)
    ]
    if differ:
        raise ValueError(
            f"cannot write candidate {c.id}: {', '.join(differ)} would read back "
            "differently (blank or padded text?)"
        )
    return text


def _render(c: Candidate) -> str:
    fields: dict[str, Any] = {
        "id": c.id,
        "created_at": c.created_at,
        "source": CANDIDATE_SOURCE,
        "status": c.status,
        "kind": c.kind,
    }
    if c.speaker is not None:
        fields["speaker"] = plain_value(c.speaker)
    if c.evidence is not None:
        evidence: dict[str, Any] = {"text": c.evidence.text}
        if c.evidence.at is not None:
            evidence["at"] = c.evidence.at
        fields["evidence"] = FlowMap(evidence)
    # An episode candidate always says its importance; other fields only when they are set.
    importance = c.importance if c.kind == "episode" or c.importance != DEFAULT_IMPORTANCE else None
    optional: dict[str, Any] = {
        "proposed_by": c.proposed_by,
        "redacted": list(c.redacted) or None,
        "importance": importance,
        "tags": list(c.tags) or None,
        "category": c.category,
        "profile": c.profile,
        "field": c.field,
        "key": c.key,
        "value": c.value,
        "previous": c.previous,
        "supersedes": c.supersedes,
        "accepted_as": c.accepted_as,
        "decided_at": c.decided_at,
    }
    fields |= {k: v for k, v in optional.items() if v is not None}
    for name, value in c.extra:
        if name in FIELD_ORDER:
            raise ValueError(f"extra field {name!r} clashes with a known field")
        fields[name] = value
    return "---\n" + dump(fields) + "---\n" + normalise_body(c.body) + "\n"
