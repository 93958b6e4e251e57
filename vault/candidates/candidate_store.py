"""Candidate files of a chat: read them (paged, newest first) and write new ones.

Writing is a vault operation like any other: under the vault lock, atomic new files (never
over an existing one), every text redacted first (vault.redaction.redact), one audit line each and
one git commit. Reviewing them (accept, reject, purge) is vault.candidates.candidate_review.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from vault.candidates.candidate_file import (
    CANDIDATE_STATUSES,
    Candidate,
    Evidence,
    candidate_id_problem,
    parse_candidate,
    render_candidate,
)
from vault.errors import BadRequestError
from vault.files.safewrite import content_hash
from vault.format.model import FormatError, Problem, Speaker
from vault.format.redact_forms import redact_name
from vault.format.tags import normalise_tags
from vault.layout.keys import ScopeId
from vault.layout.layout import iter_markdown
from vault.layout.links import read_vault_file
from vault.layout.names import encode_name
from vault.layout.store import PAGE_SIZE, only_match, page_count
from vault.redaction.redact import only_secret, redact, redact_slot
from vault.writes.fresh_ids import create_under_fresh_id, dated_id, rendered
from vault.writes.operations import Vault
from vault.writes.transaction import Txn


@dataclass(frozen=True)
class StoredCandidate:
    candidate: Candidate
    path: Path
    rel: str
    sha: str


@dataclass(frozen=True)
class CandidatePage:
    total: int
    page: int
    page_size: int
    items: tuple[StoredCandidate, ...]
    problems: tuple[Problem, ...] = ()

    @property
    def pages(self) -> int:
        return page_count(self.total, self.page_size)


def new_candidate_id(created_at: datetime) -> str:
    return dated_id("cand", created_at)


def redact_candidate(c: Candidate) -> Candidate | None:
    """The candidate with its secrets replaced (vault.redaction.redact) and their kinds listed; None
    when nothing but a secret is left to remember."""
    kinds: list[str] = list(c.redacted)
    changes: dict[str, Any] = {}
    # Names and keys as names (vault.format.redact_forms): a slot key is stored lower-cased.
    names = [redact_name(t) for t in (c.key or "", c.speaker.name if c.speaker else "", *c.tags)]
    kinds.extend(k for n in names for k in n.kinds)
    key, name, *tags = (n.text for n in names)
    changes["key"] = key or c.key
    changes["tags"] = normalise_tags(tags)  # two tags may redact to one spelling
    if c.speaker is not None:
        changes["speaker"] = Speaker(c.speaker.id, name or c.speaker.name)
    texts = {"body": c.body, "previous": c.previous, "value": c.value}
    for name, text in texts.items():
        if text is None:
            continue
        done = redact_slot(key, text) if key and name != "body" else redact(text)
        kinds.extend(done.kinds)
        changes[name] = done.text
    if c.evidence is not None:
        done = redact(c.evidence.text)
        kinds.extend(done.kinds)
        changes["evidence"] = Evidence(done.text, c.evidence.at)
    fixed = dataclasses.replace(c, **changes, redacted=tuple(dict.fromkeys(kinds)))
    if only_secret(fixed.body) or (fixed.value is not None and only_secret(fixed.value)):
        return None
    return fixed


# --------------------------------------------------------------------------- reading


def load_candidates(vault: Vault, scope: ScopeId) -> tuple[list[StoredCandidate], list[Problem]]:
    """Every candidate file of the chat, newest first; malformed files as Problems."""
    found: list[StoredCandidate] = []
    problems: list[Problem] = []
    for path in iter_markdown(vault.layout.candidates_dir(scope)):
        rel = vault.layout.rel(path)
        if path.parent != vault.layout.candidates_dir(scope):
            continue  # candidates/ is flat; a subfolder is nobody's proposal
        try:
            data, _ = read_vault_file(vault.root, rel)
            found.append(
                StoredCandidate(parse_candidate(data, rel_path=rel), path, rel, content_hash(data))
            )
        except FormatError as exc:
            problems.append(Problem(rel, exc.line, exc.message))
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(Problem(rel, 1, f"cannot read file: {exc}"))
    found.sort(key=lambda s: (s.candidate.created_at, s.candidate.id), reverse=True)
    return found, problems


def candidate_scopes(vault: Vault) -> list[ScopeId]:
    """Every chat that has candidate files (for a purge of the whole vault)."""
    seen: dict[tuple[str | None, str], None] = {}
    for path in vault.layout.iter_vault_files():
        role = vault.layout.classify(path)
        if role.kind == "candidate" and role.session is not None:
            seen[(role.bot, role.session)] = None
    return [ScopeId(bot, session) for bot, session in seen]


def list_candidates(
    vault: Vault,
    scope: ScopeId,
    *,
    status: str = "pending",
    page: int = 1,
    page_size: int = PAGE_SIZE,
) -> CandidatePage:
    """One page of the chat's candidates with that status ("all" = any), newest first."""
    if status != "all" and status not in CANDIDATE_STATUSES:
        raise BadRequestError(f"status must be one of {', '.join(CANDIDATE_STATUSES)}, all")
    if page < 1:
        raise BadRequestError("page must be 1 or more")
    stored, problems = load_candidates(vault, scope)
    chosen = [s for s in stored if status == "all" or s.candidate.status == status]
    start = (page - 1) * page_size
    items = tuple(chosen[start : start + page_size])
    return CandidatePage(len(chosen), page, page_size, items, tuple(problems))


