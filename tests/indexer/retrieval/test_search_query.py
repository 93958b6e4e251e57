"""SearchQuery (indexer.retrieval.search_query): the one value every entrance builds for a
search of one chat. Construction refuses what no search can run, saying what to pass, and
keeps lists as tuples, so equal inputs give equal values."""

from __future__ import annotations

import pytest

from indexer.retrieval.filters import Filters
from indexer.retrieval.search_query import SearchQuery
from vault.errors import BadRequestError
from vault.layout.keys import ScopeId

CHAT = ScopeId("bot-1", "group_1")
KB = ScopeId("kb", "library")


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"query": None}, "the query must be text (got NoneType)"),
        ({"scope": "group_1"}, "the scope and each library must be a ScopeId"),
        ({"libraries": ["kb"]}, "the scope and each library must be a ScopeId"),
        ({"top_k": "5"}, "top_k must be a whole number (got '5')"),
        ({"top_k": True}, "top_k must be a whole number (got True)"),
        ({"mode": "fuzzy"}, "mode must be one of hybrid, text, vector (got 'fuzzy')"),
    ],
)
def test_construction_refuses_what_no_search_can_run(fields, says):
    given = {"query": "who likes tea?", "scope": CHAT, **fields}
    with pytest.raises(BadRequestError) as refused:
        SearchQuery(**given)
    assert str(refused.value).startswith(says), str(refused.value)
    assert isinstance(refused.value, ValueError)  # as the ranker's refusal of a mode was


def test_equal_inputs_give_equal_values():
    one = SearchQuery("tea", CHAT, statuses=["active", "archived"], libraries=[KB])
    two = SearchQuery("tea", CHAT, statuses=("active", "archived"), libraries=(KB,))
    assert one == two and hash(one) == hash(two)
    assert (one.statuses, one.libraries) == (("active", "archived"), (KB,))
    assert SearchQuery("tea", CHAT, filters=Filters(tags=("x",))) != SearchQuery("tea", CHAT)
    with pytest.raises(AttributeError):
        one.top_k = 9  # type: ignore[misc]  # frozen
