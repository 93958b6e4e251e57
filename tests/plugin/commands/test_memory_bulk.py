"""`!memory verify`, `stats`, the bulk `delete`/`archive` with a preview, and export ->
import round trips through the real command (SDK ExecuteContextProxy, FAKE host, a real
vault with git and real indexes) (issue 14, Build 5-6)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from indexer.retrieval.search_query import SearchQuery
from tests.conftest import git
from tests.helpers.tree_hash import tree_hash
from tests.plugin.commands.test_command import OTHER, chat, command, remember, say
from vault.files import audit
from vault.format.model import Speaker
from vault.writes.profile_edit import ProfileEdit


def commits(root) -> int:
    return int(git(root, "rev-list", "--count", "HEAD").strip())


def ops(vault, scope) -> list[tuple[str, str]]:
    return [(e.operation, e.target_id) for e in audit.read(vault.layout.audit_path(scope))[0]]


# -- round trips -----------------------------------------------------------------------------


async def test_import_l2_accepts_the_profiles_only_export(plugin, host):
    cmd = command(plugin)
    vault, _ = plugin.memory.require()
    vault.update_profile(ProfileEdit(chat(plugin), "name", "set", "Team chat"))
    vault.update_profile(ProfileEdit(chat(plugin), "preferences", "add", "oat", fact_key="coffee"))
    vault.update_profile(ProfileEdit(chat(plugin), "traits", "add", "kind", speaker="u1"))
    exported = await say(cmd, host, "!memory export")
    assert set(json.loads(exported)) == {"version", "exported_at", "profiles"}
    reply = await say(cmd, host, f"!memory import l2 {exported}", launcher_id=OTHER)
    assert reply == "[Memory] Imported 0 L2 episode(s). Imported 2 L1 profile(s)."
    theirs = vault.read_profile(chat(plugin, OTHER))
    assert (theirs.name, theirs.preferences) == ("Team chat", ("coffee: oat",))
    assert vault.read_profile(chat(plugin, OTHER), "u1").traits == ("kind",)
    again = await say(cmd, host, f"!memory import l2 {exported}", launcher_id=OTHER)
    assert "Kept 2 existing profile(s) as they are" in again


async def test_export_l2_import_keeps_every_field_and_expiry(plugin, host):
    cmd = command(plugin)
    vault, engine = plugin.memory.require()
    now = datetime.now(UTC)
    kept = remember(plugin, "Nina collects vintage maps", speaker=Speaker("u5", "Nina"),
                    tags=["Maps"], category="preference", priority="high", confidence=0.6,
                    source="agent", expires_at=now + timedelta(days=30))  # fmt: skip
    gone = remember(plugin, "Nina's vintage map fair is on Saturday", source="agent",
                    expires_at=now - timedelta(hours=1))  # fmt: skip
    vault.find_episode(chat(plugin), kept.id).path.write_text(
        vault.find_episode(chat(plugin), kept.id)
        .path.read_text(encoding="utf-8")
        .replace("---\nNina", "mood: curious\n---\nNina"),
        encoding="utf-8",
    )
    await say(cmd, host, f"!memory verify {kept.id}")
    exported = await say(cmd, host, "!memory export l2")
    reply = await say(cmd, host, f"!memory import l2 {exported}", launcher_id=OTHER)
    assert reply == "[Memory] Imported 2 L2 episode(s)."
    mine = {s.episode.id: s.episode for s in vault.load_episodes(chat(plugin))[0]}
    theirs = {s.episode.id: s.episode for s in vault.load_episodes(chat(plugin, OTHER))[0]}
    assert theirs == mine  # every field, unknown `mood` and verified included
    assert dict(theirs[kept.id].extra) == {"mood": "curious"} and theirs[kept.id].verified
    found = [
        r.doc.episode_id for r in engine.search(SearchQuery("vintage map", chat(plugin, OTHER)))
    ]
    assert found == [kept.id]  # the expired one stayed expired: never recalled
    back = json.loads(await say(cmd, host, "!memory export l2", launcher_id=OTHER))
    first = json.loads(exported)
    assert back["episodes"] == first["episodes"]
    assert gone.id in {e["id"] for e in back["episodes"]}


# -- verify ----------------------------------------------------------------------------------


async def test_verify_from_chat_and_its_refusals(plugin, host):
    cmd = command(plugin)
    vault, _ = plugin.memory.require()
    ep = remember(plugin, "Omar is vegetarian", source="agent")
    theirs = remember(plugin, "other chat", launcher_id=OTHER, source="agent")
    count = commits(vault.root)
    assert await say(cmd, host, f"!memory verify {ep.id}") == f"[Memory] Episode {ep.id} verified."
    assert vault.find_episode(chat(plugin), ep.id).episode.verified is True
    assert commits(vault.root) == count + 1 and ("verify", ep.id) in ops(vault, chat(plugin))
    assert "already verified" in await say(cmd, host, f"!memory verify {ep.id}")
    assert "not found" in await say(cmd, host, f"!memory verify {theirs.id}")
    assert vault.find_episode(chat(plugin, OTHER), theirs.id).episode.verified is False
    assert await say(cmd, host, "!memory verify") == "Usage: !memory verify <episode_id>"
    stored = vault.find_episode(chat(plugin), ep.id)
    copy = stored.path.with_name("copy.md")
    copy.write_bytes(stored.path.read_bytes())
    reply = await say(cmd, host, f"!memory verify {ep.id}")
    assert stored.rel in reply and vault.layout.rel(copy) in reply and "nothing" in reply


# -- bulk delete / archive -------------------------------------------------------------------


def seed(plugin) -> dict[str, str]:
    made = {
        "tea": remember(plugin, "Ann likes green tea", speaker=Speaker("u1", "Ann"),
                        tags=["Hobby"]),
        "chess": remember(plugin, "Ann plays chess", speaker=Speaker("u1", "Ann"),
                          tags=["hobby"]),
        "bob": remember(plugin, "Bob likes hiking", speaker=Speaker("u2", "Bob"),
                        tags=["hobby"]),
        "work": remember(plugin, "Ann works nights", speaker=Speaker("u1", "Ann")),
        "other": remember(plugin, "Ann likes green tea too", launcher_id=OTHER,
                          speaker=Speaker("u1", "Ann"), tags=["hobby"]),
    }  # fmt: skip
    return {name: ep.id for name, ep in made.items()}


async def test_delete_preview_changes_nothing_and_yes_applies_in_one_commit(plugin, host):
    cmd = command(plugin)
    vault, engine = plugin.memory.require()
    ids = seed(plugin)
    before, count = tree_hash(vault.root), commits(vault.root)
    preview = await say(cmd, host, "!memory delete --speaker u1 --tag HOBBY")
    assert tree_hash(vault.root) == before  # nothing written, locked, audited or committed
    lines = preview.splitlines()
    assert lines[0] == (
        "[Memory] 2 memories of this chat match (speaker u1, tag HOBBY). Nothing was changed "
        "yet. They are:"
    )
    assert {ids["tea"], ids["chess"]} == {line.split("]")[0].split("[")[-1] for line in lines[1:3]}
    assert lines[-1].endswith("!memory delete --speaker u1 --tag HOBBY --yes")

    done = await say(cmd, host, "!memory delete --speaker u1 --tag HOBBY --yes")
    assert done == "[Memory] Deleted 2 memories (speaker u1, tag HOBBY) in one commit."
    assert commits(vault.root) == count + 1
    assert sorted(t for op, t in ops(vault, chat(plugin)) if op == "forget") == sorted(
        [ids["tea"], ids["chess"]]
    )
    left = {s.episode.id for s in vault.load_episodes(chat(plugin))[0]}
    assert left == {ids["bob"], ids["work"]}
    assert vault.find_episode(chat(plugin, OTHER), ids["other"])  # never outside the chat
    found = {
        r.doc.episode_id for r in engine.search(SearchQuery("Ann green tea chess", chat(plugin)))
    }
    assert found and not found & {ids["tea"], ids["chess"]}  # the index followed
    elsewhere = engine.search(SearchQuery("Ann green tea", chat(plugin, OTHER)))
    assert [r.doc.episode_id for r in elsewhere] == [ids["other"]]


async def test_archive_with_filters_single_ids_and_usage(plugin, host):
    cmd = command(plugin)
    vault, _ = plugin.memory.require()
    ids = seed(plugin)
    assert "1 memories of this chat match (speaker u2)" in await say(
        cmd, host, "!memory archive --speaker u2"
    )
    reply = await say(cmd, host, "!memory archive --tag hobby --yes")
    assert reply == "[Memory] Archived 3 memories (tag hobby) in one commit."
    statuses = {s.episode.id: s.episode.status for s in vault.load_episodes(chat(plugin))[0]}
    assert statuses == {ids["tea"]: "archived", ids["chess"]: "archived",
                        ids["bob"]: "archived", ids["work"]: "active"}  # fmt: skip
    other = vault.find_episode(chat(plugin, OTHER), ids["other"]).episode
    assert other.status == "active"
    assert "nothing to archive" in await say(cmd, host, "!memory archive --tag hobby --yes")
    assert await say(cmd, host, f"!memory archive {ids['work']}") == (
        f"[Memory] Episode {ids['work']} status set to archived."
    )
    assert await say(cmd, host, f"!memory delete {ids['work']}") == (
        f"[Memory] Episode {ids['work']} deleted."
    )
    before = tree_hash(vault.root)
    assert "Say which memories" in await say(cmd, host, "!memory delete --yes")
    assert "Unexpected 'x'" in await say(cmd, host, "!memory delete --tag a x")
    assert "is not a date" in await say(cmd, host, "!memory delete --before soon --yes")
    assert "status must be one of" in await say(cmd, host, "!memory delete --status gone")
    assert tree_hash(vault.root) == before


# -- stats -----------------------------------------------------------------------------------


async def test_stats_of_this_chat(plugin, host):
    cmd = command(plugin)
    vault, _ = plugin.memory.require()
    seed(plugin)
    remember(plugin, "Critical: Ann is allergic to nuts", priority="critical", source="user")
    (vault.layout.episodes_dir(chat(plugin)) / "hand.md").write_text(
        "---\nstatus: nope\n---\nx\n", encoding="utf-8"
    )
    lines = (await say(cmd, host, "!memory stats")).splitlines()
    assert lines[0] == "[Memory Stats] bot-1:group_123"
    assert lines[1] == "Episodes: 5 (active 5, archived 0, superseded 0)"
    assert lines[2] == "Priority: critical 1, high 0, normal 4, low 0"
    assert "Verified: 1 yes, 4 no" in lines
    assert "Speakers: Ann (u1) 3, (none) 1, Bob (u2) 1" in lines
    assert "Files with problems: 1" in lines and any("hand.md:2:" in line for line in lines)
    assert await say(cmd, host, "!memory stats x") == "Usage: !memory stats"
