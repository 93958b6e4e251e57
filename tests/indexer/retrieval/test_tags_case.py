"""Tags match across case (issue 14): `[Hobby, hobby]` is one tag shown as `Hobby`, and a
search or filter for `HOBBY` finds it. Real files, real Tantivy and FAISS."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from indexer.retrieval.ranking import is_update
from indexer.retrieval.search_query import SearchQuery
from tests.helpers.worlds import open_world
from vault.format.episodes import parse_episode
from vault.format.tags import normalise_tags, tag_key, tag_keys
from vault.layout.keys import ScopeId
from vault.writes.episode_edit import edit_episode
from vault.writes.new_episode import NewEpisode

SCOPE = ScopeId("bot-1", "group_tags")
TAG = st.text(st.sampled_from("aAbBßSsİi ＨｈΣσς中文 "), max_size=5)
# Tags whose matching key contains a given key: the filter the index answers
# (indexer.retrieval.filters
# builds on the same manifest fields).
HAS_TAG = "EXISTS (SELECT 1 FROM json_each(doc, '$.tag_keys') WHERE value = ?)"


@given(st.lists(TAG, max_size=8))
def test_normalise_keeps_one_tag_per_key_the_first_spelling_trimmed(tags: list[str]) -> None:
    out = normalise_tags(tags)
    keys = [tag_key(t) for t in out]
    assert len(keys) == len(set(keys)) and all(keys)  # one per key, no blank
    assert set(keys) == {tag_key(t) for t in tags if tag_key(t)}  # none lost
    for tag in out:  # each is the first spelling of its key, trimmed
        assert tag == next(t.strip() for t in tags if tag_key(t) == tag_key(tag))
    assert normalise_tags(out) == out
    assert tag_keys(tags) == tuple(keys)


def test_case_and_width_fold() -> None:
    assert tag_key("HOBBY") == tag_key(" hobby ") == tag_key("Ｈｏｂｂｙ") == "hobby"
    assert tag_key("Straße") == tag_key("STRASSE")


def test_a_hand_written_file_reads_one_tag_per_spelling() -> None:
    text = "---\ntags: [Hobby, hobby, ' HOBBY', Travel]\n---\nplays chess\n"
    assert parse_episode(text, rel_path="x", mtime=0).tags == ("Hobby", "Travel")
    assert parse_episode("---\ntags: Hobby，hobby, x\n---\nb\n", rel_path="x", mtime=0).tags == (
        "Hobby",
        "x",
    )


def test_remember_stores_hobby_once_and_search_and_filter_find_it_by_any_case(
    tmp_path: Path,
) -> None:
    with open_world(tmp_path / "memory") as (vault, engine):
        tags = ["Hobby", "hobby", "HOBBY"]
        ep = vault.remember(NewEpisode(SCOPE, "Alice plays chess on Sundays", tags=tags))
        other = vault.remember(
            NewEpisode(SCOPE, "Alice plays the piano on Sundays", tags=["music"])
        )
        stored = vault.find_episode(SCOPE, ep.id)
        assert stored.episode.tags == ("Hobby",)
        assert "tags: [Hobby]\n" in stored.path.read_text("utf-8")

        found = engine.search(SearchQuery("HOBBY", SCOPE, top_k=5, decay=False, mode="text"))
        assert [r.doc.episode_id for r in found] == [ep.id]  # the tag is indexed as text too

        # A tag filter inside the index query: the manifest's case-folded keys name the
        # chunks, and both indexes rank only those (never a post-filter of a top-k).
        docs = engine.manifest.scope_docs(
            [SCOPE.index_key], HAS_TAG, [tag_key("HOBBY")], first_only=False
        )
        assert [d.episode_id for d in docs] == [ep.id] and docs[0].tag_keys == ("hobby",)
        allowed = {d.chunk_id for d in docs}
        for backend in (engine.text, engine.vector):
            hits = backend.search("Alice plays Sundays", SCOPE.index_key, 10, allowed=allowed)
            assert [h.chunk_id for h in hits] == sorted(allowed)
            unfiltered = backend.search("Alice plays Sundays", SCOPE.index_key, 10)
            assert len(unfiltered) == 2  # the piano memory matches too, without the filter
            assert backend.search("Alice", SCOPE.index_key, 10, allowed=set()) == []
        assert other.id not in {d.episode_id for d in docs}


def test_an_edit_normalises_tags_too(tmp_path: Path) -> None:
    with open_world(tmp_path / "memory") as (vault, _):
        ep = vault.remember(NewEpisode(SCOPE, "Bob collects stamps", tags=["x"]))
        edited = edit_episode(vault, SCOPE, ep.id, expected_hash=None, tags=["Stamps", "STAMPS"])
        assert edited.episode.tags == ("Stamps",)


@pytest.mark.parametrize("tag", ["Correction", "CORRECTION", "Fact-Update", "更正"])
def test_a_correction_tag_counts_in_any_case(tag: str) -> None:
    assert is_update([tag]) and not is_update(["hobby"])
