"""Search never crosses a scope (its index_key): random scopes, memories, edits, queries."""

import random
import shutil
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from indexer.engine import Engine
from indexer.retrieval.search_query import SearchQuery
from indexer.sync.manifest import index_dir
from tests.helpers.worlds import open_world
from vault.layout.keys import ScopeId
from vault.writes.create import init_vault
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

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


@dataclass
class Memory:
    scope: ScopeId
    words: set[str]
    status: str = "active"  # or "archived", "forgotten"


class Ledger(dict[str, Memory]):
    """Every memory the property wrote into the module's world, over all its examples: what
    each scope must find (and must not) is computed from it, not from the index."""

    def __repr__(self) -> str:  # hypothesis prints the fixture with a failing example
        return f"<ledger of {len(self)} memories>"


@pytest.fixture(scope="module")
def ledger() -> Ledger:
    return Ledger()


TOP_K = 1000  # more than the property ever writes: every match fits, none is cut by rank


def _owner_ok(engine, scope, results):
    for r in results:
        assert r.doc.index_key == scope.index_key, (scope, r.doc)
        owner = engine.root / r.doc.path
        assert owner.is_relative_to(vault_folder(engine, scope)), (scope, r.doc.path)


def vault_folder(engine, scope):
    from vault.layout.layout import Layout

    return Layout(engine.root).episodes_dir(scope)


def _edit(vault, engine, scope, ep_id, memory, action):
    """Apply one edit a person could make; an edit of a memory already gone is not made."""
    if memory.status == "forgotten" or (action == "archive" and memory.status == "archived"):
        return
    if action == "forget":
        vault.forget(scope, ep_id)
        memory.status = "forgotten"
    elif action == "archive":
        vault.archive(scope, ep_id)
        memory.status = "archived"
    else:
        path = vault.find_episode(scope, ep_id).path
        path.write_text(path.read_text(encoding="utf-8") + "\nhand edit 猫\n", encoding="utf-8")
        engine.sync_paths([vault.layout.rel(path)])
        memory.words.add("猫")


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    # The world persists across examples, so shrinking only piles up memories (thousands
    # after minutes) without giving a smaller case: report the first failure as found.
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    report_multiple_bugs=False,
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
def test_search_finds_its_scopes_memories_and_never_another_scopes(
    world, ledger, writes, edits, queries, mode
):
    vault, engine = world
    made = []
    for index, words in writes:
        scope = SCOPES[index]
        ep = vault.remember(NewEpisode(scope, " ".join(words)))
        ledger[ep.id] = Memory(scope, set(words))
        made.append((scope, ep.id, words[0]))
    for pick, action in edits:
        scope, ep_id, _ = made[pick % len(made)]
        _edit(vault, engine, scope, ep_id, ledger[ep_id], action)
    # Each new memory is looked up by one of its own words (so the property is never only
    # about empty results), then random scope/word pairs, also scopes holding no match.
    asked = [(scope, word) for scope, _, word in made] + [(SCOPES[i], w) for i, w in queries]
    for scope, word in asked:
        results = engine.search(SearchQuery(word, scope, top_k=TOP_K, mode=mode))
        _owner_ok(engine, scope, results)
        found = [r.doc.episode_id for r in results]
        assert len(set(found)) == len(found), found
        live = {i for i, m in ledger.items() if m.scope == scope and m.status == "active"}
        matching = {i for i in live if word in ledger[i].words}
        # Never another scope's memory, nor an archived or forgotten one of its own...
        assert set(found) <= live, (scope, word, mode, set(found) - live)
        # ...and every live memory of its own scope that holds the word is found.
        assert matching <= set(found), (scope, word, mode, matching - set(found))


def test_bot_isolation_sees_the_bots_episodes_and_no_other_bots(world):
    vault, engine = world
    mine = ScopeId("bot-x", "group_1", "bot")
    sibling = ScopeId("bot-x", "group_2", "bot")
    other_bot = ScopeId("bot-y", "group_1", "bot")
    ep = vault.remember(NewEpisode(mine, "the bot-wide secret handshake 暗号"))
    vault.remember(NewEpisode(other_bot, "the bot-wide secret handshake 暗号 of another bot"))
    for scope in (mine, sibling):
        ids = [
            r.doc.episode_id
            for r in engine.search(SearchQuery("secret handshake 暗号", scope, top_k=10))
        ]
        assert ep.id in ids and len(ids) == 1
    ids = [
        r.doc.episode_id
        for r in engine.search(SearchQuery("secret handshake", other_bot, top_k=10))
    ]
    assert ep.id not in ids and len(ids) == 1
    session_only = ScopeId("bot-x", "group_1")
    assert engine.search(SearchQuery("secret handshake", session_only, top_k=10)) == []


def test_reindex_from_scratch_gives_identical_rankings(tmp_path, embedder):
    root = tmp_path / "memory"
    init_vault(root, git=False)
    vault = Vault(root, git=False)
    rng = random.Random(7)
    scopes = SCOPES[:3]
    for i in range(60):
        words = " ".join(rng.choice(WORDS) for _ in range(5))
        vault.remember(
            NewEpisode(rng.choice(scopes), f"memory {i}: {words}", importance=rng.randint(1, 5))
        )
    queries = [(s, w) for s in scopes for w in WORDS]

    def rankings():
        with Engine.open(root, embedder=embedder) as engine:
            engine.reconcile()
            return [
                [
                    (r.doc.episode_id, round(r.score, 9))
                    for r in engine.search(SearchQuery(w, s, top_k=10, now=1_900_000_000))
                ]
                for s, w in queries
            ]

    first = rankings()
    assert any(first)
    shutil.rmtree(root / ".memvault")
    assert not index_dir(root).exists()
    assert rankings() == first


def test_touched_file_stays_searchable_after_restart(tmp_path, embedder):
    """A file whose mtime changed but content did not is not re-indexed, and must still
    rank (its chunk details survive in the manifest)."""
    import os
    import time

    root = tmp_path / "memory"
    init_vault(root, git=False)
    vault = Vault(root, git=False)
    scope = SCOPES[0]
    ep = vault.remember(NewEpisode(scope, "the lighthouse keeper retires in May 灯塔"))
    path = vault.find_episode(scope, ep.id).path
    with Engine.open(root, embedder=embedder) as engine:
        engine.reconcile()
    later = time.time() + 5
    os.utime(path, (later, later))
    for _ in range(2):  # restart twice: the touched entry is re-put, then read back
        with Engine.open(root, embedder=embedder) as engine:
            engine.reconcile()
            for mode in ("text", "vector", "hybrid"):
                hits = engine.search(SearchQuery("lighthouse keeper", scope, top_k=3, mode=mode))
                assert [h.doc.episode_id for h in hits][:1] == [ep.id], mode
