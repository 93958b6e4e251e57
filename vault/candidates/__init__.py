"""Candidate memories: what a model proposed from a chat turn, waiting for a person.

A candidate is a file of its chat (`sessions/<s>/candidates/<id>.md`,
vault.candidates.candidate_file)
that is never indexed as memory and never recalled; it becomes memory only when accepted,
through the same writers as `remember` and `update_profile`. This module is the one import
for callers (the indexer's extraction, the CLI, the console, the plugin).
"""

from vault.candidates.candidate_file import (
    CANDIDATE_KINDS,
    CANDIDATE_STATUSES,
    PROFILE_TARGETS,
    Candidate,
    Evidence,
    parse_candidate,
    render_candidate,
)
from vault.candidates.candidate_review import (
    Decision,
    accept_candidate,
    edit_candidate_bytes,
    purge_candidates,
    reject_candidate,
)
from vault.candidates.candidate_store import (
    CandidatePage,
    StoredCandidate,
    candidate_scopes,
    find_candidate,
    list_candidates,
    load_candidates,
    new_candidate_id,
    redact_candidate,
    write_candidates,
)
from vault.candidates.candidate_view import candidate_json

__all__ = [
    "candidate_json",
    "CANDIDATE_KINDS",
    "CANDIDATE_STATUSES",
    "PROFILE_TARGETS",
    "Candidate",
    "CandidatePage",
    "Decision",
    "Evidence",
    "StoredCandidate",
    "accept_candidate",
    "candidate_scopes",
    "edit_candidate_bytes",
    "find_candidate",
    "list_candidates",
    "load_candidates",
    "new_candidate_id",
    "parse_candidate",
    "purge_candidates",
    "redact_candidate",
    "reject_candidate",
    "render_candidate",
    "write_candidates",
]
