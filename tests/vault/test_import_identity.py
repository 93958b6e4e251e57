"""Import refuses a value of the wrong JSON type instead of turning it into text, naming the
item and the field (issue 20, item 8a), and a second import of a file adds nothing, its
items with no `id` included, even after a person edited what the first one wrote (8b; the
rule: vault.transfer.exchange.Present)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memvault_cli.main import main
from vault.layout.keys import ScopeId
from vault.transfer.exchange import import_payload
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

CHAT = ScopeId("b1", "g1")
OTHER = ScopeId("b1", "g2")
SCOPE = ["--bot", "b1", "--session", "g1"]

# (the item's fields beside its content, the start of the message)
WRONG_EPISODE_FIELDS: list[tuple[dict[str, Any], str]] = [
    ({"content": 5}, "episode 1: content must be a text"),
    ({"content": 0}, "episode 1: content must be a text"),
    ({"content": True}, "episode 1: content must be a text"),
    ({"content": ["a"]}, "episode 1: content must be a text"),
    ({"content": {"text": "a"}}, "episode 1: content must be a text"),
    ({"sender_id": True}, "episode 1: sender_id must be a text"),
    ({"sender_id": 1.5}, "episode 1: sender_id must be a text"),
    ({"sender_id": ["u1"]}, "episode 1: sender_id must be a text"),
    ({"sender_id": "u1", "sender_name": 5}, "episode 1: sender_name must be a text"),
    ({"sender_id": "u1", "sender_name": ["Ann"]}, "episode 1: sender_name must be a text"),
    ({"speaker": "Ann"}, "episode 1: speaker must be an object"),
    ({"speaker": {"id": ["u1"]}}, "episode 1: speaker.id must be a text"),
    ({"speaker": {"id": "u1", "name": 7}}, "episode 1: speaker.name must be a text"),
    ({"tags": 5}, "episode 1: tags must be a list of texts"),
    ({"tags": True}, "episode 1: tags must be a list of texts"),
    ({"tags": {"a": 1}}, "episode 1: tags must be a list of texts"),
    ({"tags": ["ok", 1]}, "episode 1: tags item 2 must be a text"),
    ({"tags": [None]}, "episode 1: tags item 1 must be a text"),
    ({"tags": [["a"]]}, "episode 1: tags item 1 must be a text"),
    ({"key": 5}, "episode 1: key must be a text"),
    ({"key": ["city"]}, "episode 1: key must be a text"),
    ({"status": 1}, "episode 1: status must be a text"),
    ({"category": 3}, "episode 1: category must be a text"),
    ({"priority": 2}, "episode 1: priority must be a text"),
    ({"source": 1}, "episode 1: source must be a text"),
    ({"superseded_by": 5}, "episode 1: superseded_by must be a text"),
    ({"timestamp": True}, "episode 1: timestamp must be a text"),
    ({"timestamp": -5}, "episode 1: invalid timestamp -5"),
    ({"created_at": ["2026-01-01"]}, "episode 1: created_at must be a text"),
    ({"expires_at": False}, "episode 1: expires_at must be a text"),
    ({"updated_at": True}, "episode 1: updated_at must be a text"),
    ({"importance": True}, "episode 1: importance must be an integer"),
    ({"importance": 2.7}, "episode 1: importance must be an integer"),
    ({"importance": [3]}, "episode 1: importance must be an integer"),
    ({"confidence": True}, "episode 1: confidence must be a number"),
    ({"confidence": [0.5]}, "episode 1: confidence must be a number"),
    ({"verified": 1}, "episode 1: verified must be true or false"),
    ({"id": True}, "episode 1: id must be a text"),
    ({"id": 1.5}, "episode 1: id must be a text"),
    ({"id": ["ep_1"]}, "episode 1: id must be a text"),
    ({"extra": "x"}, "episode 1: extra must be an object"),
]
WRONG_PROFILE_FIELDS: list[tuple[dict[str, Any], str]] = [
    ({"name": ["Ann"]}, "profile 1: name must be a text"),
    ({"name": 5}, "profile 1: name must be a text"),
    ({"traits": "calm"}, "profile 1: traits must be a list of texts"),
    ({"traits": [1]}, "profile 1: traits item 1 must be a text"),
    ({"preferences": {"tea": "green"}}, "profile 1: preferences must be a list of texts"),
    ({"preferences": "tea"}, "profile 1: preferences must be a list of texts"),
    ({"notes": 5}, "profile 1: notes must be a text"),
    ({"updated_at": 5}, "profile 1: updated_at must be a text"),
    ({"history": [{"key": 5, "value": "x", "until": "2026-01-01T00:00:00Z"}]}, "key must be a"),
    ({"history": [{"key": "k", "value": "x", "until": 5}]}, "until must be a text"),
]


def refusals(result: dict[str, Any]) -> list[str]:
    return [f"{r['item']}: {r['reason']}" for r in result["refused"]]


@pytest.mark.parametrize(("fields", "message"), WRONG_EPISODE_FIELDS)
def test_an_episode_field_of_the_wrong_type_is_refused(vault, fields, message):
    """The item is refused with what to fix; the file's other items are imported (issue 24)."""
    item = {"content": "Ann likes tea"} | fields
    result = import_payload(vault, CHAT, {"episodes": [item, {"content": "Bo runs"}]})
    (said,) = refusals(result)
    assert said.startswith(message), said
    assert [s.episode.body for s in vault.load_episodes(CHAT)[0]] == ["Bo runs"]


