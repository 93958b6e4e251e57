"""Export one scope as JSON, and import ours or LongTermMemory's export shape.

The export is a superset of both LongTermMemory exports (`profiles` like `!memory export`,
`episodes` like `!memory export l2`), so one file moves a chat's memory either way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from vault.errors import BadInput, BadRequestError
from vault.format.model import STATUSES, Episode, FormatError, Problem, Profile
from vault.layout.keys import ScopeId
from vault.layout.store import StoredEpisode, check_episode_id
from vault.layout.views import episode_export, iso, profile_json
from vault.transfer.import_identity import Present
from vault.transfer.item_origin import IMPORTED_FROM
from vault.transfer.transfer_items import ImportItem, parse_item
from vault.transfer.transfer_profiles import ProfileImport, parse_profiles, write_profiles
from vault.writes import lifecycle
from vault.writes.duplicates import KnownTexts
from vault.writes.episode_create import create_episode_file
from vault.writes.operations import Vault

EXPORT_VERSION = 1


def export_scope(vault: Vault, scope: ScopeId) -> dict[str, Any]:
    """The scope's memory as one JSON object. A file that cannot be read (a person's broken
    edit) is left out and named under `unreadable` with its line: an export is a backup, so
    it must say what it does not hold instead of failing whole or dropping it silently."""
    episodes, unreadable = vault.load_episodes(scope)
    profiles: list[dict[str, Any]] = []
    for speaker in (None, *vault.list_speakers(scope)):
        try:
            prof = vault.read_profile(scope, speaker)
        except FormatError as exc:
            rel = vault.layout.rel(vault.profile_path(scope, speaker))
            unreadable.append(Problem(rel, exc.line, exc.message))
            continue
        except (OSError, UnicodeDecodeError) as exc:
            rel = vault.layout.rel(vault.profile_path(scope, speaker))
            unreadable.append(Problem(rel, 1, f"cannot read file: {exc}"))
            continue
        if prof == Profile():  # one holding anything is exported (also only unknown fields)
            continue
        entry: dict[str, Any] = {"type": "speaker" if speaker else "session"}
        entry["scope_key"] = scope.session_key
        if speaker:
            entry["sender_id"] = speaker
        profiles.append({**entry, "profile": profile_json(prof)})
    items = [episode_export(s.episode) for s in reversed(episodes)]
    return {
        "version": EXPORT_VERSION,
        "exported_at": iso(datetime.now(UTC)),
        "scope_key": scope.session_key,
        "user_key": scope.user_key,
        "isolation": scope.isolation,
        "statuses": list(STATUSES),
        "profiles": profiles,
        "episodes": items,
        "count": len(items),
        "unreadable": [
            {"file": p.path, "line": p.line, "message": p.message}
            for p in sorted(unreadable, key=lambda p: p.path)
        ],
    }


def unreadable_warning(data: dict[str, Any]) -> str:
    """One line for a person: which files the export left out and what to do; "" if none."""
    bad = data.get("unreadable") or []
    if not bad:
        return ""
    files = "; ".join(f"{b['file']}:{b['line']}: {b['message']}" for b in bad[:5])
    more = f" (and {len(bad) - 5} more)" if len(bad) > 5 else ""
    return (
        f"{len(bad)} file(s) could not be read and are NOT in this export: {files}{more}. "
        "Fix them (`memvault check` shows each) and export again."
    )


def _episodes_of(payload: Any) -> list[Any]:
    if isinstance(payload, list):
        return payload
    if isinstance(payload, dict):
        if "episodes" not in payload and "profiles" not in payload:
            # Any other object would import nothing and say "imported 0": a wrong file.
            keys = ", ".join(repr(str(k)[:40]) for k in list(payload)[:5]) or "no keys"
            raise BadRequestError(
                f"nothing to import: the object has {keys} but no `episodes` or `profiles` "
                "list; give what `memvault export` (or LongTermMemory's `!memory export` / "
                '`export l2`) wrote, or a list of {"content": ...} objects'
            )
        episodes = payload.get("episodes", [])
        if not isinstance(episodes, list):
            raise BadRequestError("`episodes` must be a list of objects")
        if not isinstance(payload.get("profiles", []), list):
            raise BadRequestError("`profiles` must be a list of objects")
        return episodes
    raise BadRequestError("import JSON must be a list or an object with episodes")


def import_payload(
    vault: Vault,
    scope: ScopeId,
    payload: Any,
    *,
    source: str = "import",
    dry_run: bool = False,
) -> dict[str, Any]:
    """Import episodes and profiles (our export of either or both, or LongTermMemory's).

    Every field an item states is kept (vault.transfer.transfer_items), its status too: an import
    restores what was exported, so items of one file never supersede each other; an active
    keyed item still supersedes this scope's older active memory with the same key. An item
    already imported here (its original id is an episode's `imported_from`), or whose id
    already exists here with the same text, is skipped, so importing a file twice does not
    duplicate memories, nor does one of items without ids (the rule: `Present`, below); an
    id this scope already uses for another memory gets a new one (`renamed`), and
    `superseded_by` links follow it, also to a memory an earlier import brought.

    An item or profile that cannot be read is refused with what to fix (`refused`) and the
    rest is imported. `dry_run` writes nothing and gives the counts the import would give.
    """
    vault.layout.audit_path(scope)  # a chat that can have no folder refuses the whole import
    items, profiles, refused = _readable(vault, scope, payload, source)
    if refused and not items and not profiles:
        # Nothing in it could be read: that is a bad file, said as one error (exit 2, HTTP
        # 400, a failed upload), not a success that imported nothing.
        raise BadRequestError(
            "; ".join(r.line() for r in refused[:5])
            + (f" (and {len(refused) - 5} more)" if len(refused) > 5 else "")
        )
    if dry_run:
        stored = vault.load_episodes(scope)[0]
        plan = _plan(scope, stored, items, _duplicate_of(vault, scope, stored))
        real = [p for p in profiles if p.profile != Profile()]  # as write_profiles counts
        there = sum(1 for p in real if vault.profile_path(scope, p.speaker).exists())
        return _result(plan, [c[1] for c in plan.chosen], len(real) - there, there, refused)
    with vault.operation(scope, "import", source=source) as txn:
        before = vault.load_episodes(scope)[0]
        plan = _plan(scope, before, items, _duplicate_of(vault, scope, before))
        incoming = _settled(vault, before, plan)
        imported: list[str] = []
        for episode in incoming:
            create_episode_file(vault.layout, scope, episode, episode.id, txn)
            imported.append(episode.id)
        olds = {s.episode.id: s for s in before}
        for change in lifecycle.arrivals([s.episode for s in before], incoming):
            if change.id in olds:
                vault.apply(olds[change.id], change, txn, expected_hash=olds[change.id].sha)
        wrote, existed = write_profiles(vault, txn, profiles)
        summary = f"Imported {len(imported)} L2 episode(s), skipped {plan.skipped + plan.deleted}"
        if refused:
            summary += f", refused {len(refused)}"
        txn.record("import", "episode", scope.session_key, summary)
    return _result(plan, imported, wrote, existed, refused)


@dataclass(frozen=True)
class Refusal:
    """An item or profile the import did not take, and what to fix in it."""

    what: str  # "episode 3", "profile 2"
    reason: str

    def line(self) -> str:
        return f"{self.what}: {self.reason}"


def _refusal(what: str, exc: Exception) -> Refusal:
    text = str(exc)
    return Refusal(what, text[len(what) + 2 :] if text.startswith(f"{what}: ") else text)


def _readable(
    vault: Vault, scope: ScopeId, payload: Any, source: str
) -> tuple[list[ImportItem], list[ProfileImport], list[Refusal]]:
    """Each item and profile read on its own: one that cannot be is refused, not the file."""
    items: list[ImportItem] = []
    refused: list[Refusal] = []
    for n, raw in enumerate(_episodes_of(payload), start=1):
        try:
            items.append(parse_item(vault, scope, raw, n, source))
        except BadInput as exc:
            refused.append(_refusal(f"episode {n}", exc))
    entries = payload.get("profiles") if isinstance(payload, dict) else None
    profiles: list[ProfileImport] = []
    for n, entry in enumerate(entries if isinstance(entries, list) else [], start=1):
        try:
            profiles += parse_profiles(vault, scope, [entry], first=n)
        except BadInput as exc:
            refused.append(_refusal(f"profile {n}", exc))
    return items, profiles, refused


@dataclass
class _Plan:
    chosen: list[tuple[ImportItem, str]] = field(default_factory=list)
    links: dict[str, str] = field(default_factory=dict)  # an item's id -> its id here
    origins: dict[str, str] = field(default_factory=dict)  # imported earlier: origin -> id
    renamed: dict[str, str] = field(default_factory=dict)
    skipped: int = 0
    deleted: int = 0


def _duplicate_of(
    vault: Vault, scope: ScopeId, before: list[StoredEpisode]
) -> Callable[[ImportItem], bool]:
    """The content rule of every write (vault.writes.duplicates): the same or a near-same
    memory of this chat, beside the import's own rule by original id (Present)."""
    known = KnownTexts(before)
    return lambda item: vault.find_duplicate(scope, item.episode, chat=known) is not None


def _plan(
    scope: ScopeId,
    before: list[StoredEpisode],
    items: list[ImportItem],
    duplicate: Callable[[ImportItem], bool] = lambda _item: False,
) -> _Plan:
    """Which items are new here and the id each gets (writes nothing; `duplicate` is the
    content check, the only reading)."""
    present = Present.of(scope, before)
    plan = _Plan(origins=dict(present.origins))
    for item in items:
        if item.deleted:
            plan.deleted += 1
            continue
        if present.holds(item) or duplicate(item):  # the rules: Present, below; duplicates
            plan.skipped += 1
            continue
        new_id = present.new_id(item, _plain_id(item.old_id) if item.old_id else False)
        if item.old_id and new_id != item.old_id:
            plan.renamed[item.old_id] = new_id
        if item.old_id:
            plan.links[item.old_id] = new_id
        present.claim(new_id)
        plan.chosen.append((item, new_id))
    return plan


def _result(
    plan: _Plan, imported: list[str], wrote: int, existed: int, refused: list[Refusal]
) -> dict[str, Any]:
    return {
        "imported": len(imported),
        "skipped": plan.skipped,  # already present here (Present)
        "already_present": plan.skipped,
        "deleted": plan.deleted,
        "ids": imported,
        "renamed": plan.renamed,
        "profile": wrote > 0,
        "profiles": wrote,
        "profiles_skipped": existed,  # a profile file already there is never merged over
        "refused": [{"item": r.what, "reason": r.reason} for r in refused],
    }


def _settled(vault: Vault, before: list[StoredEpisode], plan: _Plan) -> list[Episode]:
    """The imported episodes as they will be written (vault.writes.lifecycle): links follow the
    ids their targets got here (in this import or an earlier one), a link naming nothing is
    dropped (archived), and per key the newest memory, old or imported, is the active one.
    Refuses first (nothing written) when an existing memory it supersedes holds a secret
    (vault.git.secret_guard)."""
    incoming = []
    for item, new_id in plan.chosen:
        link = item.episode.superseded_by
        # An upstream link may name a memory an earlier import brought (by its origin id).
        earlier = plan.origins if IMPORTED_FROM in dict(item.episode.extra) else {}
        link = plan.links.get(link) or earlier.get(link, link) if link else None
        incoming.append(replace(item.episode, id=new_id, superseded_by=link))
    existing = [s.episode for s in before]
    fixes = {c.id: c for c in lifecycle.imported_links(existing, incoming)}
    incoming = [_with(e, fixes.get(e.id)) for e in incoming]
    plan = {c.id: c for c in lifecycle.arrivals(existing, incoming)}
    for stored in before:
        if stored.episode.id in plan:
            vault.refuse_secret(stored, "import (a newer imported memory supersedes it)")
    return [_with(e, plan.get(e.id)) for e in incoming]


def _with(episode: Episode, change: lifecycle.Change | None) -> Episode:
    if change is None:
        return episode
    return replace(episode, status=change.status, superseded_by=change.superseded_by)


def _plain_id(value: str) -> bool:
    try:
        check_episode_id(value)
    except BadRequestError:
        return False
    return True
