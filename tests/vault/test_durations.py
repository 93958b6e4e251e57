"""Durations people type for expiry and filters (`7d`), and `expires_in` on remember."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vault.errors import BadRequestError
from vault.format.durations import DurationError, parse_duration
from vault.layout.keys import ScopeId
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

UNITS = {"m": timedelta(minutes=1), "h": timedelta(hours=1), "d": timedelta(days=1)}
UNITS["w"] = timedelta(weeks=1)


@given(
    st.integers(1, 500), st.sampled_from(sorted(UNITS)), st.booleans(), st.sampled_from(["", " "])
)
def test_a_number_and_a_unit(amount: int, unit: str, upper: bool, pad: str) -> None:
    text = f"{pad}{amount}{pad}{unit.upper() if upper else unit}{pad}"
    assert parse_duration(text) == amount * UNITS[unit]


@pytest.mark.parametrize("text", ["", "7", "d", "7 days", "1.5d", "-2d", "7y", "7d2h", "abc"])
def test_anything_else_says_what_to_write(text: str) -> None:
    with pytest.raises(DurationError, match=r"e\.g\. 30m, 12h, 7d, 2w"):
        parse_duration(text)


@pytest.mark.parametrize(("text", "why"), [("0d", "zero"), ("9999w", "longer than 10 years")])
def test_zero_and_absurd_lengths_are_refused(text: str, why: str) -> None:
    with pytest.raises(BadRequestError, match=why):
        parse_duration(text)


def test_remember_expires_in_counts_from_the_vaults_clock(tmp_path: Path) -> None:
    now = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)
    vault = Vault(tmp_path / "v", git=False, clock=lambda: now)
    scope = ScopeId("bot-1", "group_1")
    ep = vault.remember(NewEpisode(scope, "The parcel arrives this week", expires_in="7d"))
    assert ep.expires_at == now + timedelta(days=7)
    assert vault.find_episode(scope, ep.id).episode.expires_at == now + timedelta(days=7)
    with pytest.raises(BadRequestError, match="not both"):
        vault.remember(NewEpisode(scope, "x", expires_in="1d", expires_at=now))
    with pytest.raises(DurationError):
        vault.remember(NewEpisode(scope, "x", expires_in="soon"))