# One message for every surface that looks a candidate up: each person finds the list
# where they are (a chat member cannot run the CLI, a shell user has no `!memory`).
LISTS = (
    "`!memory candidates` in the chat, `memvault candidates list --status all` in a shell, "
    "the console's Candidates tab"
)


def find_candidate(vault: Vault, scope: ScopeId, candidate_id: str) -> StoredCandidate:
    wanted = (candidate_id or "").strip()
    if candidate_id_problem(wanted) is not None:
        raise BadRequestError(
            f"candidate id {candidate_id[:40]!r} is not valid: use an id from the "
            f"candidates list ({LISTS}), e.g. cand_20261130_7f3a9c"
        )
    matches = [s for s in load_candidates(vault, scope)[0] if s.candidate.id == wanted]
    missing = (
        f"no candidate {wanted} in {scope.label()}: the candidates list ({LISTS}) shows "
        "the ids here"
    )
    return only_match("candidate", wanted, matches, [s.rel for s in matches], missing)


# --------------------------------------------------------------------------- writing


def write_candidates(
    vault: Vault,
    scope: ScopeId,
    candidates: Sequence[Candidate],
    *,
    query_id: int | str | None = None,
) -> list[Candidate]:
    """Write new pending candidate files (redacted; an empty id gets a fresh one) in one
    operation: one audit line each, one commit. Returns what was written."""
    ready = [r for c in candidates if (r := redact_candidate(c)) is not None]
    if not ready:
        return []
    written: list[Candidate] = []
    with vault.operation(scope, "propose_candidates", source="candidate", query_id=query_id) as txn:
        folder = vault.layout.candidates_dir(scope)
        for candidate in ready:
            written.append(_create(vault, txn, folder, candidate))
    return written


def _create(vault: Vault, txn: Txn, folder: Path, candidate: Candidate) -> Candidate:
    def draft(cid: str) -> tuple[Candidate, Path, bytes]:
        fresh = dataclasses.replace(
            candidate, id=cid, status="pending", accepted_as=None, decided_at=None
        )
        path = folder / f"{encode_name(cid, 'candidate id')}.md"
        return fresh, path, rendered(render_candidate, fresh, "candidate")

    new_id = partial(new_candidate_id, candidate.created_at)
    fresh = create_under_fresh_id(txn, "candidate", candidate.id or None, new_id, draft)[0]
    txn.record("propose_candidate", "candidate", fresh.id, f"{fresh.kind}: {fresh.body}")
    return fresh
