"""A new file under a fresh id (vault.writes.fresh_ids), as episodes, candidates and the
episode an accepted candidate becomes use it: a taken id is never overwritten."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from types import SimpleNamespace

import pytest

from vault.candidates import Candidate, accept_candidate, write_candidates
from vault.errors import BadRequestError, Internal
from vault.layout.keys import ScopeId
from vault.writes import fresh_ids
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

CHAT = ScopeId("bot-1", "group_1")
WHEN = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)


def hex_draws(monkeypatch: pytest.MonkeyPatch, *draws: str) -> None:
    """The random part of the next ids, in order (then the same one forever)."""
    it: Iterator[str] = iter(draws)
    drawn = SimpleNamespace(token_hex=lambda _n: next(it, draws[-1]))
    monkeypatch.setattr(fresh_ids, "secrets", drawn)  # this module's draws only


def test_a_clash_draws_another_id_and_keeps_the_first_file(vault: Vault, monkeypatch) -> None:
    hex_draws(monkeypatch, "aaaaaa", "aaaaaa", "bbbbbb")
    first = vault.remember(NewEpisode(CHAT, "Alice likes tea", created_at=WHEN))
    second = vault.remember(NewEpisode(CHAT, "Bob likes coffee", created_at=WHEN))
    assert (first.id, second.id) == ("ep_20260301_aaaaaa", "ep_20260301_bbbbbb")
    assert vault.find_episode(CHAT, first.id).episode.body == "Alice likes tea"


def test_a_given_id_that_is_taken_is_refused(vault: Vault) -> None:
    first = vault.remember(NewEpisode(CHAT, "Alice likes tea"))
    with pytest.raises(BadRequestError, match=f"an episode file {first.id} already exists"):
        vault.remember(NewEpisode(CHAT, "Bob likes coffee", episode_id=first.id))
    cand = Candidate(id="cand_20260301_abcdef", created_at=WHEN, kind="episode", body="x y z")
    write_candidates(vault, CHAT, [cand])
    with pytest.raises(BadRequestError, match="a candidate file cand_20260301_abcdef already"):
        write_candidates(vault, CHAT, [cand])


def test_twenty_clashes_in_a_row_give_up_and_write_nothing(vault: Vault, monkeypatch) -> None:
    hex_draws(monkeypatch, "cccccc")
    vault.remember(NewEpisode(CHAT, "Alice likes tea", created_at=WHEN))
    with pytest.raises(Internal, match="could not find a free episode id after 20 tries"):
        vault.remember(NewEpisode(CHAT, "Bob likes coffee", created_at=WHEN))
    assert [s.episode.body for s in vault.load_episodes(CHAT)[0]] == ["Alice likes tea"]


def test_an_accepted_candidate_becomes_an_episode_under_a_free_id(vault, monkeypatch) -> None:
    hex_draws(monkeypatch, "dddddd", "dddddd", "eeeeee")
    vault.remember(NewEpisode(CHAT, "Alice likes tea", created_at=WHEN))
    cand = Candidate(id="", created_at=WHEN, kind="episode", body="Bob likes coffee")
    (written,) = write_candidates(vault, CHAT, [cand])
    assert written.id == "cand_20260301_dddddd"  # ids of another kind do not clash
    done = accept_candidate(vault, CHAT, written.id)
    assert done.episode is not None and done.episode.id == "ep_20260301_eeeeee"
