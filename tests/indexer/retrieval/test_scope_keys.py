"""The index's scope filter is injective: no two scopes share a key, whatever their ids hold.

LangBot's joined keys collide (bot `a:b` + session `group_1` and bot `a` + session
`b:group_1` are both `a:b:group_1`), so they are only displayed; the indexes filter on
`index_key` / `profile_key`. Property tests over hostile ids, then the three collisions of
issue 10 end to end through the real engine (Tantivy + FAISS + the embedded model).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest
import tantivy
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.engine import Engine
from indexer.retrieval.search_query import SearchQuery
from indexer.sync.manifest import index_dir
from indexer.sync.manifest_schema import SCHEMA_VERSION
from vault.layout.keys import ScopeId, index_key, profile_index_key, session_key, user_key
from vault.layout.layout import NOBOT, Layout, classify
from vault.writes.create import init_vault
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault
from vault.writes.profile_edit import ProfileEdit
from vault.writes.snapshots import read_snapshot, snapshot_path, write_snapshot

# Pieces that make joined strings collide: separators, tags, escapes, the no-bot marker.
PIECES = [
    "a", "b", "b9", ":", "/", "%", "%3A", "%2F", "~", "-", "bot:", "global", "group_1",
    "s/", "b/", "p/", "é", "猫", " ", "_",
]  # fmt: skip
ids = st.lists(st.sampled_from(PIECES), min_size=1, max_size=4).map("".join)
bots = st.one_of(st.none(), st.just(""), ids)
KINDS = ("session", "bot", "profile")


def key_of(kind: str, bot: str | None, session: str) -> str:
    if kind == "profile":
        return profile_index_key(bot, session)
    return index_key(bot, session, kind)  # type: ignore[arg-type]


def identity(kind: str, bot: str | None, session: str) -> tuple[str, str | None, str | None]:
    """What a scope IS: the kind, the bot (empty = none, as upstream) and, unless the key is
    bot-wide, the session. Bot isolation shares one key across the bot's sessions on purpose."""
    return (kind, bot or None, None if kind == "bot" else session)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(KINDS), bots, ids), min_size=2, max_size=12))
def test_index_keys_are_equal_exactly_when_the_scopes_are(triples):
    by_key: dict[str, set[tuple[str, str | None, str | None]]] = {}
    for kind, bot, session in triples:
        key = key_of(kind, bot, session)
        assert key == key_of(kind, bot, session)  # deterministic
        by_key.setdefault(key, set()).add(identity(kind, bot, session))
    assert all(len(owners) == 1 for owners in by_key.values()), by_key
    assert len(by_key) == len({identity(*t) for t in triples})


@settings(max_examples=300, deadline=None)
@given(
    st.tuples(bots, ids, st.sampled_from(["session", "bot"])),
    st.tuples(bots, ids, st.sampled_from(["session", "bot"])),
)
def test_two_scopes_share_an_index_key_exactly_when_they_share_a_folder(one, two):
    """The key is the folder's identity: the writer's folder and the reader's key agree."""
    layout = Layout(Path("/vault"))
    a, b = ScopeId(*one), ScopeId(*two)  # type: ignore[arg-type]
    same_episodes = layout.episodes_dir(a) == layout.episodes_dir(b)
    assert (a.index_key == b.index_key) == same_episodes
    same_session = layout.session_dir(a) == layout.session_dir(b)
    assert (a.profile_key == b.profile_key) == same_session
    assert a.index_key != b.profile_key


@settings(max_examples=200, deadline=None)
@given(bots, ids, st.sampled_from(["session", "bot"]), ids)
def test_a_file_is_indexed_under_the_key_its_scope_searches(bot, session, isolation, speaker):
    root = Path("/vault")
    layout = Layout(root)
    scope = ScopeId(bot, session, isolation)  # type: ignore[arg-type]
    when = datetime(2026, 1, 2, tzinfo=UTC)
    episode = classify(root, layout.rel(layout.new_episode_path(scope, "ep_1", when)))
    assert (episode.kind, episode.index_key) == ("episode", scope.index_key)
    assert episode.user_key == scope.user_key  # the displayed key stays LangBot's
    for path in (layout.profile_path(scope), layout.speaker_path(scope, speaker)):
        role = classify(root, layout.rel(path))
        assert role.index_key == scope.profile_key and role.session_key == scope.session_key


# The collisions of issue 10: same LangBot key, different scopes (and folders).
PAIRS = [
    (ScopeId("a:b", "group_1"), ScopeId("a", "b:group_1")),
    (ScopeId(None, "bot:b9"), ScopeId("b9", "group_1", "bot")),
    (ScopeId(None, "global"), ScopeId(None, "group_1", "bot")),
]


@pytest.mark.parametrize("one, two", PAIRS)
def test_the_displayed_keys_collide_but_the_index_keys_do_not(one, two):
    assert one.user_key == two.user_key  # why the index must not filter on it
    assert one.index_key != two.index_key
    assert user_key(one.bot, one.session, one.isolation) == one.user_key
    assert session_key("a:b", "group_1") == ScopeId("a:b", "group_1").session_key


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("keys") / "memory"
    init_vault(root, git=False)
    vault = Vault(root, git=False)
    engine = Engine.open(root)
    engine.attach(vault)
    written: dict[ScopeId, tuple[str, str]] = {}
    for n, pair in enumerate(PAIRS):
        for side, scope in enumerate(pair):
            word = f"zq{n}{'xy'[side]}marker"
            written[scope] = (
                vault.remember(NewEpisode(scope, f"the meeting room sign says {word}")).id,
                word,
            )
    yield vault, engine, written
    engine.close()


