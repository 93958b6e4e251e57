"""Export -> import keeps every field: what `memvault export` (and the console's and
`!memory`'s exports, which are the same vault.transfer.exchange) writes, an import writes back, so a
second export of the target gives the same JSON (issue 14, Build 5)."""

from __future__ import annotations

import json
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from vault.errors import BadRequestError
from vault.format.model import CATEGORIES, PRIORITIES, SOURCES, STATUSES, Episode, Speaker
from vault.format.tags import normalise_tags
from vault.layout.keys import ScopeId
from vault.transfer.exchange import export_scope, import_payload
from vault.writes.create import init_vault
from vault.writes.episode_create import create_episode_file
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault
from vault.writes.profile_edit import ProfileEdit

A = ScopeId("bot-1", "group_1")
B = ScopeId("bot-1", "group_2")
PROPERTY = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

WORD = st.text("abcdefghijklmnopqrstuvwxyzAB猫中", min_size=1, max_size=8)
BODY = st.lists(WORD, min_size=1, max_size=6).map(" ".join)
STAMP = st.datetimes(
    min_value=datetime(2020, 1, 1), max_value=datetime(2030, 12, 31), timezones=st.just(UTC)
).map(lambda d: d.replace(microsecond=0) if d.microsecond % 3 else d)
EXTRA_VALUE = st.one_of(
    st.none(), WORD, st.lists(WORD, max_size=3), st.dictionaries(WORD, WORD, max_size=2)
)
EXTRA = st.dictionaries(st.sampled_from(["mood", "project", "x-note", "来源"]), EXTRA_VALUE)
ID = st.one_of(
    st.builds(lambda d, n: f"ep_{d:%Y%m%d}_{n:06x}", STAMP, st.integers(0, 0xFFFFFF)),
    st.text("0123456789abcdef", min_size=12, max_size=12),  # LongTermMemory's ids
)


def iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat().replace("+00:00", "Z")


