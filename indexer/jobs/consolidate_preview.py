"""A consolidation preview: exactly what `run` will write, as a frozen record and as JSON.

The CLI saves it to a file a person reads (`memvault consolidate preview --out p.json`) and
`run` takes that file back, so what is applied is what was seen. The JSON is parsed once
here, every field checked, and its digest (sha256 over the whole content) must match: a
preview file that was cut short or edited is refused, not half-applied.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from indexer.jobs.consolidate_select import ConsolidateSettings, Reason, digest_of
from vault.errors import BadRequestError
from vault.format.model import Speaker
from vault.format.yamlio import format_datetime, parse_datetime
from vault.layout.keys import ScopeId
from vault.writes.profile_edit import ProfileEdit

KIND = "memvault-consolidation-preview"
VERSION = 1


@dataclass(frozen=True)
class PickView:
    """One episode the run archives, as the preview showed it."""

    id: str
    rel: str
    sha: str
    created_at: datetime
    importance: int
    status: str
    text: str
    reasons: tuple[Reason, ...]


@dataclass(frozen=True)
class SummaryDraft:
    """The summary episode the run writes (its id is chosen when it is written)."""

    text: str
    tags: tuple[str, ...]
    importance: int
    created_at: datetime
    speaker: Speaker | None


@dataclass(frozen=True)
class Preview:
    scope: ScopeId
    settings: ConsolidateSettings
    now: datetime  # the clock the selection was made with: run selects again with it
    model: str
    fingerprint: str  # indexer.jobs.consolidate_select.Selection.fingerprint
    threshold: float | None
    left_over: int
    skipped: tuple[tuple[str, str], ...]
    archive: tuple[PickView, ...]
    summary: SummaryDraft | None  # None: nothing to consolidate
    profile_edits: tuple[ProfileEdit, ...]  # the model's suggestions, checked
    profile_shas: tuple[tuple[str | None, str | None], ...]  # profile -> sha seen (None: none)
    dropped: tuple[str, ...]  # suggestions that could not be used, and why
    digest: str = ""

    @property
    def applies_profile_edits(self) -> bool:
        return self.settings.apply_profile_updates and bool(self.profile_edits)

    def sealed(self) -> Preview:
        """This preview with its digest set."""
        return Preview(**{**self.__dict__, "digest": digest_of(_content(self))})

    def as_json(self) -> dict[str, Any]:
        return {**_content(self), "digest": self.digest}


def _content(p: Preview) -> dict[str, Any]:
    summary = None
    if p.summary is not None:
        s = p.summary
        summary = {
            "text": s.text,
            "tags": list(s.tags),
            "importance": s.importance,
            "created_at": format_datetime(s.created_at),
            "speaker": {"id": s.speaker.id, "name": s.speaker.name} if s.speaker else None,
        }
    return {
        "kind": KIND,
        "version": VERSION,
        "scope": {"bot": p.scope.bot, "session": p.scope.session, "isolation": p.scope.isolation},
        "settings": p.settings.as_json(),
        "now": format_datetime(p.now),
        "model": p.model,
        "selection": {
            "fingerprint": p.fingerprint,
            "threshold": p.threshold,
            "left_over": p.left_over,
            "skipped": [list(s) for s in p.skipped],
        },
        "archive": [_pick_json(v) for v in p.archive],
        "summary": summary,
        "profile_changes": [_edit_json(e) for e in p.profile_edits],
        "profile_changes_applied": p.applies_profile_edits,
        "profile_shas": [list(s) for s in p.profile_shas],
        "dropped": list(p.dropped),
    }


def _pick_json(v: PickView) -> dict[str, Any]:
    return {
        "id": v.id,
        "rel": v.rel,
        "sha": v.sha,
        "created_at": format_datetime(v.created_at),
        "importance": v.importance,
        "status": v.status,
        "text": v.text,
        "reasons": [r.as_json() for r in v.reasons],
    }


def _edit_json(e: ProfileEdit) -> dict[str, Any]:
    return {
        "speaker": e.speaker,
        "field": e.field,
        "action": e.action,
        "value": e.value,
        "fact_key": e.fact_key,
    }


class PreviewFileError(BadRequestError):
    """A preview file that is not one `consolidate preview` wrote, unchanged."""


def from_json(data: Any) -> Preview:
    """The Preview a `consolidate preview` JSON holds; PreviewFileError if it is not one."""
    try:
        preview = _parse(data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        if isinstance(exc, PreviewFileError):
            raise
        raise PreviewFileError(
            f"this is not a consolidation preview MemVault wrote ({exc!s:.120}): make one "
            "with `memvault consolidate preview ... --out FILE`"
        ) from exc
    if preview.sealed().digest != preview.digest:
        raise PreviewFileError(
            "the preview file does not match its digest (cut short or edited after it was "
            "made): nothing was changed; make a new preview and run that one"
        )
    return preview


def _parse(d: dict[str, Any]) -> Preview:
    if d.get("kind") != KIND or d.get("version") != VERSION:
        raise PreviewFileError(
            f"not a version {VERSION} consolidation preview: make one with "
            "`memvault consolidate preview ... --out FILE`"
        )
    sc, sel, summary = d["scope"], d["selection"], d["summary"]
    scope = ScopeId(_opt(sc["bot"]), _str(sc["session"]), _str(sc["isolation"]))  # type: ignore[arg-type]
    draft = None
    if summary is not None:
        speaker = summary["speaker"]
        draft = SummaryDraft(
            _str(summary["text"]),
            tuple(_str(t) for t in summary["tags"]),
            _int(summary["importance"]),
            parse_datetime(_str(summary["created_at"])),
            Speaker(_str(speaker["id"]), _opt(speaker["name"])) if speaker else None,
        )
    return Preview(
        scope=scope,
        settings=ConsolidateSettings(**d["settings"]),
        now=parse_datetime(_str(d["now"])),
        model=_str(d["model"]),
        fingerprint=_str(sel["fingerprint"]),
        threshold=None if sel["threshold"] is None else float(sel["threshold"]),
        left_over=_int(sel["left_over"]),
        skipped=tuple((_str(a), _str(b)) for a, b in sel["skipped"]),
        archive=tuple(_pick(v) for v in d["archive"]),
        summary=draft,
        profile_edits=tuple(_edit(scope, e) for e in d["profile_changes"]),
        profile_shas=tuple((_opt(a), _opt(b)) for a, b in d["profile_shas"]),
        dropped=tuple(_str(x) for x in d["dropped"]),
        digest=_str(d["digest"]),
    )


def _pick(v: dict[str, Any]) -> PickView:
    reasons = tuple(
        Reason(_str(r["code"]), _str(r["detail"]), _opt(r["other"])) for r in v["reasons"]
    )
    return PickView(
        _str(v["id"]),
        _str(v["rel"]),
        _str(v["sha"]),
        parse_datetime(_str(v["created_at"])),
        _int(v["importance"]),
        _str(v["status"]),
        _str(v["text"]),
        reasons,
    )


def _edit(scope: ScopeId, e: dict[str, Any]) -> ProfileEdit:
    return ProfileEdit(
        scope,
        _str(e["field"]),
        _str(e["action"]),
        _str(e["value"]),
        _opt(e["speaker"]),
        _opt(e["fact_key"]),
    )


def _str(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a text, got {type(value).__name__}")
    return value


def _opt(value: object) -> str | None:
    return None if value is None else _str(value)


def _int(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an integer, got {type(value).__name__}")
    return value
