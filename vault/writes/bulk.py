"""Delete or archive every memory of one scope that a filter picks, after a preview.

LongTermMemory's planned `!memory delete --speaker/--tag/--before/--status`: the first call
(a preview) only reads, writes nothing at all (no lock file, no audit line, no commit) and
says how many memories match and which; the same call with `--yes` applies it in one
operation: one commit, one audit line per memory. Only the scope's own L2 folder is read,
so no filter can reach another chat's memories. The selection is planned purely
(`plan_bulk`); the I/O is `preview_bulk` and `apply_bulk`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from datetime import datetime

from vault.errors import BadRequestError
from vault.files.safewrite import ConflictError, remove_file
from vault.format.durations import parse_duration
from vault.format.model import STATUSES, Episode
from vault.format.tags import tag_key
from vault.format.yamlio import parse_datetime
from vault.git.secret_guard import Kept, SecretInFileError
from vault.layout.keys import ScopeId
from vault.layout.store import AmbiguousIdError, StoredEpisode, ambiguous_id_message
from vault.writes.operations import Vault

ACTIONS: tuple[str, ...] = ("delete", "archive")
FILTERS = "--speaker ID, --tag T, --before DATE (or an age like 30d) or --status S"


@dataclass(frozen=True)
class Selection:
    """Which memories of a scope a bulk operation takes: all the given filters must match."""

    speaker: str | None = None
    tag: str | None = None
    before: datetime | None = None
    status: str | None = None

    def matches(self, ep: Episode) -> bool:
        if self.speaker is not None and (ep.speaker is None or ep.speaker.id != self.speaker):
            return False
        if self.tag is not None and tag_key(self.tag) not in {tag_key(t) for t in ep.tags}:
            return False
        if self.before is not None and not ep.created_at < self.before:
            return False
        return self.status is None or ep.status == self.status

    def describe(self) -> str:
        parts = [
            f"speaker {self.speaker}" if self.speaker is not None else "",
            f"tag {self.tag}" if self.tag is not None else "",
            f"before {self.before:%Y-%m-%dT%H:%M:%SZ}" if self.before is not None else "",
            f"status {self.status}" if self.status is not None else "",
        ]
        return ", ".join(p for p in parts if p)

    def as_json(self) -> dict[str, str | None]:
        when = f"{self.before:%Y-%m-%dT%H:%M:%SZ}" if self.before is not None else None
        return {"speaker": self.speaker, "tag": self.tag, "before": when, "status": self.status}


def parse_selection(
    *,
    speaker: str | None = None,
    tag: str | None = None,
    before: str | None = None,
    status: str | None = None,
    now: datetime,
) -> Selection:
    """The filters as typed, checked; at least one is required (no filter = everything,
    which is never what a person means by one mistyped command)."""
    speaker = speaker.strip() if speaker is not None else None
    tag = tag.strip() if tag is not None else None
    if speaker == "" or tag == "":
        raise BadRequestError("--speaker and --tag need a value, e.g. --speaker u42 --tag travel")
    if status is not None and status.strip().lower() not in STATUSES:
        raise BadRequestError(f"--status must be one of {', '.join(STATUSES)} (got {status!r})")
    selection = Selection(
        speaker=speaker,
        tag=tag,
        before=_before(before, now) if before is not None else None,
        status=status.strip().lower() if status is not None else None,
    )
    if selection == Selection():
        raise BadRequestError(f"say which memories: give at least one of {FILTERS}")
    return selection


def _before(text: str, now: datetime) -> datetime:
    """An ISO date/time, or an age: `30d` = created more than 30 days ago."""
    value = text.strip()
    if value[-1:].lower() in ("m", "h", "d", "w") and value[:-1].strip().isdigit():
        return now - parse_duration(value)
    try:
        return parse_datetime(value)
    except ValueError:
        raise BadRequestError(
            f"--before {text[:40]!r} is not a date: write 2026-03-14 (or 2026-03-14T08:00:00Z), "
            "or an age like 30d (older than 30 days)"
        ) from None


@dataclass(frozen=True)
class BulkPlan:
    action: str
    selection: Selection
    matches: tuple[StoredEpisode, ...]  # newest first, as listed
    # archive: matched files left as they are, with why (what looks like a secret: archiving
    # would commit it, vault.git.secret_guard); the rest is archived all the same.
    refused: tuple[tuple[str, str], ...] = ()


def check_action(action: str, selection: Selection) -> None:
    if action not in ACTIONS:
        raise BadRequestError(f"action must be one of {', '.join(ACTIONS)}")
    if action == "archive" and selection.status == "archived":
        raise BadRequestError(
            "archived memories are archived already: pick --status active or superseded"
        )


def plan_bulk(action: str, selection: Selection, episodes: list[StoredEpisode]) -> BulkPlan:
    """The memories `action` would change (pure: no I/O). Archive skips archived ones."""
    check_action(action, selection)
    chosen = [s for s in episodes if selection.matches(s.episode)]
    if action == "archive":
        chosen = [s for s in chosen if s.episode.status != "archived"]
    return BulkPlan(action, selection, tuple(chosen))


def preview_bulk(vault: Vault, scope: ScopeId, action: str, selection: Selection) -> BulkPlan:
    """What `apply_bulk` would change now; reads files only (no lock, nothing written)."""
    return _refusing(vault, plan_bulk(action, selection, vault.load_episodes(scope)[0]))


def _refusing(vault: Vault, plan: BulkPlan) -> BulkPlan:
    """Archive keeps the memories: one holding a secret is left out (and named), never
    committed; the others are archived. A delete takes them all (its copy stays outside git)."""
    if plan.action != "archive":
        return plan
    keep: list[StoredEpisode] = []
    refused: list[tuple[str, str]] = []
    for stored in plan.matches:
        try:
            vault.refuse_secret(stored, "bulk archive")
        except SecretInFileError as exc:
            refused.append((stored.rel, str(exc)))
            continue
        keep.append(stored)
    return replace(plan, matches=tuple(keep), refused=tuple(refused))


@dataclass(frozen=True)
class BulkResult:
    plan: BulkPlan  # what matched when it was applied
    done: tuple[Episode, ...]  # what was changed (all of plan.matches unless `stopped`)
    kept: str | None = None  # delete: the commit that first saved changes git did not hold
    aside: tuple[str, ...] = ()  # delete: copies kept outside git (they held a secret)
    stopped: str | None = None  # why it stopped early (a file changed meanwhile)


def _refuse_ambiguous(plan: BulkPlan, episodes: list[StoredEpisode]) -> None:
    """An id two files state is never acted on: say every path, change nothing."""
    counts = Counter(s.episode.id for s in episodes)
    for stored in plan.matches:
        if counts[stored.episode.id] > 1:
            rels = sorted(s.rel for s in episodes if s.episode.id == stored.episode.id)
            raise AmbiguousIdError(ambiguous_id_message(stored.episode.id, rels))


def apply_bulk(
    vault: Vault,
    scope: ScopeId,
    action: str,
    selection: Selection,
    *,
    source: str = "user",
    query_id: int | str | None = None,
) -> BulkResult:
    """Apply `action` to what `selection` matches now, in one operation (one commit)."""
    check_action(action, selection)  # before the lock: a bad call leaves no trace at all
    with vault.lock.hold():
        episodes = vault.load_episodes(scope)[0]
        plan = plan_bulk(action, selection, episodes)
        _refuse_ambiguous(plan, episodes)
        plan = _refusing(vault, plan)
        if not plan.matches:
            return BulkResult(plan, ())
        done: list[Episode] = []
        kept = Kept()
        stopped: str | None = None
        with vault.operation(scope, f"bulk_{action}", source=source, query_id=query_id) as txn:
            if action == "delete":
                kept = vault.keep_before_delete([s.rel for s in plan.matches], "a bulk delete")
            for stored in plan.matches:
                if action == "delete":
                    remove_file(stored.path)
                    txn.written.append(stored.path)
                    txn.record("forget", "episode", stored.episode.id, stored.episode.body)
                else:
                    try:
                        vault._set_status(stored, "archived", txn, expected_hash=stored.sha)
                    except ConflictError as exc:
                        # Stop, but finish the operation: what was archived keeps its audit
                        # line and its commit; the rest is left for the next run.
                        stopped = str(exc)
                        break
                done.append(stored.episode)
            if action == "delete":
                vault.follow_forget(episodes, {e.id for e in done}, txn)
    return BulkResult(plan, tuple(done), kept.commit, kept.aside, stopped)
