"""NewEpisode (vault.writes.new_episode): the one value every entrance builds for a memory
to write. Construction refuses what no write could store, with the message that says what to
send instead, and normalises the rest, so equal inputs give equal values."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from vault.errors import BadRequestError
from vault.format.model import Speaker
from vault.layout.keys import ScopeId
from vault.writes.episode_create import build_episode
from vault.writes.new_episode import NewEpisode

CHAT = ScopeId("bot-1", "group_1")
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"text": "  \r\n "}, "content is empty: say what to remember"),
        ({"importance": 0}, "importance must be an integer from 1 to 5 (got 0)"),
        ({"importance": True}, "importance must be an integer from 1 to 5 (got True)"),
        ({"importance": "3"}, "importance must be an integer from 1 to 5 (got '3')"),
        ({"category": "gossip"}, "category must be one of "),
        ({"source": "rumour"}, "source must be one of "),
        ({"priority": "urgent"}, "priority must be one of low, normal, high, critical"),
        ({"confidence": 1.5}, "confidence must be a number from 0 to 1 (got 1.5)"),
        ({"expires_in": "soon"}, "duration 'soon' is not understood"),
        ({"expires_in": timedelta(0)}, "expires_in must be a positive duration, e.g. 7d"),
        ({"expires_in": "1d", "expires_at": NOW}, "give expires_at or expires_in, not both"),
        ({"speaker": Speaker("  ", "Ann")}, "speaker id '  ' is blank"),
        ({"episode_id": "../x"}, "episode id '../x' is not valid"),
        ({"scope": "bot-1/group_1"}, "scope must be a ScopeId (got str)"),
    ],
)
def test_construction_refuses_bad_input_saying_what_to_send(fields, says):
    given = {"scope": CHAT, "text": "Ann likes tea", **fields}
    with pytest.raises(BadRequestError) as refused:
        NewEpisode(**given)
    assert str(refused.value).startswith(says), str(refused.value)


def test_equal_inputs_give_equal_values():
    one = NewEpisode(
        CHAT,
        " Ann likes tea\r\n",
        speaker=Speaker(" u1 ", "Ann"),
        tags=["tea", "drinks"],  # a list, as JSON and argparse give it
        priority=" High ",
        confidence=1,
        expires_in="1w",
        created_at=datetime(2026, 12, 1, 13, 0, tzinfo=timezone(timedelta(hours=1))),
    )
    two = NewEpisode(
        CHAT,
        "Ann likes tea",
        speaker=Speaker("u1", "Ann"),
        tags=("tea", "drinks"),
        priority="high",
        confidence=1.0,
        expires_in=timedelta(days=7),
        created_at=NOW,
    )
    assert one == two and hash(one) == hash(two)
    assert (one.text, one.tags, one.priority, one.expires_in) == (
        "Ann likes tea",
        ("tea", "drinks"),
        "high",
        timedelta(days=7),
    )
    naive = NewEpisode(CHAT, "x", expires_at=datetime(2099, 6, 30))
    assert naive.expires_at == datetime(2099, 6, 30, tzinfo=UTC)  # a naive time is UTC
    with pytest.raises(AttributeError):
        one.text = "changed"  # type: ignore[misc]  # frozen


def test_the_episode_it_builds_is_dated_by_the_clock_and_redacted():
    request = NewEpisode(CHAT, "my key is sk-proj-AbC123dEf456GhI789jkl", expires_in="2d")
    episode = build_episode(request, clock=lambda: NOW)
    assert episode.body == "my key is [redacted:api_key]"  # the one redaction of a new episode
    assert episode.created_at == episode.updated_at == NOW
    assert episode.expires_at == NOW + timedelta(days=2)
    assert (episode.priority, episode.verified, episode.status) == ("normal", False, "active")
    assert build_episode(request, clock=lambda: NOW) == episode  # same value, same episode