@pytest.mark.parametrize("mode", ["hybrid", "text", "vector"])
@pytest.mark.parametrize("pair", range(len(PAIRS)))
def test_each_chat_finds_its_own_memory_and_never_the_colliding_chats(world, pair, mode):
    _, engine, written = world
    for scope in PAIRS[pair]:
        mine, word = written[scope]
        for other in PAIRS[pair]:
            query = written[other][1]
            found = [
                r.doc.episode_id
                for r in engine.search(SearchQuery(query, scope, top_k=10, mode=mode))
            ]
            if other == scope or mode == "vector":  # a lone vector always ranks its own
                assert mine in found, (scope, query, found)
            assert set(found) <= {mine}, (scope, query, found)


def test_profiles_of_colliding_sessions_stay_apart(world):
    vault, engine, _ = world
    one, two = PAIRS[0]
    assert one.session_key == two.session_key
    for scope, word in ((one, "qqalphanote"), (two, "qqbetanote")):
        vault.update_profile(ProfileEdit(scope, "notes", "set", f"likes {word}"))
        vault.update_profile(ProfileEdit(scope, "notes", "set", f"speaker {word}", speaker="u1"))
    for scope in (one, two):
        folder = vault.layout.rel(vault.layout.session_dir(scope)) + "/"
        for word in ("qqalphanote", "qqbetanote"):
            found = engine.search(SearchQuery(word, scope, top_k=10, include_profiles=True))
            paths = {r.doc.path for r in found if r.doc.kind in ("profile", "speaker")}
            # Both of its own profiles (session + speaker), none of the other session's.
            assert len(paths) == 2 and all(p.startswith(folder) for p in paths), paths
            assert len({r.doc.episode_id for r in found}) == len(found)


@pytest.mark.parametrize("one, two", PAIRS)
def test_a_chats_injection_snapshot_is_never_shown_to_the_colliding_chat(tmp_path, one, two):
    write_snapshot(tmp_path, one, {"episodes": ["ep_secret"]})
    assert read_snapshot(tmp_path, one) == {"episodes": ["ep_secret"]}
    assert read_snapshot(tmp_path, two) is None
    assert snapshot_path(tmp_path, one) != snapshot_path(tmp_path, two)


def _legacy_text_index(folder: Path, chunk_ids: list[int], key: str) -> None:
    """A text index as the previous schema had it (scope field `user_key`), every chunk
    filed under one colliding LangBot key."""
    sb = tantivy.SchemaBuilder()
    sb.add_unsigned_field("chunk_id", stored=True, indexed=True, fast=True)
    for name in ("episode_id", "path", "kind", "user_key", "status"):
        sb.add_text_field(name, stored=True, tokenizer_name="raw", index_option="basic")
    sb.add_text_field("text", index_option="freq")
    index = tantivy.Index(sb.build(), path=str(folder))
    writer = index.writer(heap_size=15_000_000, num_threads=1)
    for cid in chunk_ids:
        doc = tantivy.Document()
        doc.add_unsigned("chunk_id", cid)
        for name, value in (("episode_id", "x"), ("path", "x"), ("kind", "episode")):
            doc.add_text(name, value)
        doc.add_text("user_key", key)
        doc.add_text("status", "active")
        doc.add_text("text", "zq0xymarker zq0yymarker")
        writer.add_document(doc)
    writer.commit()
    writer.wait_merging_threads()


def test_an_index_of_the_old_schema_is_rebuilt_with_injective_keys(tmp_path):
    root = tmp_path / "memory"
    init_vault(root, git=False)
    vault = Vault(root, git=False)
    one, two = PAIRS[0]
    mine = vault.remember(NewEpisode(one, "the meeting room sign says zq0xymarker")).id
    theirs = vault.remember(NewEpisode(two, "the meeting room sign says zq0yymarker")).id
    with Engine.open(root) as engine:
        engine.reconcile()
        held = sorted(engine.text.ids())
    folder = index_dir(root)
    # Downgrade to what the previous version left on disk: manifest schema 2, a text index
    # whose scope field is `user_key`.
    with sqlite3.connect(folder / "manifest.sqlite") as db:
        db.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
        for cid, text in db.execute("SELECT chunk_id, doc FROM chunks").fetchall():
            old = json.loads(text)
            old["user_key"] = one.user_key  # the joined key both scopes shared
            del old["index_key"]
            db.execute("UPDATE chunks SET doc = ? WHERE chunk_id = ?", (json.dumps(old), cid))
    shutil.rmtree(folder / "text")
    (folder / "text").mkdir()
    _legacy_text_index(folder / "text", held, one.user_key)
    with Engine.open(root) as engine:
        engine.reconcile()
        for scope, own in ((one, mine), (two, theirs)):
            for mode in ("text", "hybrid"):
                found = {
                    r.doc.episode_id
                    for q in ("zq0xymarker", "zq0yymarker")
                    for r in engine.search(SearchQuery(q, scope, top_k=10, mode=mode))
                }
                assert found == {own}, (scope, mode, found)
    with sqlite3.connect(folder / "manifest.sqlite") as db:
        docs = [json.loads(d) for (d,) in db.execute("SELECT doc FROM chunks")]
        (version,) = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    assert version == str(SCHEMA_VERSION)
    assert {d["index_key"] for d in docs} == {one.index_key, two.index_key}


def test_nobot_folder_keeps_its_own_key():
    # `_nobot` is the folder of memory without a bot, never a bot id of its own.
    assert classify(Path("/v"), f"bots/{NOBOT}/episodes/2026/01/x.md").index_key == "b/~"
    assert ScopeId(None, "group_1", "bot").index_key == "b/~"
    assert ScopeId("~", "group_1", "bot").index_key == "b/%7E"
