"""Candidate extraction with a loopback FAKE LLM (tests/helpers/llm_fake.py) and the real vault,
indexes, embedding model and git: what is proposed becomes a pending file and nothing in
search; accepting it makes it recalled; duplicates are not written; a failing model changes
nothing."""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path

import pytest

from indexer.engine import Engine
from indexer.jobs.candidates_extract import Turn, extract
from indexer.jobs.llm import LLMError
from indexer.retrieval.search_query import SearchQuery
from indexer.supersede import near_duplicates
from tests.conftest import git
from tests.helpers.llm_fake import Reply
from vault.candidates import accept_candidate, list_candidates, reject_candidate
from vault.format.model import Episode, Speaker
from vault.layout.keys import ScopeId
from vault.writes.new_episode import NewEpisode
from vault.writes.profile_edit import ProfileEdit

CHAT = ScopeId("bot-1", "group_1")
ALICE = Speaker("u42", "Alice")
SAID = "I'm flying to Tokyo on March 12 for the robotics fair"
# tests/indexer/conftest.py: what a memory "already says" and a contradiction are found by
# cosine with the model (vault/candidates near_duplicates), so the model is the subject here.
EMBEDDER = "model"
PLAN = "Alice flies to Tokyo on 12 March for the robotics fair."
EPISODE = {
    "kind": "episode",
    "text": PLAN,
    "importance": 3,
    "tags": ["travel"],
    "category": "plan",
    "evidence": "flying to Tokyo on March 12",
}


@pytest.fixture
def engine(vault, embedder):
    with Engine.open(vault.root, embedder=embedder) as opened:
        opened.attach(vault)
        yield opened


def run(fake_llm, vault, engine, said=SAID, reply="Have a good trip!", **kw):
    return extract(
        fake_llm.llm(timeout=kw.pop("timeout", 10.0)),
        vault,
        engine,
        CHAT,
        ALICE,
        said,
        reply,
        kw.pop("recent", []),
        model_name="fake-llm",
        **kw,
    )


