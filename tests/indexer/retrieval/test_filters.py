"""Field filters (issue 14, item 2): tag, category, priority, verified, expiring within, run
inside the index query before ranking, over a real vault, real Tantivy and FAISS indexes
and the real embedding model; the index rule is the file rule (`Filters.admits`)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from indexer.engine import Engine
from indexer.retrieval.filters import Filters, parse_filters
from indexer.retrieval.search import MODES
from indexer.retrieval.search_query import SearchQuery
from vault.errors import BadRequestError
from vault.format.model import CATEGORIES, PRIORITIES
from vault.layout.keys import ScopeId
from vault.writes.create import init_vault
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

CHAT = ScopeId("bot-1", "group_7")
OTHER = ScopeId("bot-1", "group_8")
NOW = datetime.now(UTC).replace(microsecond=0)
DECOYS = 500
WEAK = (
    "lunch notes: the printer on floor two jams again, the weather is grey, and somebody "
    "mentioned a flight; the budget review moved to Thursday afternoon ({what})"
)
# One memory per filter, each matching only its own filter, each far below the decoys.
TARGETS = {
    "tag": ({"tags": ["Hobby"]}, parse_filters(tags=["hOBBY"])),
    "category": ({"category": "plan"}, parse_filters(category="plan")),
    "priority": ({"priority": "high"}, parse_filters(priority="high")),
    "unverified": ({"source": "agent"}, parse_filters(verified="no")),
    "expiring": ({"expires_at": NOW + timedelta(days=3)}, parse_filters(expiring_within="7d")),
}


@pytest.fixture(scope="module")
def crowded(tmp_path_factory):
    """500 memories that rank above every target for "Tokyo flight", then the targets, and
    a copy of each target in another chat (it must never come back)."""
    root = tmp_path_factory.mktemp("filters") / "memory"
    init_vault(root, git=False)
    vault = Vault(root, git=False)
    for i in range(DECOYS):
        vault.remember(
            NewEpisode(CHAT, f"Tokyo flight {i}: the Tokyo flight is booked", source="user")
        )
    old = NOW - timedelta(days=400)
    ids = {}
    for name, (fields, _) in TARGETS.items():
        fields = {"source": "user", **fields}
        ids[name] = vault.remember(
            NewEpisode(CHAT, WEAK.format(what=name), created_at=old, **fields)
        ).id
        vault.remember(NewEpisode(OTHER, WEAK.format(what=name), created_at=old, **fields))
    engine = Engine.open(root)
    engine.reconcile()
    yield engine, ids
    engine.close()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list(TARGETS))
def test_a_filter_returns_the_one_match_that_500_better_hits_would_crowd_out(crowded, name, mode):
    engine, ids = crowded
    clock = int(NOW.timestamp())
    plain = engine.search(SearchQuery("Tokyo flight", CHAT, top_k=50, mode=mode, now=clock))
    assert len(plain) == 50 and ids[name] not in {r.doc.episode_id for r in plain}
    _, filters = TARGETS[name]
    found = engine.search(
        SearchQuery("Tokyo flight", CHAT, top_k=1, mode=mode, now=clock, filters=filters)
    )
    assert [r.doc.episode_id for r in found] == [ids[name]]
    assert found[0].doc.index_key == CHAT.index_key  # the other chat's copy never


def test_no_filter_changes_nothing_and_an_impossible_one_finds_nothing(crowded):
    engine, ids = crowded
    clock = int(NOW.timestamp())
    plain = engine.search(SearchQuery("Tokyo flight", CHAT, top_k=10, now=clock))
    same = engine.search(SearchQuery("Tokyo flight", CHAT, top_k=10, now=clock, filters=Filters()))
    assert [r.doc.episode_id for r in plain] == [r.doc.episode_id for r in same]
    both = parse_filters(tags=["hobby"], priority="high")
    assert engine.search(SearchQuery("Tokyo flight", CHAT, top_k=10, now=clock, filters=both)) == []


# --------------------------------------------------------------------------- the class

TAGS = ["Hobby", "Travel", "工作", "Ｆｕｌｌ"]


def _spell(rng: random.Random, tag: str) -> str:
    return "".join(c.upper() if rng.random() < 0.5 else c.lower() for c in tag)


@pytest.fixture(scope="module")
def varied(tmp_path_factory):
    """48 memories with random fields (tags in random letter case), all matching "memo"."""
    root = tmp_path_factory.mktemp("varied") / "memory"
    init_vault(root, git=False)
    vault = Vault(root, git=False)
    rng = random.Random(14)
    for i in range(48):
        expiry = rng.choice([None, 1, 5, 20, 90])
        vault.remember(
            NewEpisode(
                CHAT,
                f"memo number {i}",
                tags=[_spell(rng, t) for t in rng.sample(TAGS, rng.randint(0, 3))],
                category=rng.choice([None, *CATEGORIES[:3]]),
                priority=rng.choice(PRIORITIES),
                source=rng.choice(["user", "agent"]),
                expires_at=NOW + timedelta(days=expiry) if expiry else None,
            ),
        )
    episodes = [s.episode for s in vault.load_episodes(CHAT)[0]]
    engine = Engine.open(root)
    engine.reconcile()
    yield engine, episodes
    engine.close()


def spelled(tag: str) -> st.SearchStrategy[str]:
    flips = st.lists(st.booleans(), min_size=len(tag), max_size=len(tag))
    return flips.map(
        lambda up: "".join(c.upper() if u else c.lower() for c, u in zip(tag, up, strict=True))
    )


filters = st.builds(
    parse_filters,
    tags=st.lists(st.sampled_from(TAGS).flatmap(spelled), max_size=2),
    category=st.one_of(st.none(), st.sampled_from(CATEGORIES[:4])),
    priority=st.one_of(st.none(), st.sampled_from(PRIORITIES)),
    verified=st.sampled_from([None, "yes", "no", True, False]),
    expiring_within=st.sampled_from([None, "2d", "10d", "30d", "1w"]),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=filters, mode=st.sampled_from(MODES))
def test_the_index_keeps_exactly_the_memories_the_file_rule_admits(varied, spec, mode):
    engine, episodes = varied
    clock = int(NOW.timestamp())
    found = engine.search(SearchQuery("memo", CHAT, top_k=100, mode=mode, now=clock, filters=spec))
    want = {e.id for e in episodes if e.expires_at is None or e.expires_at > NOW}
    want = {e.id for e in episodes if e.id in want and spec.admits(e, NOW)}
    assert {r.doc.episode_id for r in found} == want


def test_tags_match_across_case_and_width(varied):
    engine, episodes = varied
    clock = int(NOW.timestamp())
    for spelling in ("hobby", "HOBBY", "Hobby", "hObBy"):
        found = engine.search(
            SearchQuery(
                "memo",
                CHAT,
                top_k=100,
                mode="text",
                now=clock,
                filters=parse_filters(tags=[spelling]),
            )
        )
        want = {e.id for e in episodes if any(t.lower() == "hobby" for t in e.tags)}
        assert want and {r.doc.episode_id for r in found} == want
    full = parse_filters(tags="FULL")  # full-width "Ｆｕｌｌ" folds to "full" (NFKC)
    found = engine.search(
        SearchQuery("memo", CHAT, top_k=100, mode="text", now=clock, filters=full)
    )
    assert found and all("Ｆｕｌｌ".casefold() in {t.casefold() for t in r.doc.tags} for r in found)


# --------------------------------------------------------------------------- parsing


@pytest.mark.parametrize(
    ("given_", "says"),
    [
        ({"priority": "urgent"}, "priority filter must be one of low, normal, high, critical"),
        ({"category": "gossip"}, "category filter must be one of identity"),
        ({"verified": "maybe"}, "verified filter must be yes or no"),
        ({"verified": 1.5}, "verified filter must be yes or no"),
        ({"expiring_within": "soon"}, "is not understood"),
        ({"expiring_within": "0d"}, "is zero"),
        ({"expiring_within": 7}, "expiring_within must be a duration like 7d"),
        ({"tags": [3]}, "tag filter must be a tag or a list of tags"),
    ],
)
def test_a_bad_filter_says_what_to_write(given_, says):
    with pytest.raises(BadRequestError, match=says):
        parse_filters(**given_)


def test_blank_values_are_no_filter():
    assert not parse_filters(tags=[], category="", priority=None, verified="").any()
    assert parse_filters(tags=["  "]) == Filters()