@st.composite
def items(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Export items as MemVault writes them, every optional field sometimes left out."""
    out = []
    ids = draw(st.lists(ID, min_size=1, max_size=6, unique=True))
    for episode_id in ids:
        item: dict[str, Any] = {"id": episode_id, "content": draw(BODY)}
        optional = {
            "tags": st.lists(WORD, max_size=4),
            "importance": st.integers(1, 5),
            "timestamp": STAMP.map(iso),
            "status": st.sampled_from(STATUSES),
            "key": st.one_of(st.none(), WORD),
            "category": st.one_of(st.none(), st.sampled_from(CATEGORIES)),
            "source": st.sampled_from(SOURCES),
            "verified": st.booleans(),
            "confidence": st.floats(0, 1),
            "expires_at": st.one_of(st.none(), STAMP.map(iso)),
            "superseded_by": st.one_of(st.none(), st.sampled_from(ids)),
            "priority": st.sampled_from(PRIORITIES),
            "updated_at": st.one_of(st.none(), STAMP.map(iso)),
            "extra": EXTRA,
        }
        for name, strategy in optional.items():
            if draw(st.booleans()):
                item[name] = draw(strategy)
        if draw(st.booleans()):
            sender = draw(WORD)
            item |= {"sender_id": sender, "sender_name": draw(st.one_of(st.just(""), WORD))}
        out.append(item)
    return out


@st.composite
def episodes(draw: st.DrawFn) -> list[Episode]:
    """Episodes with every field MemVault's format has, as files hold them."""
    ids = draw(st.lists(ID, min_size=1, max_size=6, unique=True))
    out = []
    for episode_id in ids:
        source = draw(st.sampled_from(SOURCES))
        sender = draw(st.one_of(st.none(), WORD))
        out.append(
            Episode(
                id=episode_id,
                created_at=draw(STAMP),
                body=draw(BODY),
                speaker=Speaker(sender, draw(st.one_of(st.none(), WORD))) if sender else None,
                importance=draw(st.integers(1, 5)),
                tags=normalise_tags(draw(st.lists(WORD, max_size=4))),
                status=draw(st.sampled_from(STATUSES)),
                key=draw(st.one_of(st.none(), WORD)),
                category=draw(st.one_of(st.none(), st.sampled_from(CATEGORIES))),
                source=source,
                verified=draw(st.booleans()),
                confidence=draw(st.floats(0, 1)),
                expires_at=draw(st.one_of(st.none(), STAMP)),
                superseded_by=draw(st.one_of(st.none(), st.sampled_from(ids))),
                priority=draw(st.sampled_from(PRIORITIES)),
                updated_at=draw(st.one_of(st.none(), STAMP)),
                extra=tuple(draw(EXTRA).items()),
            )
        )
    return out


def write_files(vault: Vault, scope: ScopeId, eps: list[Episode]) -> None:
    """The episodes as files of `scope`, written by the vault's one file writer."""
    with vault.operation(scope, "seed", source="user") as txn:
        for ep in eps:
            create_episode_file(vault.layout, scope, ep, ep.id, txn)


def fresh() -> tuple[tempfile.TemporaryDirectory[str], Vault]:
    # No git: the property is about the JSON; git is covered by the example tests below.
    tmp = tempfile.TemporaryDirectory()
    root = Path(tmp.name) / "memory"
    init_vault(root, git=False)
    return tmp, Vault(root, git=False)


def comparable(export: dict[str, Any]) -> dict[str, Any]:
    """An export without what names where and when it was made."""
    data = {k: v for k, v in export.items() if k not in ("exported_at", "scope_key", "user_key")}
    data["profiles"] = [{k: v for k, v in p.items() if k != "scope_key"} for p in data["profiles"]]
    return data


def one_active_per_key(eps: list[Episode]) -> bool:
    """What every vault MemVault keeps (vault.writes.lifecycle); an import of two active memories
    of one key keeps only the newest active, so such a source is no round trip."""
    keys = [e.key for e in eps if e.key and e.status == "active"]
    return len(keys) == len(set(keys))


def contested(source: list[dict[str, Any]]) -> set[str]:
    """Keys two or more active items state: the import keeps the newest of them active."""
    keys = [i["key"] for i in source if i.get("key") and i.get("status", "active") == "active"]
    return {k for k in keys if keys.count(k) > 1}


@PROPERTY
@given(source=episodes())
def test_export_import_export_gives_the_same_json(source):
    assume(one_active_per_key(source))
    tmp, vault = fresh()
    with tmp:
        write_files(vault, A, source)
        first = export_scope(vault, A)
        result = import_payload(vault, B, json.loads(json.dumps(first)))
        second = export_scope(vault, B)
        back = {s.episode.id: s.episode for s in vault.load_episodes(B)[0]}
    assert comparable(second) == comparable(first)
    assert back == {ep.id: ep for ep in source}  # every field of every file, ids kept
    assert result["renamed"] == {} and result["imported"] == len(source)


@PROPERTY
@given(source=items())
def test_an_import_keeps_what_each_item_states(source):
    tmp, vault = fresh()
    with tmp:
        import_payload(vault, A, {"episodes": source})
        first = export_scope(vault, A)
    by_id = {e["id"]: e for e in first["episodes"]}
    assert len(by_id) == len(source)  # every item made it (its id was free and valid)
    shared = contested(source)
    for item in source:
        exported = by_id[item["id"]]
        for name in ("status", "category", "source", "verified", "confidence", "priority",
                     "superseded_by", "key", "extra", "expires_at", "updated_at", "timestamp",
                     "importance"):  # fmt: skip
            if name in ("status", "superseded_by") and item.get("key") in shared:
                continue  # one of them stays active, the others name it (below)
            if name in item:
                assert exported[name] == item[name], name
    for key in shared:  # issue 20 item 4: one active memory per key
        mine = [by_id[i["id"]] for i in source
                if i.get("key") == key and i.get("status", "active") == "active"]  # fmt: skip
        active = [e["id"] for e in mine if e["status"] == "active"]
        assert len(active) == 1
        assert all(e["superseded_by"] == active[0] for e in mine if e["id"] != active[0])


@PROPERTY
@given(source=episodes(), taken=st.data())
def test_ids_the_target_already_uses_are_the_only_difference(source, taken):
    assume(one_active_per_key(source))
    tmp, vault = fresh()
    with tmp:
        write_files(vault, A, source)
        first = export_scope(vault, A)
        ids = [e["id"] for e in first["episodes"]]
        occupied = taken.draw(st.lists(st.sampled_from(ids), min_size=1, unique=True))
        squatters = [{"id": i, "content": f"occupied {n}"} for n, i in enumerate(occupied)]
        import_payload(vault, B, {"episodes": squatters})
        result = import_payload(vault, B, first)
        second = export_scope(vault, B)
    assert sorted(result["renamed"]) == sorted(occupied)
    assert not set(result["renamed"].values()) & set(ids)
    renamed = result["renamed"]

    def moved(e: dict[str, Any]) -> dict[str, Any]:
        link = e["superseded_by"]
        return e | {"id": renamed.get(e["id"], e["id"]), "superseded_by": renamed.get(link, link)}

    squatted = {s["content"] for s in squatters}
    theirs = [e for e in second["episodes"] if e["content"] not in squatted]
    assert sorted(theirs, key=lambda e: e["id"]) == sorted(
        (moved(e) for e in first["episodes"]), key=lambda e: e["id"]
    )


def test_a_hand_written_file_keeps_unknown_fields_expiry_and_verification(vault):
    folder = vault.layout.root / "bots/bot-1/sessions/group_1/episodes"
    folder.mkdir(parents=True)
    (folder / "hand.md").write_text(
        "---\n"
        "id: ep_20260301_aaaaaa\n"
        "created_at: 2026-03-01T10:00:00Z\n"
        "# a person's comment\n"
        "speaker: {id: u7, name: Mia}\n"
        "priority: critical\n"
        "importance: 4\n"
        "tags: [Hobby, hobby, chess]\n"
        "category: preference\n"
        "source: agent\n"
        "verified: true\n"
        "confidence: 0.35\n"
        "expires_at: 2026-03-02T00:00:00Z\n"
        "mood: cheerful\n"
        "links: [a, b]\n"
        "counts: {games: 12, won: no}\n"
        "---\n"
        "Mia plays chess on Sundays.\n",
        encoding="utf-8",
    )
    exported = export_scope(vault, A)
    (item,) = exported["episodes"]
    assert item["extra"] == {"mood": "cheerful", "links": ["a", "b"],
                             "counts": {"games": "12", "won": "no"}}  # fmt: skip
    assert (item["priority"], item["verified"], item["confidence"]) == ("critical", True, 0.35)
    import_payload(vault, B, exported)
    (stored,) = vault.load_episodes(B)[0]
    ep = stored.episode
    assert ep.id == "ep_20260301_aaaaaa" and ep.speaker == Speaker("u7", "Mia")
    assert ep.tags == ("Hobby", "chess") and ep.category == "preference"
    assert (ep.source, ep.verified, ep.confidence, ep.priority) == ("agent", True, 0.35, "critical")
    assert ep.expires_at == datetime(2026, 3, 2, tzinfo=UTC)
    assert ep.is_expired(datetime(2026, 3, 5, tzinfo=UTC))  # still expired: not recalled
    assert dict(ep.extra) == {"mood": "cheerful", "links": ["a", "b"],
                              "counts": {"games": "12", "won": "no"}}  # fmt: skip
    text = stored.path.read_text(encoding="utf-8")
    assert "mood: cheerful" in text and "verified: true" in text


def test_profiles_keep_history_updated_at_and_unknown_fields(vault):
    vault.update_profile(ProfileEdit(A, "preferences", "add", "oat", fact_key="coffee"))
    vault.update_profile(ProfileEdit(A, "preferences", "add", "soy", fact_key="coffee"))
    path = vault.profile_path(A, "u1")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("name: Ann\ntimezone: Europe/Paris\n", encoding="utf-8")
    first = export_scope(vault, A)
    result = import_payload(vault, B, first)
    assert result["profiles"] == 2
    session = vault.read_profile(B)
    assert session.preferences == ("coffee: soy",)
    assert [(h.key, h.value) for h in session.history] == [("coffee", "oat")]
    assert session.updated_at == vault.read_profile(A).updated_at is not None
    assert dict(vault.read_profile(B, "u1").extra) == {"timezone": "Europe/Paris"}
    assert comparable(export_scope(vault, B)) == comparable(first)


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param({"version": 1, "profiles": []}, id="l1-only-empty"),
        pytest.param(
            {
                "version": 1,
                "exported_at": "2026-03-20T10:00:00Z",
                "profiles": [
                    {"type": "session", "scope_key": "bot-x:group_9", "profile": {"name": "Club"}}
                ],
            },
            id="l1-only",
        ),  # fmt: skip
        pytest.param({"episodes": [{"content": "Lea runs"}]}, id="l2-only"),
        pytest.param([{"content": "Lea runs"}], id="bare-list"),
    ],
)
def test_every_kind_of_export_is_accepted(vault, payload):
    result = import_payload(vault, B, payload)
    wanted_eps = 1 if "Lea runs" in json.dumps(payload) else 0
    wanted_profiles = 1 if "Club" in json.dumps(payload) else 0
    assert (result["imported"], result["profiles"]) == (wanted_eps, wanted_profiles)
    assert len(vault.load_episodes(B)[0]) == wanted_eps
    assert (vault.read_profile(B).name == "Club") == bool(wanted_profiles)


