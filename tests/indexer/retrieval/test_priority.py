"""Synapse priorities (issue 14): the field, old files' importance, ranking, critical memories.

Real files, the real Tantivy and FAISS indexes and the real embedding model throughout.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from indexer.engine import Engine
from indexer.retrieval.ranking import RANK_VERSION, score
from indexer.retrieval.search_query import SearchQuery
from tests.helpers.worlds import open_world
from vault.errors import BadRequestError
from vault.format.episodes import parse_episode, render_episode
from vault.format.model import PRIORITIES, Episode, FormatError
from vault.layout.keys import ScopeId
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

SCOPE = ScopeId("bot-1", "group_1")
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with open_world(tmp_path_factory.mktemp("prio") / "memory") as world:
        yield world


# --------------------------------------------------------------------------- the field


@given(st.integers(1, 5))
def test_an_old_file_with_only_importance_maps_onto_a_priority_never_critical(level: int) -> None:
    ep = parse_episode(f"---\nid: a\nimportance: {level}\n---\nbody\n", rel_path="x", mtime=0)
    wanted = {1: "low", 2: "normal", 3: "normal", 4: "high", 5: "high"}[level]
    assert (ep.priority, ep.importance) == (wanted, level)


def test_a_file_without_either_is_normal() -> None:
    assert parse_episode("just a note\n", rel_path="x.md", mtime=0).priority == "normal"


@given(st.integers(1, 5), st.sampled_from(PRIORITIES), st.sampled_from(["", "  "]))
def test_a_file_with_both_keeps_both_as_written(level: int, priority: str, pad: str) -> None:
    text = f"---\nimportance: {level}\npriority: {pad}{priority.upper()}{pad}\n---\nb\n"
    ep = parse_episode(text, rel_path="x", mtime=0)
    assert (ep.importance, ep.priority) == (level, priority)


def test_an_unknown_priority_names_the_choices_and_the_line() -> None:
    with pytest.raises(FormatError) as caught:
        parse_episode("---\nid: a\npriority: urgent\n---\nb\n", rel_path="x", mtime=0)
    assert caught.value.line == 3
    assert "priority must be one of low, normal, high, critical" in caught.value.message


def test_render_refuses_an_unknown_priority() -> None:
    ep = Episode(id="a", created_at=NOW, body="b", priority="urgent")
    with pytest.raises(ValueError, match="priority"):
        render_episode(ep)


def test_remember_writes_the_priority_and_defaults_it_from_importance(tmp_path: Path) -> None:
    vault = Vault(tmp_path / "v", git=False)
    asked = vault.remember(NewEpisode(SCOPE, "pick up the keys", priority="Critical", importance=1))
    mapped = vault.remember(NewEpisode(SCOPE, "likes tea", importance=5))
    plain = vault.remember(NewEpisode(SCOPE, "owns a bike"))
    assert (asked.priority, mapped.priority, plain.priority) == ("critical", "high", "normal")
    on_disk = vault.find_episode(SCOPE, asked.id)
    assert on_disk.episode.priority == "critical"
    assert "priority: critical\n" in on_disk.path.read_text("utf-8")
    with pytest.raises(BadRequestError, match="priority must be one of low, normal"):
        vault.remember(NewEpisode(SCOPE, "x", priority="urgent"))


# --------------------------------------------------------------------------- ranking


@pytest.mark.parametrize(
    ("priority", "confidence", "factor"),
    [
        ("low", 0.7, 0.9),
        ("normal", 0.7, 1.0),
        ("high", 0.7, 1.2),
        ("critical", 0.7, 1.2),
        ("normal", 1.0, 1.03),
        ("high", 0.0, 1.2 * 0.93),
    ],
)
def test_rank_golden_priority_and_confidence(priority: str, confidence: float, factor: float):
    s = score(
        0.5,
        created_at=0,
        tags=[],
        same_speaker=False,
        now=None,
        priority=priority,
        confidence=confidence,
    )
    assert s.score == pytest.approx(0.5 * factor)
    assert s.components["priority"] * s.components["confidence"] == pytest.approx(factor)
    assert "importance" not in s.components  # the weight is the priority now (rank-3)


def _two_twins(world, scope: ScopeId, fields_a: dict, fields_b: dict) -> tuple[str, str]:
    vault, _ = world
    text = "The quarterly budget review moved to Thursday afternoon"
    a = vault.remember(NewEpisode(scope, text, created_at=NOW, source="user", **fields_a))
    b = vault.remember(NewEpisode(scope, text, created_at=NOW, source="user", **fields_b))
    return a.id, b.id


@pytest.mark.parametrize("high_first", [True, False])
def test_high_outranks_an_otherwise_equal_normal(world, high_first: bool) -> None:
    # Both orders: the winner is the priority, not the id the tie-break would pick.
    scope = ScopeId("bot-1", f"group_rank_{high_first}")
    high, normal = {"priority": "high"}, {"priority": "normal"}
    a, b = _two_twins(world, scope, high if high_first else normal, normal if high_first else high)
    high_id = a if high_first else b
    _, engine = world
    results = engine.search(
        SearchQuery("quarterly budget review Thursday", scope, top_k=5, decay=False)
    )
    assert [r.doc.episode_id for r in results][0] == high_id
    assert len(results) == 2
    top, second = results
    assert top.explain["priority"] == 1.2 and second.explain["priority"] == 1.0
    assert top.explain["versions"]["rank"] == RANK_VERSION == "rank-3"
    assert top.score == pytest.approx(second.score * 1.2)


def test_low_ranks_below_normal_and_less_confidence_below_more(world) -> None:
    _, engine = world
    scope = ScopeId("bot-1", "group_low")
    low, normal = _two_twins(world, scope, {"priority": "low"}, {"priority": "normal"})
    unsure_scope = ScopeId("bot-1", "group_unsure")
    unsure, sure = _two_twins(world, unsure_scope, {"confidence": 0.5}, {"confidence": 1.0})
    query = "quarterly budget review Thursday"
    ranked = [r.doc.episode_id for r in engine.search(SearchQuery(query, scope, decay=False))]
    assert ranked == [normal, low]
    found = engine.search(SearchQuery(query, unsure_scope, decay=False))
    assert [r.doc.episode_id for r in found] == [sure, unsure]
    assert found[1].explain["confidence"] == pytest.approx(0.98)
    assert found[0].explain["confidence"] == pytest.approx(1.03)


# --------------------------------------------------------------------------- critical


MEMORY = st.fixed_dictionaries(
    {
        "scope": st.sampled_from(
            [
                ScopeId("bot-c", "group_1"),
                ScopeId("bot-c", "group_2"),
                ScopeId("bot-d", "group_1"),
                ScopeId("bot-c", "group_1", isolation="bot"),
            ]
        ),
        "priority": st.sampled_from(PRIORITIES),
        "status": st.sampled_from(["active", "active", "archived"]),
        "expires": st.sampled_from([None, -1, 1]),  # days from now: past, future
    }
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(MEMORY, min_size=1, max_size=6), st.integers(0, 10**6))
def test_critical_is_exactly_the_chats_active_unexpired_critical_memories(
    tmp_path_factory, memories, salt
) -> None:
    # A fresh session name per example: earlier examples' memories cannot blur the check.
    root = tmp_path_factory.mktemp("crit") / "memory"
    now = datetime.now(UTC).replace(microsecond=0)
    with open_world(root) as (vault, engine):
        wanted: dict[str, set[str]] = {}
        for m in memories:
            scope = m["scope"]
            expires = None if m["expires"] is None else now + timedelta(days=m["expires"])
            ep = vault.remember(
                NewEpisode(
                    scope,
                    f"memory {salt} of {scope.index_key}",
                    priority=m["priority"],
                    status=m["status"],
                    expires_at=expires,
                ),
            )
            ok = m["priority"] == "critical" and m["status"] == "active"
            if ok and (expires is None or expires > now):
                wanted.setdefault(scope.index_key, set()).add(ep.id)
        for scope in {m["scope"] for m in memories}:
            found = engine.critical(scope, int(now.timestamp()))
            assert {r.doc.episode_id for r in found} == wanted.get(scope.index_key, set())
            assert all(r.doc.index_key == scope.index_key for r in found)


def test_critical_follows_hand_edits_and_expiry(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    with open_world(root) as (vault, engine):
        ep = vault.remember(NewEpisode(SCOPE, "Never book flights on Fridays", expires_in="1d"))
        now = int(datetime.now(UTC).timestamp())
        assert engine.critical(SCOPE, now) == []
        path = vault.find_episode(SCOPE, ep.id).path
        # A person raises it by hand: the watcher's sync picks it up.
        text = path.read_text("utf-8").replace("priority: normal", "priority: critical")
        path.write_text(text, "utf-8")
        engine.sync_paths([vault.layout.rel(path)])
        (found,) = engine.critical(SCOPE, now)
        assert found.doc.episode_id == ep.id and found.doc.priority == "critical"
        assert engine.critical(SCOPE, now + 2 * 86_400) == []  # past its expiry
        vault.archive(SCOPE, ep.id)
        assert engine.critical(SCOPE, now) == []


def test_engine_read_only_sees_critical(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    with open_world(root) as (vault, _):
        ep = vault.remember(NewEpisode(SCOPE, "Allergic to peanuts", priority="critical"))
    with Engine.open(root, writer=False) as reader:
        assert [r.doc.episode_id for r in reader.critical(SCOPE)] == [ep.id]


# --------------------------------------------------------------------------- consolidation


def test_low_is_consolidated_first_and_high_or_critical_is_spared_from_age() -> None:
    from indexer.jobs.consolidate_select import ConsolidateSettings, select
    from vault.layout.store import StoredEpisode

    old = NOW - timedelta(days=400)
    rows = [  # oldest first; ep_low is the newest of all, yet picked first
        ("ep_a", "normal", old),
        ("ep_high", "high", old),
        ("ep_crit", "critical", old),
        ("ep_b", "normal", old + timedelta(days=1)),
        ("ep_low", "low", NOW - timedelta(days=1)),
    ]
    stored = [
        StoredEpisode(Episode(id=i, created_at=at, body=i, priority=p), Path(i), i, i)
        for i, p, at in rows
    ]
    picked = select(stored, ConsolidateSettings(max_episodes=2, min_episodes=2), NOW).picks
    assert [p.id for p in picked] == ["ep_low", "ep_a"]
    assert [r.detail for r in picked[0].reasons] == ["priority low"]
    everything = select(stored, ConsolidateSettings(min_episodes=2), NOW).picks
    assert {p.id for p in everything} == {"ep_low", "ep_a", "ep_b"}
