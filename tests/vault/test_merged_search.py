"""One search over several index keys (a chat plus its attached KB libraries).

- Both backends: a search over several keys is exactly the merge of the single-key
  searches (same hits, same scores, best first), so the scores of different keys compare
  and one pool can be fused once.
- The engine: `Engine.search(..., libraries=...)` finds a memory of the chat or of an
  attached library, never one of another chat or of a library not attached.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import indexer.engine as engine_module
from indexer.retrieval.search_query import SearchQuery
from tests.helpers.worlds import open_world
from tests.indexer.backends.test_index_contract import doc, open_backend
from vault.layout.keys import ScopeId
from vault.writes.new_episode import NewEpisode

KEYS = ("bot:b1", "b1:group_2", "kb:lib_a", "kb:lib_b")
TEXTS = (
    "The user's cat is named Mochi and sleeps on the keyboard.",
    "Alice is going to Beijing next week for a conference on databases.",
    "Bob prefers an oat flat white coffee every morning.",
    "用户的猫叫小白，喜欢在窗台上睡觉。",
    "我下周去北京出差，顺便见老朋友。",
    "The office printer is on the third floor.",
    "Alice's flight to Tokyo is on Tuesday.",
    "Carol's cat likes coffee beans and the keyboard.",
)
QUERIES = ("cat keyboard", "Alice flight", "coffee", "北京", "猫", "office printer", "Tokyo")
FAST = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.mark.parametrize("kind", ["text", "vector"])
@FAST
@given(
    owners=st.lists(st.sampled_from(KEYS), min_size=len(TEXTS), max_size=len(TEXTS)),
    asked=st.lists(st.sampled_from(KEYS), min_size=1, max_size=4),
    query=st.sampled_from(QUERIES),
    limit=st.integers(1, 9),
)
def test_a_several_key_search_is_the_merge_of_single_key_searches(
    kind, owners, asked, query, limit
):
    index = open_backend(kind, None)
    try:
        index.upsert(
            [doc(i + 1, t, key) for i, (t, key) in enumerate(zip(TEXTS, owners, strict=True))]
        )
        index.commit()
        merged = index.search(query, tuple(asked), limit)
        singles = [h for key in dict.fromkeys(asked) for h in index.search(query, key, 99)]
    finally:
        index.close()
    owner = {i + 1: key for i, key in enumerate(owners)}
    assert all(owner[h.chunk_id] in asked for h in merged)
    expected = sorted(singles, key=lambda h: -h.score)[:limit]
    assert [round(h.score, 5) for h in merged] == [round(h.score, 5) for h in expected]
    alone = {h.chunk_id: h.score for h in singles}
    assert all(abs(alone[h.chunk_id] - h.score) < 1e-5 for h in merged)
    if kind == "vector":  # every row of the asked keys is a candidate
        assert len(merged) == min(limit, len(singles))


def test_a_bare_string_is_one_key_not_its_characters():
    index = open_backend("text", None)
    try:
        index.upsert([doc(1, "coffee", "b"), doc(2, "coffee", "bot:b1")])
        index.commit()
        assert [h.chunk_id for h in index.search("coffee", "bot:b1", 5)] == [2]
        assert index.search("coffee", (), 5) == []
    finally:
        index.close()


CHAT, OTHER_CHAT = ScopeId("bot-a", "group_1"), ScopeId("bot-a", "group_2")
LIB_A, LIB_B = ScopeId(None, "kb_a", "session"), ScopeId(None, "kb_b", "session")
SCOPES = (CHAT, OTHER_CHAT, LIB_A, LIB_B)
_serial = itertools.count()


@pytest.fixture(scope="module")
def world(tmp_path_factory, tiny_embedder):
    """The subject is which keys a search may reach, not the model: the TEST FAKE embedder."""
    root = tmp_path_factory.mktemp("merged") / "memory"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(engine_module, "embedder_from_settings", lambda: tiny_embedder)
        with open_world(root) as world:
            yield world


def _word(n: int) -> str:
    """A word no other memory holds (letters only: the stemmer leaves it whole)."""
    letters = ""
    n += 26 * 26
    while n:
        n, r = divmod(n, 26)
        letters += "abcdefghijklmnopqrstuvwxyz"[r]
    return "zq" + letters


@FAST
@given(
    owners=st.lists(st.integers(0, len(SCOPES) - 1), min_size=1, max_size=6),
    attached=st.sets(st.sampled_from([LIB_A, LIB_B])),
    mode=st.sampled_from(["hybrid", "text", "vector"]),
)
def test_the_merged_pool_holds_the_chat_and_its_libraries_only(world, owners, attached, mode):
    vault, engine = world
    allowed = {CHAT.index_key, *(lib.index_key for lib in attached)}
    made = []
    for pick in owners:
        word = _word(next(_serial))
        vault.remember(NewEpisode(SCOPES[pick], f"note about {word} and the team lunch"))
        made.append((SCOPES[pick], word))
    libraries = sorted(attached, key=lambda s: s.session)
    for scope, word in made:
        found = engine.search(SearchQuery(word, CHAT, top_k=5, libraries=libraries, mode="text"))
        keys = [r.doc.index_key for r in found]
        if scope.index_key in allowed:  # its own unique word finds it first
            assert found and keys[0] == scope.index_key and word in found[0].doc.text
        else:
            assert all(word not in r.doc.text for r in found)
        assert set(keys) <= allowed
        wide = engine.search(
            SearchQuery(f"team lunch {word}", CHAT, top_k=50, libraries=libraries, mode=mode)
        )
        assert {r.doc.index_key for r in wide} <= allowed
        if scope.index_key in allowed and mode != "vector":  # vectors know no made-up word
            assert any(word in r.doc.text for r in wide)