def test_upstream_deleted_items_are_not_brought_back_and_bad_status_refused(vault):
    payload = {"episodes": [{"content": "gone", "status": "deleted"}, {"content": "kept"}]}
    result = import_payload(vault, B, payload)
    assert (result["imported"], result["deleted"]) == (1, 1)
    assert [s.episode.body for s in vault.load_episodes(B)[0]] == ["kept"]
    with pytest.raises(BadRequestError, match="episode 1: status 'bogus' is not one of"):
        import_payload(vault, A, [{"content": "x", "status": "bogus"}])  # nothing readable
    known = import_payload(vault, A, [{"content": "x"}, {"content": "y", "extra": {"status": "z"}}])
    assert known["refused"][0]["item"] == "episode 2"
    assert known["refused"][0]["reason"].startswith("extra field 'status' is a known")
    assert [s.episode.body for s in vault.load_episodes(A)[0]] == ["x"]  # only the good one


def test_statuses_are_restored_not_recomputed_by_key(vault):
    """Two items of one file with the same key keep the statuses they were exported with;
    an imported active keyed item still supersedes this chat's older memory with that key."""
    old = vault.remember(NewEpisode(B, "Carol lives in Rome", key="carol.city"))
    payload = [
        {"id": "ep_20260101_000001", "content": "Carol lives in Lyon", "key": "carol.city",
         "status": "superseded", "superseded_by": "ep_20260102_000002"},
        {"id": "ep_20260102_000002", "content": "Carol lives in Paris", "key": "carol.city"},
    ]  # fmt: skip
    import_payload(vault, B, payload)
    statuses = {s.episode.body: s.episode.status for s in vault.load_episodes(B)[0]}
    assert statuses == {
        "Carol lives in Rome": "superseded",
        "Carol lives in Lyon": "superseded",
        "Carol lives in Paris": "active",
    }
    assert vault.find_episode(B, old.id).episode.superseded_by == "ep_20260102_000002"


def test_json_scalars_in_extra_are_written_as_the_file_reads_them(vault):
    import_payload(vault, A, [{"content": "x", "extra": {"n": 3, "ok": True, "f": 0.5}}])
    (stored,) = vault.load_episodes(A)[0]
    assert dict(stored.episode.extra) == {"n": "3", "ok": "true", "f": "0.5"}


def test_an_expired_memory_stays_expired_after_the_round_trip(vault):
    past = datetime.now(UTC) - timedelta(days=2)
    ep = vault.remember(NewEpisode(A, "The sale ends Friday", expires_at=past))
    import_payload(vault, B, export_scope(vault, A))
    (back,) = vault.load_episodes(B)[0]
    assert back.episode.id == ep.id and back.episode.expires_at == ep.expires_at
    assert back.episode.is_expired(datetime.now(UTC))
