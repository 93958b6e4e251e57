"""Search never crosses a scope (its index_key): random scopes, memories, edits, queries."""

import random
import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from indexer.engine import Engine
from indexer.manifest import index_dir
from tests.worlds import open_world
from vault.create import init_vault
from vault.keys import ScopeId
from vault.operations import Vault
from vault.store import BadRequestError, NotFoundError

WORDS = ["beijing", "coffee", "cat", "猫", "北京", "咖啡", "meeting", "会议", "trip", "旅行"]
SCOPES = [
    ScopeId("bot-a", "group_1"),
    ScopeId("bot-a", "group_2"),
    ScopeId("bot-a", "person_7"),
    ScopeId("bot-b", "group_1"),
    ScopeId(None, "group_1"),
]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("iso") / "memory"
    with open_world(root) as world:
        yield world


def _owner_ok(engine, scope, results):
    for r in results:
        assert r.doc.index_key == scope.index_key, (scope, r.doc)
        owner = engine.root / r.doc.path
        assert owner.is_relative_to(vault_folder(engine, scope)), (scope, r.doc.path)


def vault_folder(engine, scope):
    from vault.layout import Layout

    return Layout(engine.root).episodes_dir(scope)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    writes=st.lists(
        st.tuples(
            st.integers(0, len(SCOPES) - 1),
            st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
        ),
        min_size=1,
        max_size=6,
    ),
    edits=st.lists(
        st.tuples(st.integers(0, 50), st.sampled_from(["forget", "archive", "hand"])), max_size=3
    ),
    queries=st.lists(
        st.tuples(st.integers(0, len(SCOPES) - 1), st.sampled_from(WORDS)), min_size=1, max_size=4
    ),
    mode=st.sampled_from(["hybrid", "text", "vector"]),
)
def test_search_never_returns_another_scopes_memory(world, writes, edits, queries, mode):
    vault, engine = world
    made = []
    for index, words in writes:
        scope = SCOPES[index]
        made.append((scope, vault.remember(scope, " ".join(words))))
    for pick, action in edits:
        scope, ep = made[pick % len(made)]
        try:
            if action == "forget":
                vault.forget(scope, ep.id)
            elif action == "archive":
                vault.archive(scope, ep.id)
            else:
                path = vault.find_episode(scope, ep.id).path
                path.write_text(
                    path.read_text(encoding="utf-8") + "\nhand edit 猫\n", encoding="utf-8"
                )
                engine.sync_paths([vault.layout.rel(path)])
        except (NotFoundError, BadRequestError):  # already forgotten/archived earlier here
            continue
    for index, word in queries:
        scope = SCOPES[index]
        results = engine.search(word, scope, top_k=20, mode=mode)
        _owner_ok(engine, scope, results)
        assert len({r.doc.episode_id for r in results}) == len(results)


def test_bot_isolation_sees_the_bots_episodes_and_no_other_bots(world):
    vault, engine = world
    mine = ScopeId("bot-x", "group_1", "bot")
    sibling = ScopeId("bot-x", "group_2", "bot")
    other_bot = ScopeId("bot-y", "group_1", "bot")
    ep = vault.remember(mine, "the bot-wide secret handshake 暗号")
    vault.remember(other_bot, "the bot-wide secret handshake 暗号 of another bot")
    for scope in (mine, sibling):
        ids = [r.doc.episode_id for r in engine.search("secret handshake 暗号", scope, top_k=10)]
        assert ep.id in ids and len(ids) == 1
    ids = [r.doc.episode_id for r in engine.search("secret handshake", other_bot, top_k=10)]
    assert ep.id not in ids and len(ids) == 1
    session_only = ScopeId("bot-x", "group_1")
    assert engine.search("secret handshake", session_only, top_k=10) == []


def test_reindex_from_scratch_gives_identical_rankings(tmp_path):
    root = tmp_path / "memory"
    init_vault(root, git=False)
    vault = Vault(root, git=False)
    rng = random.Random(7)
    scopes = SCOPES[:3]
    for i in range(60):
        words = " ".join(rng.choice(WORDS) for _ in range(5))
        vault.remember(rng.choice(scopes), f"memory {i}: {words}", importance=rng.randint(1, 5))
    queries = [(s, w) for s in scopes for w in WORDS]

    def rankings():
        with Engine.open(root) as engine:
            engine.reconcile()
            return [
                [
                    (r.doc.episode_id, round(r.score, 9))
                    for r in engine.search(w, s, top_k=10, now=1_900_000_000)
                ]
                for s, w in queries
            ]

    first = rankings()
    assert any(first)
    shutil.rmtree(root / ".memvault")
    assert not index_dir(root).exists()
    assert rankings() == first


def test_touched_file_stays_searchable_after_restart(tmp_path):
    """A file whose mtime changed but content did not is not re-indexed, and must still
    rank (its chunk details survive in the manifest)."""
    import os
    import time

    root = tmp_path / "memory"
    init_vault(root, git=False)
    vault = Vault(root, git=False)
    scope = SCOPES[0]
    ep = vault.remember(scope, "the lighthouse keeper retires in May 灯塔")
    path = vault.find_episode(scope, ep.id).path
    with Engine.open(root) as engine:
        engine.reconcile()
    later = time.time() + 5
    os.utime(path, (later, later))
    for _ in range(2):  # restart twice: the touched entry is re-put, then read back
        with Engine.open(root) as engine:
            engine.reconcile()
            for mode in ("text", "vector", "hybrid"):
                hits = engine.search("lighthouse keeper", scope, top_k=3, mode=mode)
                assert [h.doc.episode_id for h in hits][:1] == [ep.id], mode
