"""`memvault import` of LongTermMemory's own exports (issue 24 item 1): every field kept,
epoch dates, where each memory came from, a second import adds nothing, a dry run counts,
a malformed item is refused alone. Fixtures: tests/vault/ltm/ltm_shapes.py (from
LongTermMemory's code, commit de2c6d6405c8dca6f209128de1bb482384b0c2d0)."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memvault_cli.main import main
from tests.vault.ltm.ltm_shapes import BOT, CHAT, EXPORT_L1, EXPORT_L2, L2_EPISODES
from vault.layout.keys import ScopeId
from vault.transfer.exchange import export_scope, import_payload
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

SCOPE = ScopeId(BOT, CHAT)
ARGS = ["--bot", BOT, "--session", CHAT]


def by_origin(vault: Vault) -> dict[str, Any]:
    return {
        dict(s.episode.extra)["imported_from"]: s.episode for s in vault.load_episodes(SCOPE)[0]
    }


def md_files(vault: Vault) -> list[Path]:
    return sorted(p for p in vault.root.rglob("*.md") if "episodes" in p.parts)


def test_every_field_of_an_l2_export_is_kept(vault):
    result = import_payload(vault, SCOPE, copy.deepcopy(EXPORT_L2))
    assert (result["imported"], result["deleted"], result["refused"]) == (5, 1, [])
    got = by_origin(vault)
    assert set(got) == {e["id"] for e in L2_EPISODES if e["status"] != "deleted"}
    for item in L2_EPISODES:
        if item["status"] == "deleted":
            continue
        ep = got[item["id"]]
        assert ep.id == item["id"]  # upstream's 12-hex id is a valid MemVault id: kept
        assert ep.body == item["content"]
        assert list(ep.tags) == item["tags"]
        assert ep.importance == item["importance"]
        assert ep.created_at == datetime.fromisoformat(item["timestamp"])
        assert ep.status == item["status"]
        assert (ep.superseded_by or "") == item["superseded_by"]
        assert ep.source == item["source"]  # agent, candidate and consolidation all exist here
        if item["sender_id"]:
            assert (ep.speaker.id, ep.speaker.name) == (item["sender_id"], item["sender_name"])
        else:
            assert ep.speaker is None
    assert got["a0b1c2d3e4f5"].superseded_by == "b1c2d3e4f5a6"  # the link still names it


def test_the_original_id_is_kept_as_imported_from_and_exported_again(vault):
    import_payload(vault, SCOPE, copy.deepcopy(EXPORT_L2))
    exported = {e["id"]: e for e in export_scope(vault, SCOPE)["episodes"]}
    assert exported["3f9a1c2b7d4e"]["extra"] == {"imported_from": "3f9a1c2b7d4e"}
    text = next(p for p in md_files(vault) if p.stem == "3f9a1c2b7d4e").read_text("utf-8")
    assert "imported_from: 3f9a1c2b7d4e" in text


def test_an_id_taken_here_still_records_where_the_memory_came_from(vault):
    vault.remember(NewEpisode(SCOPE, "Someone else's memory", episode_id="3f9a1c2b7d4e"))
    item = dict(L2_EPISODES[0])
    result = import_payload(vault, SCOPE, {"episodes": [item]})
    new_id = result["renamed"]["3f9a1c2b7d4e"]
    stored = vault.find_episode(SCOPE, new_id).episode
    assert dict(stored.extra)["imported_from"] == "3f9a1c2b7d4e"
    assert stored.body == item["content"]


def test_epoch_seconds_and_milliseconds_are_dates(vault):
    items = [
        {"id": "1", "content": "seconds", "timestamp": 1767225600},
        {"id": "2", "content": "milliseconds", "timestamp": 1767225600000},
        {"id": "3", "content": "seconds as text", "timestamp": "1767225600"},
        {"id": "4", "content": "fractional", "timestamp": 1767225600.5},
    ]
    result = import_payload(vault, SCOPE, {"episodes": items})
    assert result["refused"] == [] and result["imported"] == 4
    when = {s.episode.body: s.episode.created_at for s in vault.load_episodes(SCOPE)[0]}
    day = datetime(2026, 1, 1, tzinfo=UTC)
    assert when["seconds"] == when["milliseconds"] == when["seconds as text"] == day
    assert when["fractional"] == datetime(2026, 1, 1, 0, 0, 0, 500000, tzinfo=UTC)


def test_metadata_memvault_has_no_field_for_goes_to_extra(vault):
    item = dict(L2_EPISODES[0]) | {
        "bot_uuid": BOT,
        "user_key": f"{BOT}:{CHAT}",
        "imported_episode_id": "0123456789ab",
        "source": "health_probe",
    }
    import_payload(vault, SCOPE, [item])
    (stored,) = vault.load_episodes(SCOPE)[0]
    assert dict(stored.episode.extra) == {
        "bot_uuid": BOT,
        "user_key": f"{BOT}:{CHAT}",
        "imported_episode_id": "0123456789ab",
        "imported_source": "health_probe",
        "imported_from": "3f9a1c2b7d4e",
    }
    assert stored.episode.source == "import"


def test_a_second_import_adds_nothing_even_after_a_person_corrected_text_and_date(vault):
    import_payload(vault, SCOPE, copy.deepcopy(EXPORT_L2))
    first = md_files(vault)
    edited = next(p for p in first if p.stem == "3f9a1c2b7d4e")
    text = edited.read_text("utf-8").replace("next week", "in May")
    edited.write_text(text.replace("2026-03-01T08:00:00Z", "2026-04-28T08:00:00Z"), "utf-8")
    again = import_payload(vault, SCOPE, copy.deepcopy(EXPORT_L2))
    assert (again["imported"], again["skipped"]) == (0, 5)  # found by imported_from
    assert md_files(vault) == first
    assert "in May" in edited.read_text("utf-8")  # a person's edit is never overwritten


def test_upstream_profiles_keep_their_slots_history_and_notes(vault):
    result = import_payload(vault, SCOPE, copy.deepcopy(EXPORT_L1))
    assert result["profiles"] == 2 and result["refused"] == []
    speaker = vault.read_profile(SCOPE, "u42")
    assert speaker.name == "Alice" and speaker.notes == "Works at the observatory"
    assert speaker.traits == ("night owl",)
    assert speaker.preferences == ("coffee: oat flat white", "short answers")
    (old,) = speaker.history
    assert (old.key, old.value, old.reason) == ("coffee", "black coffee", "profile_update")
    assert old.until == datetime(2026, 2, 14, 18, 0, 5, tzinfo=UTC)  # when it was replaced
    assert speaker.updated_at == datetime(2026, 2, 14, 18, 0, 5, tzinfo=UTC)
    slots = dict(speaker.extra)["profile_slots"]  # upstream's own record, as it was
    assert slots["preferences"]["coffee"]["history"][0]["timestamp"] == "2026-01-10T09:30:02Z"
    session = vault.read_profile(SCOPE)
    assert (session.name, session.notes) == ("Stargazers", "This group plans observing nights")
    again = import_payload(vault, SCOPE, copy.deepcopy(EXPORT_L1))
    assert (again["profiles"], again["profiles_skipped"]) == (0, 2)


def test_a_malformed_item_is_refused_with_what_to_fix_and_the_rest_imported(
    capsys, vault, tmp_path
):
    payload = copy.deepcopy(EXPORT_L2)
    payload["episodes"][1]["importance"] = "very"
    payload["episodes"][2]["timestamp"] = "last Tuesday"
    path = tmp_path / "l2.json"
    path.write_text(json.dumps(payload), encoding="utf-8")
    code = main(["import", str(path), *ARGS, "--vault", str(vault.root)])
    captured = capsys.readouterr()
    assert code == 1
    assert f"{path}: episode 2: importance must be an integer from 1 to 5" in captured.err
    assert f"{path}: episode 3: invalid timestamp 'last Tuesday'; use ISO-8601" in captured.err
    assert "imported 3 episode(s)" in captured.out and "refused 2" in captured.out
    assert set(by_origin(vault)) == {"3f9a1c2b7d4e", "c2d3e4f5a6b7", "d3e4f5a6b7c8"}


def test_dry_run_prints_the_counts_per_chat_and_writes_nothing(capsys, vault, tmp_path):
    path = tmp_path / "l2.json"
    payload = copy.deepcopy(EXPORT_L2)
    payload["episodes"].append({"id": "x1", "content": 7})
    path.write_text(json.dumps(payload | {"profiles": EXPORT_L1["profiles"]}), encoding="utf-8")
    head = (vault.root / ".git" / "HEAD").read_text()
    args = ["import", str(path), *ARGS, "--vault", str(vault.root), "--dry-run"]
    assert main(args) == 1
    out = capsys.readouterr()
    assert out.out.strip() == (
        f"chat {BOT}:{CHAT}: 5 new, 0 already imported, 1 refused, 1 deleted upstream (not "
        "brought back); profiles: 2 new, 0 kept as they are"
    )
    assert "episode 7: content must be a text" in out.err
    assert md_files(vault) == [] and not vault.profile_path(SCOPE, "u42").exists()
    assert (vault.root / ".git" / "HEAD").read_text() == head
    main(["import", str(path), *ARGS, "--vault", str(vault.root)])
    capsys.readouterr()
    assert main(args) == 1
    assert capsys.readouterr().out.startswith(f"chat {BOT}:{CHAT}: 0 new, 5 already imported")
