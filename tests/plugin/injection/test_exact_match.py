"""LongTermMemory's exact_match_boost (indexer.retrieval.exact_match): a query that IS an episode
id, a speaker or a tag finds that memory first, through `!memory search` and the engine (the
recall tool had its own id rule already); a question that merely mentions one ranks as before."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from indexer.backends.records import ChunkDoc
from indexer.retrieval.exact_match import EXACT_VERSION, exact_kind, tier
from indexer.retrieval.search_query import SearchQuery
from tests.plugin.commands.test_command import OTHER, chat, command, remember, say
from vault.format.model import Speaker

ID_LINE = re.compile(r"^\s+\[([^\]]+)\]")  # a result line; "[Memory] ..." lines are not


def found_ids(reply: str) -> list[str]:
    return [m.group(1) for line in reply.splitlines() if (m := ID_LINE.match(line))]


async def test_an_exact_id_ranks_first_though_others_match_its_words_better(plugin, host):
    target = remember(plugin, "The harbour crane was repaired on Monday")
    # Both other memories hold the id's words many times; the target holds none of them.
    decoy = remember(plugin, f"see {target.id} and {target.id}: notes about {target.id}")
    remember(plugin, f"{target.id} {target.id} {target.id} is a reference")
    reply = await say(command(plugin), host, f"!memory search {target.id}")
    ids = found_ids(reply)
    assert ids[0] == target.id, reply
    assert decoy.id in ids  # the word matches are still found, after it
    _, engine = plugin.memory.require()
    top = engine.search(SearchQuery(target.id, chat(plugin), top_k=5))[0]
    assert top.doc.episode_id == target.id
    assert top.explain["exact"] == {"version": EXACT_VERSION, "match": "id"}
    assert top.relevance is not None and top.relevance.passed


async def test_an_id_of_another_chat_or_a_hidden_status_is_not_pinned(plugin, host):
    cmd = command(plugin)
    vault, _ = plugin.memory.require()
    elsewhere = remember(plugin, "Other chat's secret plan", launcher_id=OTHER)
    assert elsewhere.id not in found_ids(await say(cmd, host, f"!memory search {elsewhere.id}"))
    hidden = remember(plugin, "An archived line about lamps")
    vault.archive(chat(plugin), hidden.id)
    assert hidden.id not in found_ids(await say(cmd, host, f"!memory search {hidden.id}"))
    shown = await say(cmd, host, f"!memory search --include-archived {hidden.id}")
    assert found_ids(shown)[:1] == [hidden.id]


async def test_a_speaker_name_or_a_tag_as_the_whole_query_ranks_first(plugin, host):
    cmd = command(plugin)
    by_alice = remember(plugin, "Prefers window seats", speaker=Speaker("u1", "Alice"))
    remember(plugin, "Alice Alice Alice: everyone talks about Alice", speaker=Speaker("u2", "Bob"))
    assert found_ids(await say(cmd, host, "!memory search Alice"))[0] == by_alice.id
    tagged = remember(plugin, "Booked the ferry to Tallinn", tags=("travel",))
    remember(plugin, "travel travel travel plans and more travel talk")
    assert found_ids(await say(cmd, host, "!memory search Travel"))[0] == tagged.id


async def test_a_question_that_mentions_an_id_is_ranked_as_before(plugin, host):
    target = remember(plugin, "The harbour crane was repaired on Monday")
    _, engine = plugin.memory.require()
    results = engine.search(SearchQuery(f"when was {target.id} repaired?", chat(plugin), top_k=5))
    assert all("exact" not in r.explain for r in results)
    assert [r.score for r in results] == sorted((r.score for r in results), reverse=True)


# -- the rule itself (pure) ----------------------------------------------------------------

words = st.text(st.characters(categories=("L", "N")), min_size=1, max_size=12)


def doc(**kw) -> ChunkDoc:
    base = {
        "chunk_id": 1,
        "path": "bots/b/sessions/s/episodes/x.md",
        "episode_id": "ep-1",
        "ordinal": 0,
        "kind": "episode",
        "index_key": "k",
        "text": "text",
    }
    return ChunkDoc(**{**base, **kw})


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(first=words, second=words, name=words, tag=words)
def test_a_query_of_several_words_never_matches_a_one_word_field(first, second, name, tag):
    query = f"{first} {second}"
    assert exact_kind(query, doc(episode_id=name, speaker_name=name, tags=(tag,))) is None


@settings(max_examples=200)
@given(name=st.text(st.characters(categories=("L",)), min_size=2, max_size=12))
def test_any_case_of_a_speaker_or_tag_matches_and_an_id_outranks_them(name):
    other_case = name.swapcase()
    assume(other_case.casefold() == name.casefold())  # "ı".upper() is "I": not the same name
    assert exact_kind(f"  {other_case} ", doc(speaker_name=name)) == "speaker"
    assert exact_kind(other_case, doc(tags=(name,))) == "tag"
    assert exact_kind(name, doc(episode_id=name, speaker_name=name)) == "id"
    assert tier("id") > tier("speaker") == tier("tag") > tier(None)


def test_profiles_are_never_an_exact_match():
    assert exact_kind("ep-1", doc(kind="profile")) is None