@pytest.mark.parametrize(("fields", "message"), WRONG_PROFILE_FIELDS)
def test_a_profile_field_of_the_wrong_type_is_refused(vault, fields, message):
    entries = [{"type": "session", "profile": {"name": "Chat"} | fields}]
    result = import_payload(vault, CHAT, {"profiles": entries, "episodes": [{"content": "x"}]})
    (said,) = refusals(result)
    assert said.startswith("profile 1: ") and message in said
    assert [s.episode.body for s in vault.load_episodes(CHAT)[0]] == ["x"]
    assert not vault.profile_path(CHAT, None).exists()


def test_a_speaker_profile_id_of_the_wrong_type_is_refused(vault):
    entries = [
        {"type": "speaker", "sender_id": ["u1"], "profile": {"name": "Ann"}},
        {"type": "speaker", "sender_id": "u2", "profile": {"name": "Bo"}},
    ]
    result = import_payload(vault, CHAT, {"profiles": entries})
    assert refusals(result) == ["profile 1: sender_id must be a text in quotes (got a list)"]
    assert vault.read_profile(CHAT, "u2").name == "Bo" and result["profiles"] == 1


def test_the_upstream_shapes_still_import(vault):
    """What LongTermMemory writes keeps working: a number's text, a comma-separated tag
    text, numeric user and memory ids (chat platforms number their users)."""
    items = [
        {"content": "one", "importance": "4", "tags": "a, b", "sender_id": 12345, "id": 7},
        {"content": "two", "importance": 3.0, "speaker": {"id": 42, "name": "Ann"}},
    ]
    import_payload(vault, CHAT, {"episodes": items})
    got = {s.episode.body: s.episode for s in vault.load_episodes(CHAT)[0]}
    assert got["one"].importance == 4 and got["one"].tags == ("a", "b")
    assert got["one"].speaker.id == "12345" and got["one"].id == "7"
    assert got["two"].importance == 3 and got["two"].speaker.id == "42"


def test_cli_import_of_a_number_content_exits_1_naming_item_and_field(capsys, vault, tmp_path):
    path = tmp_path / "five.json"
    path.write_text('{"episodes": [{"content": "fine"}, {"content": 5}]}', encoding="utf-8")
    assert main(["import", str(path), *SCOPE, "--vault", str(vault.root)]) == 1
    err = capsys.readouterr().err
    assert f"{path}: episode 2: content must be a text in quotes (got the number 5)" in err
    assert [s.episode.body for s in vault.load_episodes(CHAT)[0]] == ["fine"]


# --------------------------------------------------------------------------- idempotence


def episode_files(vault: Vault) -> list[Path]:
    return sorted(p for p in vault.root.rglob("*.md") if "episodes" in p.parts)


def items_without_ids(count: int) -> list[dict[str, Any]]:
    """Id-less items, some dated, some with a speaker, two saying the same words."""
    items: list[dict[str, Any]] = []
    for n in range(count):
        item: dict[str, Any] = {"content": f"Fact number {n} about the team"}
        if n % 3 == 0:
            item["timestamp"] = f"2025-0{1 + n % 9}-1{n % 10}T08:00:00Z"
        if n % 4 == 0:
            item |= {"sender_id": f"u{n % 5}", "sender_name": "Ann"}
        items.append(item)
    items.append({"content": "Fact number 1 about the team", "sender_id": "u9"})  # another
    return items


