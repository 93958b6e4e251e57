"""A whole LongTermMemory installation in one go (vault.transfer.ltm_migrate): each chat keeps
its memory under the same keys, a second run adds nothing, a dry run counts per chat, and
hostile keys never leave the vault nor share a folder. Records: tests/vault/ltm/ltm_shapes.py."""

from __future__ import annotations

from pathlib import Path

from tests.vault.ltm.ltm_shapes import (
    BOT,
    CHAT,
    DM,
    L2_EPISODES,
    SESSION_KEY,
    SPEAKER_PROFILE,
    installation,
    storage,
    vector_item,
)
from vault.layout.keys import ScopeId
from vault.transfer.ltm_migrate import migrate, migration_text
from vault.writes.operations import Vault

GROUP = ScopeId(BOT, CHAT)
PRIVATE = ScopeId(BOT, DM)


def files(vault: Vault) -> list[str]:
    return sorted(
        p.relative_to(vault.root).as_posix()
        for p in vault.root.rglob("*")
        if p.is_file() and ".git" not in p.parts and ".memvault" not in p.parts
    )


def head(vault: Vault) -> str:
    ref = (vault.root / ".git" / "HEAD").read_text().split()[-1]
    path = vault.root / ".git" / ref
    return path.read_text() if path.exists() else ref


def test_every_chat_comes_across_with_its_profiles_and_memories(vault):
    rows, vectors = installation()
    done = migrate(vault, rows, vectors)
    assert done.refused == 0 and done.total("imported") == 6 and done.total("profiles") == 2
    group = {s.episode.id: s.episode for s in vault.load_episodes(GROUP)[0]}
    assert set(group) == {e["id"] for e in L2_EPISODES if e["status"] != "deleted"}
    assert group["a0b1c2d3e4f5"].status == "superseded"
    assert group["a0b1c2d3e4f5"].superseded_by == "b1c2d3e4f5a6"
    assert group["3f9a1c2b7d4e"].tags == ("travel", "beijing")  # "travel,beijing" upstream
    assert group["3f9a1c2b7d4e"].importance == 4  # "4" upstream
    (dm,) = vault.load_episodes(PRIVATE)[0]
    assert dict(dm.episode.extra) == {
        "user_key": f"{BOT}:{DM}",
        "bot_uuid": BOT,
        "imported_episode_id": "0123456789ab",
        "imported_from": "f5a6b7c8d9e0",
    }
    speaker = vault.read_profile(GROUP, "u42")
    assert speaker.name == SPEAKER_PROFILE["name"]
    assert speaker.preferences == ("coffee: oat flat white", "short answers")
    assert vault.read_profile(GROUP).name == "Stargazers"
    # the chats are each other's strangers, as they were upstream
    assert all(s.episode.body != dm.episode.body for s in vault.load_episodes(GROUP)[0])


def test_a_second_migration_changes_nothing_at_all(vault):
    rows, vectors = installation()
    migrate(vault, rows, vectors)
    before, commit = files(vault), head(vault)
    again = migrate(vault, rows, vectors)
    assert again.total("imported") == 0 and again.total("profiles") == 0
    assert again.total("skipped") == 6 and again.refused == 0
    assert files(vault) == before and head(vault) == commit  # no audit line, no commit


def test_dry_run_counts_per_chat_and_writes_nothing(vault):
    rows, vectors = installation()
    commit, before = head(vault), files(vault)
    done = migrate(vault, rows, vectors, dry_run=True)
    per_chat = {c["chat"]: c for c in done.as_json()["chats"]}
    assert (per_chat[SESSION_KEY]["imported"], per_chat[SESSION_KEY]["deleted"]) == (5, 1)
    assert per_chat[SESSION_KEY]["profiles"] == 2
    assert per_chat[f"{BOT}:{DM}"]["imported"] == 1
    assert files(vault) == before and head(vault) == commit
    text = migration_text(done)
    assert "dry run: nothing written" in text
    assert f"chat {SESSION_KEY}: 5 new, 0 already imported, 0 refused, 1 deleted" in text
    migrate(vault, rows, vectors)
    text = migration_text(migrate(vault, rows, vectors, dry_run=True))
    assert f"chat {SESSION_KEY}: 0 new, 5 already imported, 0 refused" in text


def test_records_that_name_no_chat_are_refused_with_what_to_do(vault):
    loose = [
        vector_item(L2_EPISODES[0], "imported"),  # upstream's file-upload default user_key
        {"id": "nokey", "document": "x", "metadata": {"content": "x"}},
        {
            "id": "ltm-health-0123456789-a",
            "metadata": {"content": "probe", "user_key": "ltm-health:0123456789:a"},
        },
    ]
    rows = [storage(f"ps:{SESSION_KEY}", "not an object"), (f"pp:{SESSION_KEY}:u1", b"{oops")]
    before = files(vault)
    done = migrate(vault, rows, loose)
    reasons = {u.what: u.reason for u in done.unplaced}
    assert "memvault import" in reasons["memory 3f9a1c2b7d4e"]
    assert "no user_key" in reasons["memory nokey"]
    assert reasons[f"profile ps:{SESSION_KEY}"] == "its value is not an object"
    assert f"profile pp:{SESSION_KEY}:u1" in reasons
    assert done.probes == 1 and done.chats == []
    assert "skipped 1 leftover health-check record" in migration_text(done)
    assert files(vault) == before