def files_and_history(root: Path) -> dict[str, str]:
    """sha256 of every file of the vault and its git repository (not .memvault's derived
    indexes and caches): equal means no file, no audit line and no commit changed."""
    found = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".memvault"]
        for name in names:
            path = Path(folder, name)
            found[path.relative_to(root).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def commits(root: Path) -> int:
    return int(git(root, "rev-list", "--count", "HEAD").strip())


def found_ids(engine, query, **kw) -> list[str]:
    return [r.doc.episode_id for r in engine.search(SearchQuery(query, CHAT, top_k=10, **kw))]


def test_a_plan_becomes_one_pending_file_and_nothing_in_search(fake_llm, vault, engine):
    fake_llm.script({"candidates": [EPISODE]})
    before = commits(vault.root)
    (c,) = run(fake_llm, vault, engine)
    assert commits(vault.root) == before + 1
    page = list_candidates(vault, CHAT)
    assert [s.candidate.id for s in page.items] == [c.id]
    stored = page.items[0]
    assert stored.rel.startswith("bots/bot-1/sessions/group_1/candidates/")
    text = stored.path.read_text(encoding="utf-8")
    assert "source: candidate\nstatus: pending\nkind: episode\n" in text
    assert stored.candidate.speaker == ALICE and stored.candidate.proposed_by == "fake-llm"
    assert stored.candidate.evidence.text == "flying to Tokyo on March 12"
    engine.reconcile()  # whatever the watcher would index, is indexed
    for mode in ("hybrid", "text", "vector"):
        assert found_ids(engine, "Tokyo robotics fair", mode=mode, include_profiles=True) == []
    asked = json.dumps(fake_llm.requests[-1], ensure_ascii=False)
    assert SAID in asked and "L1 profile" in asked  # the turn and the policy reached the model


def test_accepting_makes_it_searchable_with_one_commit_and_an_audit_line(fake_llm, vault, engine):
    fake_llm.script({"candidates": [EPISODE]})
    (c,) = run(fake_llm, vault, engine)
    before = commits(vault.root)
    done = accept_candidate(vault, CHAT, c.id)
    assert commits(vault.root) == before + 1
    assert found_ids(engine, "Tokyo robotics fair") == [done.episode.id]
    audit = vault.layout.audit_path(CHAT).read_text(encoding="utf-8")
    assert (
        f'"operation": "accept_candidate", "target_type": "candidate", "target_id": "{c.id}"'
        in audit
    )


def test_a_rejected_candidate_stays_out_of_search(fake_llm, vault, engine):
    fake_llm.script({"candidates": [EPISODE]})
    (c,) = run(fake_llm, vault, engine)
    reject_candidate(vault, CHAT, c.id)
    engine.reconcile()
    assert found_ids(engine, "Tokyo robotics fair", statuses=("active", "archived")) == []


def test_what_an_active_memory_already_says_is_not_written(fake_llm, vault, engine):
    vault.remember(NewEpisode(CHAT, "Alice is going to Beijing next week for a conference."))
    vault.update_profile(
        ProfileEdit(CHAT, "preferences", "add", "oat flat white", speaker="u42", fact_key="coffee")
    )
    fake_llm.script(
        {
            "candidates": [
                {"kind": "episode", "text": "Alice will go to Beijing next week for a conference."},
                {
                    "kind": "profile",
                    "profile": "speaker",
                    "field": "preferences",
                    "key": "Coffee",
                    "value": "oat flat white",
                    "text": "Alice drinks oat flat whites.",
                },
            ]
        }
    )
    before = files_and_history(vault.root)
    assert run(fake_llm, vault, engine, said="Beijing next week, and an oat flat white") == []
    assert files_and_history(vault.root) == before


def test_a_close_proposal_of_another_fact_is_kept_and_a_repeat_is_dropped(fake_llm, vault, engine):
    """The rule every write follows (vault.writes.duplicates): another date is another fact,
    however close the model finds it; the same words again are not proposed."""
    vault.remember(NewEpisode(CHAT, PLAN, speaker=ALICE))
    moved = "Alice flies to Tokyo on 14 March for the robotics fair."
    probe = Episode(id="", created_at=vault.clock(), body=moved)
    assert dict(near_duplicates(engine, CHAT, probe))  # the supersede line calls it a repeat
    fake_llm.script(
        {"candidates": [{"kind": "episode", "text": moved}, {**EPISODE, "text": PLAN.upper()}]}
    )
    assert [c.body for c in run(fake_llm, vault, engine)] == [moved]


def test_the_same_proposal_twice_is_written_once(fake_llm, vault, engine):
    fake_llm.script({"candidates": [EPISODE]}, {"candidates": [EPISODE, EPISODE]})
    assert len(run(fake_llm, vault, engine)) == 1
    assert run(fake_llm, vault, engine) == []
    assert list_candidates(vault, CHAT).total == 1


def test_a_contradiction_is_proposed_as_a_correction_that_supersedes_on_accept(
    fake_llm, vault, engine
):
    old = vault.remember(NewEpisode(CHAT, "Carol prefers tea over coffee in the afternoon."))
    new_text = "Update: Carol now prefers coffee over tea in the afternoon."

    probe = Episode(id="", created_at=old.created_at, body=new_text)
    assert old.id in dict(near_duplicates(engine, CHAT, probe))  # a duplicate by cosine alone
    fake_llm.script({"candidates": [{"kind": "episode", "text": new_text, "supersedes": old.id}]})
    (c,) = run(fake_llm, vault, engine, said="Carol drinks coffee in the afternoon now")
    assert c.supersedes == old.id
    before = commits(vault.root)
    done = accept_candidate(vault, CHAT, c.id)
    assert commits(vault.root) == before + 1
    assert done.superseded == (old.id,)
    assert vault.find_episode(CHAT, old.id).episode.superseded_by == done.episode.id
    assert "correction" in done.episode.tags
    hits = found_ids(engine, "Carol afternoon coffee tea")
    assert done.episode.id in hits and old.id not in hits


def test_an_invented_target_is_no_correction(fake_llm, vault, engine):
    fake_llm.script({"candidates": [{**EPISODE, "supersedes": "ep_20260101_ffffff"}]})
    (c,) = run(fake_llm, vault, engine)
    assert c.supersedes is None


def test_at_most_max_candidates_and_hostile_items_are_dropped(fake_llm, vault, engine):
    items = [
        {"kind": "bogus", "text": "x"},
        {"kind": "episode", "text": ["not", "text"]},
        "a string",
        *(
            {"kind": "episode", "text": t}
            for t in (
                "Alice's flight leaves from Frankfurt.",
                "Bob runs the robotics booth.",
                "The team dinner is on Friday at eight.",
                "Dana starts her new job in April.",
            )
        ),
    ]
    fake_llm.script({"candidates": items})
    written = run(fake_llm, vault, engine, max_candidates=2)
    assert len(written) == 2 and list_candidates(vault, CHAT).total == 2


def test_a_profile_change_carries_the_real_previous_value(fake_llm, vault, engine):
    vault.update_profile(
        ProfileEdit(CHAT, "preferences", "add", "black", speaker="u42", fact_key="coffee")
    )
    fake_llm.script(
        {
            "candidates": [
                {
                    "kind": "profile",
                    "profile": "speaker",
                    "field": "preferences",
                    "key": "coffee",
                    "value": "oat flat white",
                    "previous": "espresso",
                }
            ]
        }
    )
    (c,) = run(fake_llm, vault, engine, said="I switched to oat flat whites")
    assert (c.field, c.key, c.value, c.previous) == (
        "preferences",
        "coffee",
        "oat flat white",
        "black",
    )
    done = accept_candidate(vault, CHAT, c.id)
    assert done.profile.preferences == ("coffee: oat flat white",)


FAILURES = {
    "malformed JSON": (Reply(content='{"candidates": [ {"kind": "episode", '), "not JSON"),
    "no candidates list": (Reply(content='{"memories": 3}'), 'no "candidates" list'),
    "timeout": (Reply(content='{"candidates": []}', sleep=1.5), "did not answer within"),
    "refusal": (Reply(refusal="I can't help with that."), "the model refused"),
    "HTTP 500": (Reply(status=500), "HTTP 500"),
    "a body that is not JSON": (Reply(raw=b"<html>bad gateway</html>"), "not JSON"),
}


@pytest.mark.parametrize("case", FAILURES, ids=list(FAILURES))
def test_a_failing_model_logs_one_line_and_changes_nothing(fake_llm, vault, engine, caplog, case):
    reply, message = FAILURES[case]
    vault.remember(NewEpisode(CHAT, "Alice's sister is called Mei."))
    fake_llm.script(reply)
    before = files_and_history(vault.root)
    caplog.set_level(logging.INFO, logger="indexer.jobs.candidates_extract")
    with pytest.raises(LLMError, match=message):
        run(fake_llm, vault, engine, timeout=0.5)
    assert files_and_history(vault.root) == before
    lines = [r.getMessage() for r in caplog.records if r.name == "indexer.jobs.candidates_extract"]
    assert len(lines) == 1 and "event=candidates_failed" in lines[0] and "fake-llm" in lines[0]


def test_a_password_never_reaches_a_file_or_a_commit(fake_llm, vault, engine):
    secret = "Tr0ub4dor-hunter2"
    said = f"my wifi password is {secret}, and I'm flying to Tokyo on Friday"
    fake_llm.script(
        {
            "candidates": [
                {
                    "kind": "episode",
                    "text": f"Alice flies to Tokyo on Friday; her wifi password is {secret}.",
                    "evidence": said,
                },
                {
                    "kind": "profile",
                    "profile": "speaker",
                    "field": "notes",
                    "value": f"wifi password: {secret}",
                    "text": f"Alice's wifi password is {secret}",
                },
            ]
        }
    )
    written = run(fake_llm, vault, engine, said=said, recent=[Turn("user", said)])
    assert written and all("password" in c.redacted for c in written)
    for c in written:
        accept_candidate(vault, CHAT, c.id)
    history = git(vault.root, "log", "-p", "--all", "--format=%B")
    assert secret not in history and "[redacted:password]" in history
    for rel in files_and_history(vault.root):
        assert secret.encode() not in (vault.root / rel).read_bytes(), rel
