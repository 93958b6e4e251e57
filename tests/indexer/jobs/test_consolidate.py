"""Consolidation with a preview: real vault, indexes, embedding model and git; a FAKE LLM."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager

import pytest

from indexer.engine import Engine
from indexer.jobs.consolidate import ConsolidateSettings, StalePreviewError, preview, run
from indexer.jobs.consolidate_preview import PreviewFileError, from_json
from indexer.jobs.llm import LLMError
from indexer.retrieval.search_query import SearchQuery
from tests.conftest import git
from tests.helpers.consolidate_helpers import (
    ALICE,
    CHAT,
    DAY,
    NOW,
    OTHER,
    SUMMARY,
    answer,
    seed,
    tree_hash,
)
from tests.helpers.llm_fake import Reply
from vault.errors import BadRequestError
from vault.files.safewrite import ConflictError
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault
from vault.writes.profile_edit import ProfileEdit


@pytest.fixture
def engine(vault: Vault) -> Iterator[Engine]:
    with Engine.open(vault.root) as opened:
        opened.attach(vault)
        yield opened


@contextmanager
def engine_at_rest(vault: Vault) -> Iterator[Engine]:
    """An engine over an index at rest: closing the first joins tantivy's background merges,
    so a file of the index that changes after this was changed by the code under test."""
    with Engine.open(vault.root) as first:
        first.reconcile()
    with Engine.open(vault.root) as opened:
        opened.attach(vault)
        yield opened


def cached_vectors(vault: Vault) -> int:
    path = vault.root / ".memvault" / "cache" / "embeddings.sqlite"
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        return int(db.execute("SELECT count(*) FROM vectors").fetchone()[0])


def ids(results) -> list[str]:
    return [r.doc.episode_id for r in results]


def saved(vault: Vault) -> dict[str, str]:
    """What a refused run must leave as it was: every memory file and all of git."""
    return tree_hash(vault.root, under="bots") | tree_hash(vault.root, under=".git")


def commits(vault: Vault) -> int:
    return len(git(vault.root, "log", "--oneline").splitlines())


def test_preview_shows_what_run_would_do_and_changes_no_file(vault, fake_llm):
    s = seed(vault, CHAT)
    seed(vault, OTHER)
    fake_llm.script(answer())
    with engine_at_rest(vault) as engine:
        before, vectors = tree_hash(vault.root), cached_vectors(vault)
        made = preview(fake_llm.llm(), vault, engine, CHAT, ConsolidateSettings(), now=NOW)
        assert tree_hash(vault.root) == before  # no file, no index, no git object or ref
        assert cached_vectors(vault) == vectors  # nor a vector added to the embedding cache
    reasons = {v.id: [r.code for r in v.reasons] for v in made.archive}
    assert reasons == {
        s.old.id: ["old"],
        s.chatter.id: ["low_importance"],
        s.superseded.id: ["superseded"],
    }
    assert made.summary is not None and made.summary.text == SUMMARY
    # Dated as the newest original, with the most important one's importance.
    assert made.summary.created_at == s.chatter.created_at and made.summary.importance == 2
    # The memories reached the model as JSON data, one record each, and only this chat's.
    (request,) = fake_llm.requests
    user = request["messages"][1]["content"]
    records = json.loads(user.split("(JSON): ", 1)[1].split("\n", 1)[0])
    assert sorted(r["id"] for r in records) == sorted(reasons)
    assert s.kept.body not in user


def test_run_writes_one_commit_of_only_this_chats_files(vault, engine, fake_llm):
    s = seed(vault, CHAT)
    seed(vault, OTHER)
    engine.reconcile()
    fake_llm.script(answer())
    made = preview(fake_llm.llm(), vault, engine, CHAT, ConsolidateSettings(), now=NOW)
    other_before = tree_hash(vault.root, under="bots/bot-1/sessions/group_2")
    count = commits(vault)
    done = run(vault, engine, made)
    assert commits(vault) == count + 1
    changed = git(vault.root, "show", "--name-only", "--format=", "HEAD").split()
    chat_dir = "bots/bot-1/sessions/group_1/"
    assert changed and all(path.startswith(chat_dir) for path in changed)
    assert done.rel in changed and len(changed) == 1 + 3 + 1  # summary, originals, audit
    assert tree_hash(vault.root, under="bots/bot-1/sessions/group_2") == other_before
    summary = vault.find_episode(CHAT, done.summary.id).episode
    assert summary.source == "consolidation"
    assert dict(summary.extra)["consolidates"] == list(done.archived)
    for original in (s.old, s.chatter, s.superseded):
        ep = vault.find_episode(CHAT, original.id).episode
        assert ep.status == "archived" and dict(ep.extra)["consolidated_into"] == summary.id
    audit = vault.layout.audit_path(CHAT).read_text(encoding="utf-8").splitlines()[-4:]
    ops = [(json.loads(line)["operation"], json.loads(line)["target_id"]) for line in audit]
    assert ops == [("consolidate", summary.id)] + [("archive", i) for i in done.archived]
    # Recall: the summary answers, the originals no longer do; the other chat still does.
    assert summary.id in ids(engine.search(SearchQuery("Alice Beijing robotics conference", CHAT)))
    assert s.old.id not in ids(
        engine.search(SearchQuery("Alice Beijing robotics conference", CHAT))
    )
    assert s.chatter.id not in ids(engine.search(SearchQuery("Bob good morning", CHAT)))
    assert ids(engine.search(SearchQuery("Bob good morning", OTHER)))


def test_git_revert_of_the_commit_restores_the_originals_and_recall(vault, engine, fake_llm):
    s = seed(vault, CHAT)
    engine.reconcile()
    fake_llm.script(answer())
    made = preview(fake_llm.llm(), vault, engine, CHAT, ConsolidateSettings(), now=NOW)
    before = tree_hash(vault.root, under="bots")
    done = run(vault, engine, made)
    assert s.old.id not in ids(
        engine.search(SearchQuery("Alice Beijing robotics conference", CHAT))
    )
    git(vault.root, "revert", "--no-edit", "HEAD")
    engine.reconcile()  # what the watcher does after a revert
    assert tree_hash(vault.root, under="bots") == before
    hits = ids(engine.search(SearchQuery("Alice Beijing robotics conference", CHAT)))
    assert s.old.id in hits and done.summary.id not in hits
    assert s.chatter.id in ids(engine.search(SearchQuery("Bob good morning", CHAT)))


BAD_ANSWERS = {
    "malformed": Reply(content='Sure! {"summary": "Alice went to'),
    "refusal": Reply(refusal="I can't help with that."),
    "http_error": Reply(status=500),
    "no_summary": Reply(content='{"tags": ["x"], "profile_updates": []}'),
    "summary_not_text": Reply(content='{"summary": ["a", "b"]}'),
    "too_long": Reply(content=json.dumps({"summary": "x" * 30_000})),
    "timeout": Reply(sleep=2.0),
}


@pytest.mark.parametrize("kind", sorted(BAD_ANSWERS))
def test_a_failing_llm_changes_nothing_and_says_so(vault, fake_llm, caplog, kind):
    seed(vault, CHAT)
    fake_llm.script(BAD_ANSWERS[kind])
    llm = fake_llm.llm(timeout=0.5)
    with engine_at_rest(vault) as engine:
        before = tree_hash(vault.root)
        count = commits(vault)
        with caplog.at_level(logging.WARNING), pytest.raises(LLMError) as failure:
            preview(llm, vault, engine, CHAT, ConsolidateSettings(), now=NOW)
        assert tree_hash(vault.root) == before and commits(vault) == count
    assert "nothing was changed" in str(failure.value)
    lines = [r.getMessage() for r in caplog.records if "consolidate_failed" in r.getMessage()]
    assert len(lines) == 1 and CHAT.session_key in lines[0]


def test_an_original_edited_after_the_preview_is_refused(vault, engine, fake_llm):
    s = seed(vault, CHAT)
    engine.reconcile()
    fake_llm.script(answer())
    made = preview(fake_llm.llm(), vault, engine, CHAT, ConsolidateSettings(), now=NOW)
    path = vault.find_episode(CHAT, s.old.id).path
    path.write_text(path.read_text(encoding="utf-8") + "She gave a talk there.\n", "utf-8")
    before, count = saved(vault), commits(vault)
    with pytest.raises(StalePreviewError, match=f"edited since: {s.old.id}"):
        run(vault, engine, made)
    assert saved(vault) == before and commits(vault) == count


def test_a_memory_qualifying_after_the_preview_is_refused(vault, engine, fake_llm):
    seed(vault, CHAT)
    engine.reconcile()
    fake_llm.script(answer())
    made = preview(fake_llm.llm(), vault, engine, CHAT, ConsolidateSettings(), now=NOW)
    late = vault.remember(NewEpisode(CHAT, "Frank waved.", importance=1))
    before, count = saved(vault), commits(vault)
    with pytest.raises(StalePreviewError, match=f"newly selected: {late.id}"):
        run(vault, engine, made)
    assert saved(vault) == before and commits(vault) == count


def test_a_preview_changed_after_it_was_made_is_refused(vault, engine, fake_llm):
    seed(vault, CHAT)
    engine.reconcile()
    fake_llm.script(answer())
    made = preview(fake_llm.llm(), vault, engine, CHAT, ConsolidateSettings(), now=NOW)
    assert from_json(json.loads(json.dumps(made.as_json()))) == made
    data = made.as_json()
    data["summary"]["text"] = "Something nobody saw."
    with pytest.raises(PreviewFileError, match="does not match its digest"):
        from_json(data)
    before = saved(vault)
    with pytest.raises(BadRequestError, match="not the preview you saw"):
        run(vault, engine, made, digest="0" * 64)
    assert saved(vault) == before


UPDATES = [
    {"profile": "session", "field": "traits", "action": "add", "value": "likes robotics talk"},
    {"profile": "speaker", "speaker": "u42", "field": "name", "action": "set", "value": "Alice W"},
    {"profile": "speaker", "speaker": "u99", "field": "name", "action": "set", "value": "Mallory"},
    {"profile": "session", "field": "password", "action": "set", "value": "x"},
    {"profile": "session", "field": "traits", "action": "remove", "value": "not there"},
]


@pytest.mark.parametrize("apply", [False, True])
def test_profile_updates_apply_only_when_the_setting_allows(vault, engine, fake_llm, apply):
    seed(vault, CHAT)
    engine.reconcile()
    fake_llm.script(answer(updates=UPDATES))
    settings = ConsolidateSettings(apply_profile_updates=apply)
    made = preview(fake_llm.llm(), vault, engine, CHAT, settings, now=NOW)
    assert [e.describe() for e in made.profile_edits] == [
        "add session profile traits: likes robotics talk",
        "set speaker u42 profile name: Alice W",
    ]
    # The speaker who said none of the memories, an unknown field and an edit that cannot
    # apply are dropped, each with its reason.
    assert len(made.dropped) == 3 and "u99" in made.dropped[0] and "password" in made.dropped[1]
    assert made.applies_profile_edits is apply
    done = run(vault, engine, made)
    session, speaker = vault.read_profile(CHAT), vault.read_profile(CHAT, ALICE.id)
    assert ("likes robotics talk" in session.traits) is apply
    assert (speaker.name == "Alice W") is apply
    assert not vault.profile_path(CHAT, "u99").exists()
    changed = git(vault.root, "show", "--name-only", "--format=", "HEAD").split()
    profiles = [p for p in changed if p.endswith(".yaml")]
    assert len(profiles) == (2 if apply else 0) and len(done.profile_edits) == len(profiles)
    audit = vault.layout.audit_path(CHAT).read_text(encoding="utf-8").splitlines()
    updates = [line for line in audit if json.loads(line)["operation"] == "update_profile"]
    assert len(updates) == (2 if apply else 0)


def test_a_profile_edited_after_the_preview_is_refused(vault, engine, fake_llm):
    seed(vault, CHAT)
    engine.reconcile()
    fake_llm.script(answer(updates=UPDATES[:1]))
    settings = ConsolidateSettings(apply_profile_updates=True)
    made = preview(fake_llm.llm(), vault, engine, CHAT, settings, now=NOW)
    vault.update_profile(ProfileEdit(CHAT, "notes", "set", "edited in between"), source="user")
    before, count = saved(vault), commits(vault)
    with pytest.raises(ConflictError, match="profile.yaml changed since the consolidation"):
        run(vault, engine, made)
    assert saved(vault) == before and commits(vault) == count


def test_near_duplicates_are_selected_by_the_calibrated_line(vault, engine, fake_llm):
    recent = NOW.replace(microsecond=0)
    a = vault.remember(
        NewEpisode(CHAT, "Carol likes green tea in the afternoon.", created_at=recent)
    )
    b = vault.remember(
        NewEpisode(CHAT, "Carol likes green tea in the afternoons.", created_at=recent)
    )
    c = vault.remember(NewEpisode(CHAT, "The gym closes at ten on Fridays.", created_at=recent))
    fake_llm.script(answer())
    made = preview(fake_llm.llm(), vault, engine, CHAT, ConsolidateSettings(), now=NOW)
    picked = {v.id: v.reasons for v in made.archive}
    assert set(picked) == {a.id, b.id} and c.id not in picked
    assert [r.other for r in picked[a.id]] == [b.id] and made.threshold is not None
    off = ConsolidateSettings(duplicates=False)
    assert not preview(fake_llm.llm(), vault, engine, CHAT, off, now=NOW).archive


def test_no_secret_reaches_the_model_the_preview_a_file_or_a_commit(vault, engine, fake_llm):
    seed(vault, CHAT)
    # A person's own file with a secret in it (MemVault never rewrites it, but sends it
    # nowhere either).
    hand = vault.layout.episodes_dir(CHAT) / "hand.md"
    hand.write_text("Old note: the wifi password is hunter2-Zebra\n", encoding="utf-8")
    stamp = (NOW - 300 * DAY).timestamp()
    os.utime(hand, (stamp, stamp))
    secret = "sk-proj-4fJ9xQ2mZk7LwP0vT3nR8sB1"
    fake_llm.script(
        answer(
            summary=f"{SUMMARY} The deploy key is {secret}.",
            updates=[{"profile": "session", "field": "notes", "action": "add", "value": secret}],
        )
    )
    settings = ConsolidateSettings(apply_profile_updates=True)
    made = preview(fake_llm.llm(), vault, engine, CHAT, settings, now=NOW)
    # never sent to the model, never archived (which would commit it): skipped, and said
    assert "hunter2" not in json.dumps(fake_llm.requests)
    (skipped,) = made.skipped
    assert skipped[0].endswith("hand.md") and "secret (password)" in skipped[1]
    assert made.summary is not None and "[redacted:api_key]" in made.summary.text
    assert secret not in json.dumps(made.as_json())
    # a profile value that is nothing but a secret is dropped, saying why
    assert not made.profile_edits and "only a secret" in made.dropped[0]
    run(vault, engine, made)
    history = git(vault.root, "log", "-p", "--all")
    assert secret not in history and "hunter2" not in history
    assert "hunter2" in hand.read_text(encoding="utf-8")  # a person's file: left alone