def test_memories_shared_by_the_whole_bot_go_to_the_bot_and_are_audited_in_a_chat(vault):
    rows, _ = installation()
    shared = [vector_item(L2_EPISODES[0], f"bot:{BOT}")]
    done = migrate(vault, rows, shared)
    (chat,) = [c for c in done.chats if c.isolation == "bot"]
    assert chat.chat == f"bot:{BOT}" and chat.result["imported"] == 1
    (stored,) = vault.load_episodes(ScopeId(BOT, "anything", "bot"))[0]
    assert stored.rel.startswith(f"bots/{BOT}/episodes/")
    assert vault.load_episodes(GROUP)[0] == []  # not a chat's own memory
    alone = migrate(vault, [], [vector_item(L2_EPISODES[2], "bot:other-bot")])
    assert "pass the chat with --session" in alone.unplaced[0].reason
    named = migrate(vault, [], [vector_item(L2_EPISODES[2], "bot:other-bot")], audit_session=CHAT)
    assert named.chats[0].result["imported"] == 1
    assert (vault.root / "bots/other-bot/sessions" / CHAT / "audit.jsonl").is_file()


def test_hostile_keys_stay_inside_the_vault_and_never_share_a_folder(vault, tmp_path):
    outside = tmp_path / "outside"
    vectors = [
        vector_item(L2_EPISODES[0] | {"id": "../../../x"}, "a/../..:group_1"),
        vector_item(L2_EPISODES[2], "a%2F..%2F..:group_1"),
        vector_item(L2_EPISODES[3], "..:group_1"),  # a bot named ".." has no folder
    ]
    rows = [storage("pp:a/../..:group_1:../../u", {"name": "Eve"})]
    done = migrate(vault, rows, vectors)
    refused = {c.chat: c.refused_whole for c in done.chats if c.result is None}
    assert set(refused) == {"..:group_1"} and refused["..:group_1"]
    everything = [p for p in vault.root.rglob("*") if p.is_file()]
    assert all(vault.root.resolve() in p.resolve().parents for p in everything)
    assert not outside.exists() and not (tmp_path / "x.md").exists()
    first = vault.load_episodes(ScopeId("a/../..", "group_1"))[0]
    second = vault.load_episodes(ScopeId("a%2F..%2F..", "group_1"))[0]
    assert [s.episode.body for s in first] == [L2_EPISODES[0]["content"]]
    assert [s.episode.body for s in second] == [L2_EPISODES[2]["content"]]
    assert first[0].path.parent != second[0].path.parent
    assert dict(first[0].episode.extra)["imported_from"] == "../../../x"  # kept as text only
    assert vault.read_profile(ScopeId("a/../..", "group_1"), "../../u").name == "Eve"
    assert Path(vault.profile_path(ScopeId("a/../..", "group_1"), "../../u")).is_relative_to(
        vault.root
    )


def test_chat_and_sender_names_with_colons_as_langbot_makes_them(vault):
    """LangBot's Page Bot (measured on a real LangBot 4.11.2 host): launcher id
    `websocketgroup_<pipeline>:<sid>`, sender id `websocket_<pipeline>:<sid>`; upstream
    writes an EMPTY profile for each chat and speaker on its first turn."""
    pipeline, sid = "9a8b7c6d-0000-4000-8000-000000000001", "5f4e3d2c"
    chat = f"group_websocketgroup_{pipeline}:{sid}"
    key = f"{BOT}:{chat}"
    sender = f"websocket_{pipeline}:{sid}"
    empty = {
        "name": "", "traits": [], "preferences": [], "notes": "", "updated_at": "",
        "profile_slots": {"traits": {}, "preferences": {}},
        "freeform_traits": [], "freeform_preferences": [],
    }  # fmt: skip
    rows = [
        storage(f"ps:{key}", empty),
        storage(f"pp:{key}:{sender}", SPEAKER_PROFILE),
        storage(f"pp:{key}:other:{sid}", empty),
        storage(f"ps:{BOT}:group_websocketgroup_{pipeline}:quiet", empty),
    ]
    done = migrate(vault, rows, [vector_item(L2_EPISODES[0], key)])
    assert done.refused == 0
    assert "1 chat(s) with nothing to bring (empty profiles only)" in migration_text(done)
    (result,) = [c.result for c in done.chats if c.chat == key]
    assert (result["imported"], result["profiles"], result["profiles_skipped"]) == (1, 1, 0)
    scope = ScopeId(BOT, chat)
    assert vault.read_profile(scope, sender).name == "Alice"  # the whole sender id
    assert not vault.profile_path(scope, None).exists()  # an empty profile is no profile
    assert not vault.profile_path(scope, f"other:{sid}").exists()
    assert [s.episode.body for s in vault.load_episodes(scope)[0]] == [L2_EPISODES[0]["content"]]
