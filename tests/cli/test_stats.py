"""`memvault stats [--json]`: one chat's memory counted by status, category, priority,
verified and speaker, its oldest/newest, and every file that could not be used (issue 14)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memvault_cli.main import main
from tests.helpers.tree_hash import tree_hash
from vault.format.model import CATEGORIES, PRIORITIES, STATUSES, Episode, Speaker
from vault.health.stats import count_episodes
from vault.layout.keys import ScopeId
from vault.writes.new_episode import NewEpisode

CHAT = ScopeId("b1", "group_1")
SCOPE = ["--bot", "b1", "--session", "group_1"]
DAY = datetime(2026, 3, 1, tzinfo=UTC)


def test_stats_counts_everything_and_names_the_broken_files(vault, capsys):
    vault.remember(
        NewEpisode(
            CHAT,
            "Ann likes tea",
            speaker=Speaker("u1", "Ann"),
            category="preference",
            priority="critical",
            source="user",
            created_at=DAY,
        )
    )
    vault.remember(
        NewEpisode(
            CHAT,
            "Ann plays chess",
            speaker=Speaker("u1", "Ann"),
            category="fact",
            source="agent",
            created_at=DAY + timedelta(days=3),
        )
    )
    bob = Speaker("u2", "Bob")
    old = vault.remember(
        NewEpisode(
            CHAT,
            "Bob lived in Oslo",
            speaker=bob,
            importance=5,
            source="agent",
            created_at=DAY + timedelta(days=1),
        )
    )
    vault.archive(CHAT, old.id)
    vault.remember(
        NewEpisode(
            CHAT,
            "The sale ended",
            created_at=DAY + timedelta(days=2),
            expires_at=DAY + timedelta(days=4),
        )
    )
    vault.remember(
        NewEpisode(ScopeId("b1", "group_2"), "not this chat", speaker=Speaker("u9", "Zed"))
    )
    folder = vault.layout.episodes_dir(CHAT)
    (folder / "broken.md").write_text("---\nimportance: 9\n---\nbad\n", encoding="utf-8")
    vault.profile_path(CHAT).write_text("name: [unclosed\n", encoding="utf-8")
    before = tree_hash(vault.root)

    assert main(["stats", *SCOPE, "--json", "--vault", str(vault.root)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert tree_hash(vault.root) == before  # stats only reads
    assert data["episodes"] == 4
    assert data["status"] == {"active": 3, "archived": 1, "superseded": 0}
    assert data["priority"] == {"critical": 1, "high": 1, "normal": 2, "low": 0}
    assert data["category"] == {"(none)": 2, "fact": 1, "preference": 1}
    assert data["verified"] == {"yes": 1, "no": 3}  # only the user-sourced one
    assert data["expired"] == 1
    assert data["speakers"] == [
        {"id": "u1", "name": "Ann", "episodes": 2},
        {"id": None, "name": None, "episodes": 1},
        {"id": "u2", "name": "Bob", "episodes": 1},
    ]
    assert (data["oldest"], data["newest"]) == ("2026-03-01T00:00:00Z", "2026-03-04T00:00:00Z")
    paths = [p["path"] for p in data["problems"]]
    assert paths == sorted(paths) and len(paths) == 2
    assert any(p.endswith("broken.md") for p in paths)
    assert any(p.endswith("profile.yaml") for p in paths)

    assert main(["stats", *SCOPE, "--vault", str(vault.root)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Episodes: 4 (active 3, archived 1, superseded 0)"
    assert "Speakers: Ann (u1) 2, (none) 1, Bob (u2) 1" in lines
    assert "Files with problems: 2" in lines
    assert any("broken.md:2:" in line for line in lines)


def test_stats_of_a_mistyped_chat_says_so(vault, capsys):
    vault.remember(NewEpisode(CHAT, "something"))
    code = main(["stats", "--bot", "b1", "--session", "group_11", "--vault", str(vault.root)])
    assert code == 2 and "group_1" in capsys.readouterr().err


EPISODES = st.lists(
    st.builds(
        lambda n, status, priority, category, verified, speaker, days: Episode(
            id=f"ep_{n}",
            created_at=DAY + timedelta(days=days),
            body="x",
            status=status,
            priority=priority,
            category=category,
            verified=verified,
            speaker=Speaker(speaker, None) if speaker else None,
        ),
        st.integers(0, 10**6),
        st.sampled_from(STATUSES),
        st.sampled_from(PRIORITIES),
        st.one_of(st.none(), st.sampled_from(CATEGORIES)),
        st.booleans(),
        st.sampled_from(["", "u1", "u2"]),
        st.integers(0, 400),
    ),
    min_size=1,
    max_size=30,
)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(episodes=EPISODES)
def test_every_count_adds_up_to_the_episodes(episodes):
    data = count_episodes(episodes, DAY)
    n = len(episodes)
    for name in ("status", "priority", "category", "verified"):
        assert sum(data[name].values()) == n, name
    assert sum(s["episodes"] for s in data["speakers"]) == n
    assert data["status"]["archived"] == sum(1 for e in episodes if e.status == "archived")
    assert data["priority"]["critical"] == sum(1 for e in episodes if e.priority == "critical")
    assert data["oldest"] <= data["newest"]
