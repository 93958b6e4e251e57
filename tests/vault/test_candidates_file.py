"""Candidate files: the format reads back exactly as written, and a malformed file a person
saved is reported (by `check` and by list) and skipped, never rewritten."""

from __future__ import annotations

import string
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vault.candidates import (
    Candidate,
    Evidence,
    list_candidates,
    parse_candidate,
    render_candidate,
    write_candidates,
)
from vault.format.model import CATEGORIES, FormatError, Speaker
from vault.format.tags import tag_key
from vault.health.check import check_vault
from vault.layout.keys import ScopeId
from vault.layout.layout import classify

CHAT = ScopeId("bot-1", "group_1")
WHEN = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)

# Text as people and models write it: Latin, CJK, punctuation YAML cares about, newlines.
_alphabet = st.sampled_from(
    list(string.ascii_letters + string.digits + " :#-'\"[]{},&*!|>%@`")
    + list("小王的猫叫咪咪，今年三岁了。密码")
)
short = st.text(_alphabet, min_size=1, max_size=30).map(str.strip).filter(bool)
body = st.text(st.one_of(_alphabet, st.just("\n")), min_size=1, max_size=120).map(str.strip)
moments = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
).map(lambda d: d.replace(microsecond=0))
ids = st.from_regex(r"\Acand_[0-9]{8}_[0-9a-f]{6}\Z")
speakers = st.one_of(st.none(), st.builds(Speaker, short, st.one_of(st.none(), short)))
common = {
    "id": ids,
    "created_at": moments,
    "body": body.filter(bool),
    "status": st.sampled_from(("pending", "accepted", "rejected")),
    "evidence": st.one_of(st.none(), st.builds(Evidence, short, st.one_of(st.none(), moments))),
    "proposed_by": st.one_of(st.none(), short),
    "redacted": st.lists(st.sampled_from(("password", "otp", "api_key")), unique=True).map(tuple),
    "accepted_as": st.one_of(st.none(), short),
    "decided_at": st.one_of(st.none(), moments),
}
episodes = st.builds(
    Candidate,
    kind=st.just("episode"),
    speaker=speakers,
    importance=st.integers(1, 5),
    tags=st.lists(short, unique_by=tag_key, max_size=4).map(tuple),  # one per case-fold
    category=st.one_of(st.none(), st.sampled_from(CATEGORIES)),
    supersedes=st.one_of(st.none(), st.from_regex(r"\Aep_[0-9]{8}_[0-9a-f]{6}\Z")),
    **common,
)
profiles = st.builds(
    Candidate,
    kind=st.just("profile"),
    speaker=st.builds(Speaker, short, st.one_of(st.none(), short)),
    profile=st.sampled_from(("session", "speaker")),
    field=st.sampled_from(("traits", "preferences")),
    key=st.one_of(st.none(), st.from_regex(r"\A[a-z][a-z_]{0,11}\Z")),
    value=short,
    previous=st.one_of(st.none(), short),
    **common,
)


@given(st.one_of(episodes, profiles))
def test_every_candidate_reads_back_exactly_as_written(candidate):
    text = render_candidate(candidate)
    assert parse_candidate(text, rel_path=f"x/{candidate.id}.md") == candidate
    assert "&id" not in text and "*id" not in text  # no YAML aliases a person must keep


def test_a_candidate_file_has_its_own_role_never_an_episode():
    rel = "bots/bot-1/sessions/group_1/candidates/cand_20260301_aaaaaa.md"
    role = classify(Path("/nonexistent"), rel)
    assert role.kind == "candidate" and role.session == "group_1" and role.index_key is None


def _written(vault) -> Candidate:
    proposal = Candidate(id="", created_at=WHEN, kind="episode", body="Alice flies to Tokyo.")
    return write_candidates(vault, CHAT, [proposal])[0]


@pytest.mark.parametrize(
    ("front", "message"),
    [
        ("id: cand_1\ncreated_at: 2026-03-01T09:30:00Z\nstatus: pending\n", "kind is missing"),
        (
            "id: cand_1\ncreated_at: 2026-03-01T09:30:00Z\nkind: episode\nstatus: maybe\n",
            "status must be one of pending, accepted, rejected",
        ),
        (
            "id: cand_1\nkind: profile\ncreated_at: 2026-03-01T09:30:00Z\nfield: traits\n",
            "a profile candidate needs profile, value",
        ),
        ("id: ../x\nkind: episode\ncreated_at: 2026-03-01T09:30:00Z\n", "is not valid"),
        ("id: cand_1\nkind: episode\ncreated_at: yesterday\n", "created_at must be"),
    ],
)
def test_a_malformed_candidate_is_reported_and_skipped_never_rewritten(vault, front, message):
    good = _written(vault)
    folder = vault.layout.candidates_dir(CHAT)
    bad = folder / "bad.md"
    data = f"---\n{front}---\nsome text\n".encode()
    bad.write_bytes(data)
    page = list_candidates(vault, CHAT, status="all")
    assert [s.candidate.id for s in page.items] == [good.id]
    assert [p.path for p in page.problems] == [vault.layout.rel(bad)]
    assert message in page.problems[0].message
    report = check_vault(vault.root)
    assert [(p.path, message in p.message) for p in report.problems] == [
        (vault.layout.rel(bad), True)
    ]
    assert bad.read_bytes() == data


def test_check_accepts_the_candidates_memvault_writes(vault):
    _written(vault)
    assert check_vault(vault.root).ok


def test_a_file_without_front_matter_is_no_candidate():
    with pytest.raises(FormatError, match="starts with front matter"):
        parse_candidate("just a note\n", rel_path="c/cand_1.md")
