"""Issue 20 item 4: an outdated memory never comes back (vault.writes.lifecycle).

Eve lived in Berlin, then moved to Munich (same `key`): archive and restore, bulk archive
and its natural undo, forget, import and consolidation all leave Munich the one current
memory, and the replies say when a restore kept the old one superseded.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from indexer.jobs.consolidate_select import ConsolidateSettings, select
from indexer.retrieval.search_query import SearchQuery
from memvault_cli.main import main
from tests.helpers.worlds import open_world
from vault.layout.keys import ScopeId
from vault.transfer.exchange import export_scope, import_payload
from vault.writes.bulk import apply_bulk, parse_selection
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

CHAT = ScopeId("bot-1", "group_1")
T0 = datetime(2026, 3, 1, tzinfo=UTC)


def eve(vault: Vault, scope: ScopeId = CHAT) -> tuple[str, str]:
    berlin = vault.remember(
        NewEpisode(scope, "Eve lives in Berlin", key="city", tags=["travel"], created_at=T0)
    )
    munich = vault.remember(
        NewEpisode(
            scope,
            "Eve moved to Munich",
            key="city",
            tags=["travel"],
            created_at=T0 + timedelta(days=30),
        )
    )
    return berlin.id, munich.id


def state(vault: Vault, scope: ScopeId = CHAT) -> dict[str, tuple[str, str | None]]:
    return {
        s.episode.id: (s.episode.status, s.episode.superseded_by)
        for s in vault.load_episodes(scope)[0]
    }


def test_archive_keeps_the_link_and_restore_returns_it_to_superseded(vault, capsys):
    berlin, munich = eve(vault)
    assert state(vault)[berlin] == ("superseded", munich)
    vault.archive(CHAT, berlin)
    assert state(vault)[berlin] == ("archived", munich)  # the link survives archive
    where = ["--bot", "bot-1", "--session", "group_1", "--vault", str(vault.root)]
    assert main(["restore", berlin, *where]) == 0
    out = capsys.readouterr().out
    assert state(vault) == {berlin: ("superseded", munich), munich: ("active", None)}
    assert f"stays superseded: the newer memory {munich} replaces it" in out
    assert main(["restore", berlin, *where, "--json"]) == 0  # asked again: nothing changes
    data = json.loads(capsys.readouterr().out)
    assert (data["status"], data["changed"], data["superseded_by"]) == ("superseded", False, munich)


@pytest.mark.parametrize("order", ["stale first", "correction first"])
def test_bulk_archive_then_restoring_each_never_revives_the_stale_one(vault, order):
    berlin, munich = eve(vault)
    done = apply_bulk(vault, CHAT, "archive", parse_selection(tag="travel", now=vault.clock()))
    assert sorted(e.id for e in done.done) == sorted([berlin, munich])
    for ep_id in [berlin, munich] if order == "stale first" else [munich, berlin]:
        vault.restore(CHAT, ep_id)
    assert state(vault) == {berlin: ("superseded", munich), munich: ("active", None)}


def test_restore_of_the_newer_one_supersedes_an_older_active_one(vault):
    berlin, munich = eve(vault)
    vault.archive(CHAT, munich)
    vault.forget(CHAT, munich)  # the correction is gone: the old one is archived, unlinked
    assert state(vault) == {berlin: ("archived", None)}
    vault.restore(CHAT, berlin)
    assert state(vault) == {berlin: ("active", None)}
    later = vault.remember(
        NewEpisode(CHAT, "Eve moved to Hamburg", key="city", created_at=T0 + timedelta(days=60))
    )
    vault.archive(CHAT, later.id)
    vault.restore(CHAT, later.id)  # newer than the active Berlin: it wins, Berlin steps back
    assert state(vault) == {berlin: ("superseded", later.id), later.id: ("active", None)}


def test_forget_of_the_correction_never_leaves_a_dangling_link(vault):
    berlin, munich = eve(vault)
    hamburg = vault.remember(
        NewEpisode(CHAT, "Eve moved to Hamburg", key="city", created_at=T0 + timedelta(days=60))
    )
    assert state(vault)[munich] == ("superseded", hamburg.id)
    vault.forget(CHAT, munich)  # Berlin pointed at Munich: it now names Hamburg
    assert state(vault) == {berlin: ("superseded", hamburg.id), hamburg.id: ("active", None)}


def test_import_of_an_older_memory_does_not_replace_a_newer_one(vault):
    source = ScopeId("bot-1", "group_src")
    vault.remember(NewEpisode(source, "Eve lives in Berlin", key="city", created_at=T0))
    munich = vault.remember(
        NewEpisode(CHAT, "Eve moved to Munich", key="city", created_at=T0 + timedelta(days=30))
    )
    result = import_payload(vault, CHAT, json.loads(json.dumps(export_scope(vault, source))))
    (imported,) = result["ids"]
    assert state(vault) == {imported: ("superseded", munich.id), munich.id: ("active", None)}


def test_import_of_two_active_items_with_one_key_keeps_the_newest(vault):
    items = [
        {"content": "Eve lives in Berlin", "key": "city", "created_at": "2026-03-01T00:00:00Z"},
        {"content": "Eve moved to Munich", "key": "city", "created_at": "2026-04-01T00:00:00Z"},
    ]
    import_payload(vault, CHAT, {"episodes": items})
    by_body = {s.episode.body: s.episode for s in vault.load_episodes(CHAT)[0]}
    berlin, munich = by_body["Eve lives in Berlin"], by_body["Eve moved to Munich"]
    assert (berlin.status, berlin.superseded_by, munich.status) == (
        "superseded",
        munich.id,
        "active",
    )


def test_consolidation_never_proposes_archiving_the_correction_as_a_duplicate(vault):
    # A person's hand edit left both active (what a restore used to do): the near-duplicate
    # pair must fold the stale one away, never the correction.
    berlin, munich = eve(vault)
    path = vault.find_episode(CHAT, berlin).path
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("status: superseded", "status: active"), encoding="utf-8")
    episodes = vault.load_episodes(CHAT)[0]
    everything = select(episodes, ConsolidateSettings(older_than_days=1), T0 + timedelta(days=400),
                        pairs=[(berlin, munich, 0.9)], threshold=0.8)  # fmt: skip
    reasons = {p.id: [r.code for r in p.reasons] for p in everything.picks}
    assert reasons[berlin] == ["old", "duplicate"] and reasons[munich] == ["old"]


def test_search_never_returns_the_stale_memory_after_archive_and_restore(tmp_path):
    with open_world(tmp_path / "memory") as (vault, engine):
        berlin, munich = eve(vault)
        apply_bulk(vault, CHAT, "archive", parse_selection(tag="travel", now=vault.clock()))
        vault.restore(CHAT, berlin)
        vault.restore(CHAT, munich)
        found = [r.doc.episode_id for r in engine.search(SearchQuery("Where does Eve live", CHAT))]
        assert munich in found and berlin not in found


def test_remember_dated_before_the_current_memory_of_its_key_says_it_is_superseded(vault, capsys):
    # The current memory of the key is dated ahead of this clock (a hand-written date, or a
    # skewed clock elsewhere): the new one must not replace it.
    ahead = vault.remember(
        NewEpisode(
            CHAT, "Eve will live in Oslo", key="city", created_at=datetime(2099, 1, 1, tzinfo=UTC)
        )
    )
    where = ["--bot", "bot-1", "--session", "group_1", "--vault", str(vault.root)]
    assert main(["remember", "Eve lives in Paris", "--key", "city", *where]) == 0
    new_id, line = capsys.readouterr().out.splitlines()
    assert line.startswith(f"saved as superseded: the newer memory {ahead.id} has key city")
    assert state(vault) == {new_id: ("superseded", ahead.id), ahead.id: ("active", None)}


def test_only_a_keyed_memory_reads_the_chat_to_plan_its_arrival(vault, monkeypatch):
    # A memory without a key supersedes nothing, so its write must not parse every file of
    # the chat (that made n writes cost n^2 reads: 400 remembers 8 s -> 22 s).
    for i in range(5):
        vault.remember(NewEpisode(CHAT, f"memory {i}"))
    reads: list[str] = []
    real = Vault.load_episodes

    def counting(self, scope, *args, **kwargs):
        reads.append(str(scope))
        return real(self, scope, *args, **kwargs)

    monkeypatch.setattr(Vault, "load_episodes", counting)
    vault.remember(NewEpisode(CHAT, "one more, with no key"))
    assert reads == []
    vault.remember(NewEpisode(CHAT, "Eve lives in Munich", key="city"))
    assert reads  # a keyed one does read the chat: it may supersede
