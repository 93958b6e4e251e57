"""Accepting, rejecting and purging candidates: real vault, real git, one commit each, and
the candidate file always says what became of it."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from tests.conftest import git
from vault.candidates import (
    Candidate,
    Evidence,
    accept_candidate,
    find_candidate,
    list_candidates,
    purge_candidates,
    reject_candidate,
    write_candidates,
)
from vault.errors import BadRequestError
from vault.files.safewrite import ConflictError
from vault.format.model import Speaker
from vault.layout.keys import ScopeId
from vault.layout.store import AmbiguousIdError
from vault.writes.operations import Vault
from vault.writes.profile_edit import ProfileEdit

CHAT = ScopeId("bot-1", "group_1")
ALICE = Speaker("u42", "Alice")
WHEN = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)
PLAN = "Alice flies to Tokyo on 12 March for the robotics fair."


def plan(**kw) -> Candidate:
    fields = {
        "id": "",
        "created_at": WHEN,
        "kind": "episode",
        "body": PLAN,
        "speaker": ALICE,
        "evidence": Evidence("I fly to Tokyo on March 12", WHEN),
        "proposed_by": "fake-llm",
        "importance": 3,
        "tags": ("travel",),
        "category": "plan",
    }
    return Candidate(**(fields | kw))


def commits(vault: Vault) -> int:
    return int(git(vault.root, "rev-list", "--count", "HEAD").strip())


def audit_ops(vault: Vault) -> list[str]:
    lines = vault.layout.audit_path(CHAT).read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["operation"] for line in lines]


def changed_in_head(vault: Vault) -> set[str]:
    return set(git(vault.root, "show", "--name-only", "--format=", "HEAD").split())


def test_writing_candidates_is_one_commit_with_one_audit_line_each(vault):
    before = commits(vault)
    written = write_candidates(vault, CHAT, [plan(), plan(body="Alice's sister is called Mei.")])
    assert commits(vault) == before + 1
    assert audit_ops(vault) == ["propose_candidate", "propose_candidate"]
    page = list_candidates(vault, CHAT)
    assert {s.candidate.id for s in page.items} == {c.id for c in written}
    assert all(s.candidate.status == "pending" for s in page.items)
    assert vault.list_episodes(CHAT).total == 0  # a proposal is no memory


def test_accept_writes_the_memory_and_marks_the_file_in_one_commit(vault):
    (c,) = write_candidates(vault, CHAT, [plan()])
    before = commits(vault)
    done = accept_candidate(vault, CHAT, c.id)
    assert commits(vault) == before + 1
    episode = vault.find_episode(CHAT, done.episode.id).episode
    assert (episode.body, episode.speaker, episode.source) == (PLAN, ALICE, "candidate")
    assert episode.verified and episode.importance == 3 and episode.category == "plan"
    assert episode.created_at == WHEN  # when it was said, not when it was reviewed
    stored = find_candidate(vault, CHAT, c.id)
    assert stored.candidate.status == "accepted"
    assert stored.candidate.accepted_as == episode.id and stored.candidate.decided_at
    assert {stored.rel, vault.find_episode(CHAT, episode.id).rel} <= changed_in_head(vault)
    assert audit_ops(vault)[-2:] == ["accept_candidate", "remember"]
    with pytest.raises(BadRequestError, match="already accepted"):
        accept_candidate(vault, CHAT, c.id)


def test_accept_keeps_what_a_person_wrote_in_the_candidate_file(vault):
    (c,) = write_candidates(vault, CHAT, [plan()])
    path = find_candidate(vault, CHAT, c.id).path
    edited = path.read_text(encoding="utf-8").replace(PLAN, "Alice flies to Tokyo on 14 March.")
    path.write_text(edited.replace("kind: episode\n", "kind: episode  # checked by Bob\n"))
    done = accept_candidate(vault, CHAT, c.id)
    assert done.episode.body == "Alice flies to Tokyo on 14 March."  # edit, then accept
    assert "kind: episode  # checked by Bob\n" in path.read_text(encoding="utf-8")


def test_accept_with_an_edited_text_redacts_it_too(vault):
    (c,) = write_candidates(vault, CHAT, [plan()])
    done = accept_candidate(vault, CHAT, c.id, text="Tokyo trip; my password is hunter2x")
    # The memory is kept with the secret replaced (one redaction, where every episode is
    # built), not refused: the words around the secret are the memory.
    stored = vault.find_episode(CHAT, done.episode.id)
    assert (
        stored.episode.body == done.episode.body == "Tokyo trip; my password is [redacted:password]"
    )
    assert "hunter2x" not in stored.path.read_text()
    assert "hunter2x" not in git(vault.root, "log", "-p", "--all")
    (other,) = write_candidates(vault, CHAT, [plan(body="Bob flies home on Friday.")])
    with pytest.raises(BadRequestError, match="only a secret"):
        accept_candidate(vault, CHAT, other.id, text="ghp_abcdefghijklmnopqrstuvwxyz0123456789")


def test_reject_keeps_the_file_and_writes_no_memory(vault):
    (c,) = write_candidates(vault, CHAT, [plan()])
    before = commits(vault)
    reject_candidate(vault, CHAT, c.id)
    assert commits(vault) == before + 1
    assert find_candidate(vault, CHAT, c.id).candidate.status == "rejected"
    assert vault.list_episodes(CHAT, status="all").total == 0
    assert list_candidates(vault, CHAT).total == 0  # no longer pending
    with pytest.raises(BadRequestError, match="already rejected"):
        accept_candidate(vault, CHAT, c.id)


def test_a_profile_candidate_goes_through_update_profile(vault):
    vault.update_profile(
        ProfileEdit(CHAT, "preferences", "add", "black", speaker="u42", fact_key="coffee")
    )
    proposal = plan(
        kind="profile",
        body="Alice now drinks oat flat whites.",
        profile="speaker",
        field="preferences",
        key="coffee",
        value="oat flat white",
        previous="black",
        importance=2,
        tags=(),
        category=None,
    )
    (c,) = write_candidates(vault, CHAT, [proposal])
    before = commits(vault)
    done = accept_candidate(vault, CHAT, c.id)
    assert commits(vault) == before + 1
    assert done.profile.preferences == ("coffee: oat flat white",)
    assert done.profile.history[0].value == "black"
    assert audit_ops(vault)[-2:] == ["accept_candidate", "update_profile"]
    assert find_candidate(vault, CHAT, c.id).candidate.accepted_as == "profile:speaker:u42"


def test_a_refused_profile_change_leaves_the_candidate_pending_and_commits_nothing(vault):
    for n in range(10):  # preferences is full (the limit is 10)
        vault.update_profile(ProfileEdit(CHAT, "preferences", "add", f"item {n}", speaker="u42"))
    proposal = plan(
        kind="profile",
        body="Alice likes jazz.",
        profile="speaker",
        field="preferences",
        value="jazz",
        importance=2,
        tags=(),
        category=None,
    )
    (c,) = write_candidates(vault, CHAT, [proposal])
    stored = find_candidate(vault, CHAT, c.id)
    data, head = stored.path.read_bytes(), git(vault.root, "rev-parse", "HEAD")
    with pytest.raises(BadRequestError, match="already has 10 items"):
        accept_candidate(vault, CHAT, c.id)
    assert stored.path.read_bytes() == data
    assert git(vault.root, "rev-parse", "HEAD") == head


def test_a_stale_review_changes_nothing(vault):
    (c,) = write_candidates(vault, CHAT, [plan()])
    with pytest.raises(ConflictError, match="changed since it was shown"):
        accept_candidate(vault, CHAT, c.id, expected_hash="0" * 64)
    assert find_candidate(vault, CHAT, c.id).candidate.status == "pending"


def test_an_id_two_files_state_is_never_guessed(vault):
    (c,) = write_candidates(vault, CHAT, [plan()])
    stored = find_candidate(vault, CHAT, c.id)
    copy = stored.path.with_name("copy.md")
    copy.write_bytes(stored.path.read_bytes())
    with pytest.raises(AmbiguousIdError, match="nothing was changed"):
        accept_candidate(vault, CHAT, c.id)
    assert vault.list_episodes(CHAT, status="all").total == 0


def test_purge_deletes_old_decisions_only_in_one_commit(tmp_path):
    from vault.writes.create import init_vault

    root = tmp_path / "memory"
    init_vault(root)
    now = [WHEN]
    vault = Vault(root, clock=lambda: now[0])
    old_reject, old_accept, old_pending, new_reject = write_candidates(
        vault, CHAT, [plan(body=f"memory {n}") for n in range(4)]
    )
    reject_candidate(vault, CHAT, old_reject.id)
    accept_candidate(vault, CHAT, old_accept.id)
    now[0] = WHEN + timedelta(days=25)
    reject_candidate(vault, CHAT, new_reject.id)
    now[0] = WHEN + timedelta(days=31)
    before = commits(vault)
    purged = purge_candidates(vault, CHAT, timedelta(days=30))
    assert sorted(purged) == sorted([old_reject.id, old_accept.id])
    assert commits(vault) == before + 1
    left = {s.candidate.id for s in list_candidates(vault, CHAT, status="all").items}
    assert left == {old_pending.id, new_reject.id}
    assert vault.list_episodes(CHAT).total == 1  # the accepted memory stays
    assert purge_candidates(vault, CHAT, timedelta(days=30)) == []
    assert commits(vault) == before + 1  # nothing to purge: no commit