def import_cli(capsys, vault: Vault, path: Path, *scope: str) -> tuple[int, dict[str, Any]]:
    code = main(["--json", "import", str(path), *(scope or SCOPE), "--vault", str(vault.root)])
    return code, json.loads(capsys.readouterr().out)


def test_a_second_import_of_items_without_ids_adds_nothing(capsys, vault, tmp_path):
    path = tmp_path / "plain.json"
    items = items_without_ids(60)
    path.write_text(json.dumps({"episodes": items}), encoding="utf-8")
    assert import_cli(capsys, vault, path)[1]["imported"] == 61
    files = episode_files(vault)
    assert len(files) == 61
    code, again = import_cli(capsys, vault, path)
    assert code == 0 and (again["imported"], again["already_present"]) == (0, 61)
    assert episode_files(vault) == files
    main(["import", str(path), *SCOPE, "--vault", str(vault.root)])
    assert capsys.readouterr().out.strip() == "imported 0 episode(s), 61 already present"
    # Another chat has none of them: all are imported there.
    assert import_cli(capsys, vault, path, "--bot", "b1", "--session", "g2")[1]["imported"] == 61


def test_a_memory_edited_after_import_is_not_imported_again(capsys, vault, tmp_path):
    path = tmp_path / "plain.json"
    path.write_text(json.dumps(items_without_ids(6)), encoding="utf-8")  # a bare list
    import_cli(capsys, vault, path)
    stored = vault.load_episodes(CHAT)[0]
    edited = stored[0]
    text = edited.path.read_text(encoding="utf-8")
    edited.path.write_text(text.replace("about the team", "about the whole team"), "utf-8")
    vault.archive(CHAT, stored[1].episode.id)
    files = episode_files(vault)
    assert import_cli(capsys, vault, path)[1]["already_present"] == 7
    assert episode_files(vault) == files
    assert "the whole team" in edited.path.read_text(encoding="utf-8")  # the edit kept


def test_an_item_whose_id_is_taken_is_renamed_once(vault):
    squatter = vault.remember(NewEpisode(CHAT, "Something else entirely"))
    item = {"id": squatter.id, "content": "Ann moved to Bern", "timestamp": "2025-05-01T00:00:00Z"}
    first = import_payload(vault, CHAT, {"episodes": [item]})
    assert list(first["renamed"]) == [squatter.id] and first["imported"] == 1
    again = import_payload(vault, CHAT, {"episodes": [item]})
    assert (again["imported"], again["already_present"], again["renamed"]) == (0, 1, {})
    assert len(vault.load_episodes(CHAT)[0]) == 2


def test_an_item_with_an_id_edited_here_since_is_already_present(vault):
    item = {"id": "ep_20250501_abcdef", "content": "Ann likes tea", "sender_id": "u1",
            "timestamp": "2025-05-01T00:00:00Z"}  # fmt: skip
    import_payload(vault, CHAT, {"episodes": [item]})
    (stored,) = vault.load_episodes(CHAT)[0]
    stored.path.write_text(stored.path.read_text("utf-8").replace("tea", "green tea"), "utf-8")
    again = import_payload(vault, CHAT, {"episodes": [item]})
    assert (again["imported"], again["already_present"]) == (0, 1)
    assert [s.episode.body for s in vault.load_episodes(CHAT)[0]] == ["Ann likes green tea"]


def test_an_item_without_id_that_the_chat_already_says_is_present(vault):
    """A memory of the same speaker and words (remembered by hand, or imported under a
    random id by an older MemVault) is that item: no copy."""
    vault.remember(NewEpisode(CHAT, "Bob likes hiking"))
    result = import_payload(vault, CHAT, [{"content": "Bob likes hiking"}])
    assert (result["imported"], result["already_present"]) == (0, 1)
    dated = [{"content": "Bob likes hiking", "timestamp": "2024-01-01T00:00:00Z"}]
    # Another time, the same words: not that item, but the chat remembers it already
    # (vault.writes.duplicates), so it is skipped all the same.
    assert import_payload(vault, CHAT, dated)["imported"] == 0


def test_two_alike_items_of_one_file_are_both_written_and_found_again(vault):
    items = [{"content": "Same words", "status": "active"}, {"content": "Same words"}]
    assert import_payload(vault, CHAT, items)["imported"] == 2  # as before: each is written
    again = import_payload(vault, CHAT, items)
    assert (again["imported"], again["already_present"]) == (0, 2)
    assert len(vault.load_episodes(CHAT)[0]) == 2
