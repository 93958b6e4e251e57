"""The pure selection of a consolidation, over many generated chats (hypothesis)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.jobs.consolidate_select import ConsolidateSettings, select
from vault.errors import BadRequestError
from vault.format.model import Episode
from vault.layout.store import StoredEpisode

NOW = datetime(2026, 6, 1, tzinfo=UTC)


@st.composite
def chats(draw: st.DrawFn) -> tuple[list[StoredEpisode], list[tuple[str, str, float]]]:
    rows = draw(
        st.lists(
            st.tuples(
                st.integers(0, 30),  # id number: a repeat is two files stating one id
                st.integers(0, 400),  # age in days
                st.integers(1, 5),  # importance
                st.sampled_from(["active", "active", "archived", "superseded"]),
                st.one_of(st.none(), st.integers(-30, 30)),  # expires in N days
                st.booleans(),  # holds a secret a person typed by hand
            ),
            max_size=30,
        )
    )
    stored = []
    for n, (num, age, importance, status, expires, secret) in enumerate(rows):
        ep = Episode(
            id=f"ep_{num}",
            created_at=NOW - timedelta(days=age),
            body=f"memory {n}" + (f", the password is Tr0ub4dor{n}" if secret else ""),
            importance=importance,
            status=status,
            expires_at=None if expires is None else NOW + timedelta(days=expires),
            superseded_by="ep_new" if status == "superseded" else None,
        )
        rel = f"bots/b/sessions/s/episodes/{n}.md"
        stored.append(StoredEpisode(ep, Path(rel), rel, f"sha{n}"))
    ids = sorted({s.episode.id for s in stored})
    pairs = []
    if len(ids) >= 2:
        for a, b in draw(st.lists(st.tuples(st.sampled_from(ids), st.sampled_from(ids)))):
            if a < b:
                pairs.append((a, b, 0.9))
    return stored, pairs


SETTINGS = st.builds(
    ConsolidateSettings,
    older_than_days=st.integers(1, 365),
    max_importance=st.integers(0, 5),
    keep_importance=st.integers(1, 6),
    max_episodes=st.integers(2, 12),
    min_episodes=st.just(2),
    superseded=st.booleans(),
    duplicates=st.booleans(),
)


def qualifies(s: StoredEpisode, cfg: ConsolidateSettings, dupes: set[str]) -> set[str]:
    """The rules, stated once more, plainly, for the test."""
    ep = s.episode
    if ep.status == "archived":
        return set()
    if ep.status == "superseded":
        return {"superseded"} if cfg.superseded else set()
    found = set()
    if ep.expires_at is not None and ep.expires_at <= NOW:
        found.add("expired")
    old = NOW - ep.created_at >= timedelta(days=cfg.older_than_days)
    if old and ep.importance < cfg.keep_importance:
        found.add("old")
    if ep.importance <= cfg.max_importance:
        found.add("low_importance")
    if cfg.duplicates and ep.id in dupes:
        found.add("duplicate")
    return found


@settings(max_examples=300, deadline=None)
@given(chats(), SETTINGS)
def test_selection_picks_exactly_what_the_rules_say(chat, cfg):
    stored, pairs = chat
    result = select(stored, cfg, NOW, pairs=pairs, threshold=0.8)
    counts = Counter(s.episode.id for s in stored)
    dupes = {x for a, b, _ in pairs for x in (a, b)}
    unique = [s for s in stored if counts[s.episode.id] == 1]
    wanted = [s for s in unique if qualifies(s, cfg, dupes) and "password" not in s.episode.body]
    picked = [p.stored for p in result.picks]
    if len(wanted) < cfg.min_episodes:
        assert picked == [] and result.left_over == 0
    else:
        wanted.sort(key=lambda s: (s.episode.created_at, s.episode.id, s.rel))
        assert picked == wanted[: cfg.max_episodes]
        assert result.left_over == len(wanted) - len(picked)
    for pick in result.picks:
        assert {r.code for r in pick.reasons} == qualifies(pick.stored, cfg, dupes)
    # never acted on, and named: a file whose id another file states too (either could be
    # meant), and one holding a secret (archiving would commit it)
    ambiguous = {s.rel for s in stored if counts[s.episode.id] > 1 and qualifies(s, cfg, dupes)}
    secret = {s.rel for s in unique if qualifies(s, cfg, dupes) and "password" in s.episode.body}
    assert {rel for rel, _ in result.skipped} == ambiguous | secret
    assert all("secret (password)" in why for rel, why in result.skipped if rel in secret)


@settings(max_examples=200, deadline=None)
@given(chats(), SETTINGS, st.randoms())
def test_the_fingerprint_depends_on_the_files_not_on_their_order(chat, cfg, rnd):
    stored, pairs = chat
    first = select(stored, cfg, NOW, pairs=pairs)
    shuffled = list(stored)
    rnd.shuffle(shuffled)
    assert select(shuffled, cfg, NOW, pairs=pairs).fingerprint() == first.fingerprint()
    if first.picks:  # one picked file edited (its bytes' sha) is a different selection
        target = rnd.choice([p.stored for p in first.picks])
        edited = [replace(s, sha="edited") if s is target else s for s in stored]
        assert select(edited, cfg, NOW, pairs=pairs).fingerprint() != first.fingerprint()


@pytest.mark.parametrize(
    ("field", "value"),
    [("older_than_days", 0), ("max_importance", 6), ("max_episodes", 1), ("min_episodes", 1)],
)
def test_settings_out_of_range_are_refused_with_what_to_use(field, value):
    with pytest.raises(BadRequestError, match=field):
        ConsolidateSettings(**{field: value})


def test_one_qualifying_memory_is_not_worth_a_summary():
    ep = Episode(id="ep_1", created_at=NOW - timedelta(days=300), body="old")
    one = [StoredEpisode(ep, Path("a.md"), "a.md", "sha")]
    assert select(one, ConsolidateSettings(), NOW).picks == ()
    two = [*one, StoredEpisode(replace(ep, id="ep_2"), Path("b.md"), "b.md", "sha2")]
    assert [p.id for p in select(two, ConsolidateSettings(), NOW).picks] == ["ep_1", "ep_2"]
