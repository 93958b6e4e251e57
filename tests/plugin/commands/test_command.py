"""`!memory` driven through the SDK's real ExecuteContextProxy and Command._execute, with
the FAKE host, over a real vault (git on unless said otherwise) and real indexes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from components.commands.memory import Memory
from langbot_plugin.entities.io.actions.enums import PluginToRuntimeAction as A

from indexer.retrieval.search_query import SearchQuery
from tests.conftest import git
from tests.plugin.fakehost import FakeHost, started_plugin
from vault.files.safewrite import ConflictError, LockTimeoutError
from vault.format.model import Speaker
from vault.layout.keys import ScopeId
from vault.transfer.exchange import import_payload
from vault.writes.new_episode import NewEpisode
from vault.writes.profile_edit import ProfileEdit
from vault.writes.snapshots import write_snapshot

# indexer.retrieval.verdict.floor_words at the default floor: the words every surface shows.
FLOOR_WORDS = "floor 0.44 for a single message (runners-up 0.33)"

OTHER = "456"  # launcher id of another group chat of the same bot


def command(plugin) -> Memory:
    cmd = Memory()
    cmd.plugin = plugin
    return cmd


async def say(cmd: Memory, host: FakeHost, text: str, launcher_id: str = "123") -> str:
    """Every reply the SDK would send for `text`; exactly one is expected."""
    replies = [r.text async for r in cmd._execute(host.command(text, launcher_id=launcher_id))]
    assert len(replies) == 1, replies
    return replies[0]


def chat(plugin, launcher_id: str = "123"):
    return plugin.memory.scope_of_launcher("group", launcher_id, "bot-1")


def remember(plugin, text: str, launcher_id: str = "123", **kw):
    vault, _ = plugin.memory.require()
    return vault.remember(NewEpisode(chat(plugin, launcher_id), text, **kw))


def seed(plugin, items: list[dict], launcher_id: str = "123") -> list[str]:
    """Many episodes in one vault operation (one commit): fast set-up for paging tests."""
    vault, _ = plugin.memory.require()
    return import_payload(vault, chat(plugin, launcher_id), items)["ids"]


def probe_leftovers(root: Path) -> list[str]:
    return [p.name for p in (root / "bots").iterdir() if "health" in p.name]


# -- overview, profile, help ------------------------------------------------------------


async def test_overview_counts_profiles_isolation_and_vault(plugin, host):
    cmd = command(plugin)
    vault, _ = plugin.memory.require()
    remember(plugin, "Alice likes green tea", speaker=Speaker("u1", "u1"))
    b = remember(plugin, "Bob works at the harbour")
    remember(plugin, "Carol lives in Lyon", key="carol.city")
    remember(plugin, "Carol lives in Paris now", key="carol.city")  # supersedes Lyon
    remember(plugin, "another chat's memory", launcher_id=OTHER)
    vault.archive(chat(plugin), b.id)
    vault.update_profile(ProfileEdit(chat(plugin), "name", "set", "Team chat"))
    vault.update_profile(ProfileEdit(chat(plugin), "traits", "add", "curious", speaker="u1"))
    host.register_memory_kb("kb-memvault-0123456789")
    host.pipeline_kbs = [{"uuid": "kb-memvault-0123456789", "name": "memory", "description": ""}]

    text = await say(cmd, host, "!memory")
    assert text.splitlines() == [
        "[Memory] mode: session",
        "Session: bot-1:group_123",
        "Key: bot-1:group_123",
        "Current speaker: Alice (u1)",
        "Session profile: name=Team chat, 0 traits, 0 prefs",
        "Speaker profile: name=, 1 traits, 0 prefs",
        "L2 (Episodic): KB=kb-memvault-... active",
        "Episodes: 2 active, 1 archived, 1 superseded",
        f"Vault: {plugin.memory.settings.vault_path}",
        "Settings: isolation=session, event_types=none, top_k=3, relevance_floor=0.44, "
        "recall_gate=on, injection_chars=4000, embedding=local, index=local, "
        "openai_key=not set, candidates=off, git_autocommit=on",
    ]
    host.pipeline_kbs = []
    assert "L2 (Episodic): KB=kb-memvault-... configured but inactive in this pipeline" in (
        await say(cmd, host, "!memory")
    )
    write_snapshot(
        vault.root,
        ScopeId("bot-1", "group_123"),
        {"recorded_at": "2026-11-30T10:00:00Z", "episode_count": 2, "injection_chars": 321},
    )
    assert "Last injection: 2026-11-30T10:00:00Z, 2 episode(s), 321 chars" in (
        await say(cmd, host, "!memory")
    )


async def test_overview_in_bot_isolation_and_without_speaker(tmp_path):
    host = FakeHost(bot_uuid="bot-9")
    host.query_vars.pop("sender_id")
    plug = await started_plugin(host, tmp_path / "memory", isolation="bot")
    try:
        text = await say(command(plug), host, "!memory")
    finally:
        plug.memory.close()
    assert "[Memory] mode: bot" in text
    assert "Session: bot-9:group_123" in text and "Key: bot:bot-9" in text
    assert "Current speaker: Alice (-)" in text and "Speaker profile" not in text
    assert "L2 (Episodic): no KB configured" in text


async def test_profile_shows_session_and_speaker(plugin, host):
    vault, _ = plugin.memory.require()
    vault.update_profile(ProfileEdit(chat(plugin), "preferences", "add", "short answers"))
    vault.update_profile(ProfileEdit(chat(plugin), "name", "set", "Alice", speaker="u1"))
    text = await say(command(plugin), host, "!memory profile")
    assert text.splitlines() == [
        "[Session Profile]",
        "Name: (not set)",
        "Traits: (none)",
        "Preferences: short answers",
        "Notes: (none)",
        "",
        "[Current Speaker Profile]",
        "Name: Alice",
        "Traits: (none)",
        "Preferences: (none)",
        "Notes: (none)",
    ]
    assert await say(command(plugin), host, "!memory p") == text  # upstream alias


async def test_broken_profile_file_is_named(plugin, host):
    vault, _ = plugin.memory.require()
    vault.update_profile(ProfileEdit(chat(plugin), "name", "set", "Team chat"))
    path = vault.profile_path(chat(plugin))
    path.write_text("name: [unclosed\n")
    rel = "bots/bot-1/sessions/group_123/profile.yaml"
    reply = await say(command(plugin), host, "!memory profile")
    assert reply.startswith(f"[Memory] {rel}:") and reply.endswith(": fix that file")
    overview = await say(command(plugin), host, "!memory")
    assert f"Session profile: (unreadable: {rel}:" in overview


async def test_unknown_subcommand_and_help_answer_with_usage(plugin, host):
    cmd = command(plugin)
    text = await say(cmd, host, "!memory frobnicate now")
    assert text.startswith("[Memory] Unknown subcommand 'frobnicate'.\nUsage:")
    assert "!memory import l2 <json>" in text and "!memory history <id>" in text
    help_text = await say(cmd, host, "!memory help")
    assert help_text.startswith("[Memory] MemVault long-term memory.\nUsage:")


# -- search and list ----------------------------------------------------------------------


async def test_search_finds_in_scope_only_with_upstream_lines(plugin, host):
    cmd = command(plugin)
    tea = remember(plugin, "Alice likes jasmine tea\nwith honey", tags=["drink", "food"])
    remember(plugin, "Jasmine tea is Mallory's secret too", launcher_id=OTHER)
    text = await say(cmd, host, "!memory search jasmine tea")
    lines = text.splitlines()
    # First the verdict: the message gate's decision and the floor (indexer.retrieval.verdict).
    assert lines[0] == f"[Memory] gate: passed: no rule applies; {FLOOR_WORDS}"
    assert lines[1] == "[Memory] Found 1 episode(s):"
    day = f"{tea.created_at:%Y-%m-%d}"
    # Each line shows the memory's relevance (3 decimals, as `memvault search --explain`).
    assert re.fullmatch(
        rf"  \[{tea.id}\] {day} \(active, imp:2, relevance [01]\.\d{{3}}\) \[drink, food\] "
        r"Alice likes jasmine tea with honey",
        lines[2],
    ), lines[2]
    assert "Mallory" not in text
    assert await say(cmd, host, "!memory search") == "Usage: !memory search <query>"
    assert "Mallory" in await say(cmd, host, "!memory s jasmine", launcher_id=OTHER)


async def test_search_status_flags(plugin, host):
    cmd = command(plugin)
    vault, _ = plugin.memory.require()
    ep = remember(plugin, "The archived kayak trip to Norway")
    vault.archive(chat(plugin), ep.id)
    assert await say(cmd, host, "!memory search kayak Norway") == "[Memory] No episodes found."
    found = await say(cmd, host, "!memory search --include-archived kayak Norway")
    assert f"[{ep.id}]" in found and "(archived, imp:2, relevance " in found
    assert f"[{ep.id}]" in await say(cmd, host, "!memory search --status archived kayak")
    bad = await say(cmd, host, "!memory search --status gone kayak")
    assert bad == "status must be one of: active, superseded, archived, deleted"


async def test_list_pages_ten_per_page_newest_first(plugin, host):
    cmd = command(plugin)
    items = [
        {"content": f"Memory number {i} " + "x" * 90, "timestamp": f"2026-01-01T10:{i:02d}:00Z"}
        for i in range(23)
    ]
    newest = list(reversed(seed(plugin, items)))
    remember(plugin, "not in this chat", launcher_id=OTHER)
    page1 = (await say(cmd, host, "!memory list")).splitlines()
    assert page1[0] == "[Memory] Episodes (page 1, 23 total):"
    assert len(page1) == 11
    assert page1[1].startswith(f"  [{newest[0]}] 2026-01-01 (active, imp:2) Memory number 22 ")
    assert page1[1].endswith("...") and "(active, imp:2)" in page1[1]
    page3 = (await say(cmd, host, "!memory list 3")).splitlines()
    assert page3[0] == "[Memory] Episodes (page 3, 23 total):"
    assert [line.split("]")[0][3:] for line in page3[1:]] == newest[20:]
    assert await say(cmd, host, "!memory ls 4") == "[Memory] No episodes found."
    assert (await say(cmd, host, "!memory l 0")).startswith("[Memory] Episodes (page 1,")
    assert await say(cmd, host, "!memory list two") == "Usage: !memory list [page]"
    assert await say(cmd, host, "!memory list 1 2") == "Usage: !memory list [page]"


async def test_superseded_and_archived_lists(plugin, host):
    cmd = command(plugin)
    vault, _ = plugin.memory.require()
    old = remember(plugin, "Dana's phone is 111", key="dana.phone", tags=["contact"])
    remember(plugin, "Dana's phone is 222", key="dana.phone")
    seed(plugin, [{"content": f"archived note {i}", "status": "archived"} for i in range(12)])
    sup = (await say(cmd, host, "!memory superseded")).splitlines()
    assert sup == [
        "[Memory] Superseded episodes (page 1, 1 total):",
        f"  [{old.id}] {old.created_at:%Y-%m-%d} [contact] Dana's phone is 111",
    ]
    arch2 = (await say(cmd, host, "!memory archived 2")).splitlines()
    assert arch2[0] == "[Memory] Archived episodes (page 2, 12 total):" and len(arch2) == 3
    assert "imp:" not in arch2[1]
    assert await say(cmd, host, "!memory superseded 2") == "[Memory] No superseded episodes found."
    assert await say(cmd, host, "!memory archived x") == "Usage: !memory archived [page]"


# -- show, forget, archive, restore: ids from chat are untrusted ------------------------


# `a/b` is a valid id (vault.format.ids: benchmark ids look like `conv-26/D1:3`); `..` parts are
# not.
BAD_IDS = ["../x", "..", "a/../b", "%2e%2e", "-rf"]


async def test_show_and_bad_ids(plugin, host):
    cmd = command(plugin)
    ep = remember(plugin, "Erin plays the cello", tags=["music"], speaker=Speaker("u7", "Erin"))
    theirs = remember(plugin, "Other chat secret", launcher_id=OTHER)
    text = (await say(cmd, host, f"!memory show {ep.id}")).splitlines()
    assert text[:9] == [
        "[Memory Episode]",
        f"ID: {ep.id}",
        "Status: active",
        f"Timestamp: {ep.created_at:%Y-%m-%dT%H:%M:%SZ}",
        "Importance: 2",
        "Tags: music",
        "Sender: Erin (u7)",
        "Source: agent",
        "Superseded by: -",
    ]
    assert text[-1] == "Content: Erin plays the cello"
    for bad in BAD_IDS:
        reply = await say(cmd, host, f"!memory show {bad}")
        assert reply.startswith("[Memory] episode id") and "not valid" in reply, reply
    unknown = await say(cmd, host, "!memory show ep_20200101_abcdef")
    assert unknown.startswith("[Memory] Episode ep_20200101_abcdef not found.")
    assert "not found" in await say(cmd, host, f"!memory show {theirs.id}")
    assert "Other chat secret" in await say(cmd, host, f"!memory show {theirs.id}", OTHER)
    assert await say(cmd, host, "!memory show") == "Usage: !memory show <episode_id>"


async def test_forget_only_inside_the_chat(plugin, host):
    cmd = command(plugin)
    vault, engine = plugin.memory.require()
    mine = remember(plugin, "Frank's birthday is in May")
    theirs = remember(plugin, "Grace's birthday is in June", launcher_id=OTHER)
    theirs_path = vault.find_episode(chat(plugin, OTHER), theirs.id).path
    assert "not found" in await say(cmd, host, f"!memory forget {theirs.id}")
    assert theirs_path.exists()
    for bad in BAD_IDS:
        assert "not valid" in await say(cmd, host, f"!memory forget {bad}")
    path = vault.find_episode(chat(plugin), mine.id).path
    assert (
        await say(cmd, host, f"!memory forget {mine.id}") == f"[Memory] Episode {mine.id} deleted."
    )
    assert not path.exists()
    assert not engine.search(
        SearchQuery("Frank birthday", chat(plugin))
    )  # gone from the index at once
    assert "not found" in await say(cmd, host, f"!memory f {mine.id}")
    assert await say(cmd, host, "!memory forget") == "Usage: !memory forget <episode_id>"


async def test_archive_and_restore(plugin, host):
    cmd = command(plugin)
    vault, engine = plugin.memory.require()
    ep = remember(plugin, "Heidi prefers window seats")
    theirs = remember(plugin, "other chat", launcher_id=OTHER)
    reply = await say(cmd, host, f"!memory archive {ep.id}")
    assert reply == f"[Memory] Episode {ep.id} status set to archived."
    assert vault.find_episode(chat(plugin), ep.id).episode.status == "archived"
    assert not engine.search(SearchQuery("Heidi window seats", chat(plugin)))
    again = await say(cmd, host, f"!memory archive {ep.id}")
    assert again == f"[Memory] Episode {ep.id} is already archived: nothing changed."
    reply = await say(cmd, host, f"!memory restore {ep.id}")
    assert reply == f"[Memory] Episode {ep.id} status set to active."
    assert engine.search(SearchQuery("Heidi window seats", chat(plugin)))
    assert "not found" in await say(cmd, host, f"!memory archive {theirs.id}")
    assert vault.find_episode(chat(plugin, OTHER), theirs.id).episode.status == "active"
    assert "not valid" in await say(cmd, host, "!memory restore ../x")
    assert await say(cmd, host, "!memory archive") == "Usage: !memory archive <episode_id>"


# -- audit, export, import ---------------------------------------------------------------


async def test_audit_newest_first_with_paging_and_export(plugin, host):
    cmd = command(plugin)
    assert await say(cmd, host, "!memory audit") == "[Memory] No audit entries found."
    eps = [remember(plugin, f"audited memory {i}") for i in range(11)]
    await say(cmd, host, f"!memory forget {eps[0].id}")
    page1 = (await say(cmd, host, "!memory audit")).splitlines()
    assert page1[0] == "[Memory Audit] page 1, 12 total"
    assert page1[1].endswith(f"forget {eps[0].id}: audited memory 0")
    assert page1[1][2:21].count(":") == 2 and "Z" not in page1[1][2:22]
    assert page1[2].endswith(f"remember {eps[10].id}: audited memory 10")
    page2 = (await say(cmd, host, "!memory audit 2")).splitlines()
    assert page2 == ["[Memory Audit] page 2, 12 total", page2[1], page2[2]]
    assert page2[2].endswith(f"remember {eps[0].id}: audited memory 0")
    assert await say(cmd, host, "!memory audit x") == "Usage: !memory audit [page|export]"
    data = json.loads(await say(cmd, host, "!memory audit export"))
    assert set(data) == {"version", "exported_at", "scope_key", "user_key", "entries"}
    assert len(data["entries"]) == 12 and data["entries"][0]["operation"] == "remember"
    assert "audit_export" in await say(cmd, host, "!memory audit")  # audited after it was built


async def test_export_l1_profiles_upstream_shape(plugin, host):
    cmd = command(plugin)
    assert await say(cmd, host, "!memory export") == "[Memory] No profiles to export."
    vault, _ = plugin.memory.require()
    vault.update_profile(ProfileEdit(chat(plugin), "name", "set", "Team chat"))
    vault.update_profile(ProfileEdit(chat(plugin), "traits", "add", "kind", speaker="u1"))
    data = json.loads(await say(cmd, host, "!memory export"))
    assert set(data) == {"version", "exported_at", "profiles"}
    assert data["version"] == 1 and len(data["exported_at"]) == 20
    session, speaker = data["profiles"]
    assert session["type"] == "session" and session["scope_key"] == "bot-1:group_123"
    assert session["profile"]["name"] == "Team chat"
    assert speaker["type"] == "speaker" and speaker["sender_id"] == "u1"
    assert speaker["profile"]["traits"] == ["kind"]
    assert await say(cmd, host, "!memory export l3") == (
        "Usage: !memory export [l2] [--include-superseded] [--include-archived] "
        "[--all-statuses] [--status <status>]"
    )
    assert "export_profiles" in await say(cmd, host, "!memory audit")


async def test_export_l2_shape_and_status_flags(plugin, host):
    cmd = command(plugin)
    vault, _ = plugin.memory.require()
    a = remember(plugin, "Ivan speaks Finnish", tags=["language"], importance=4)
    b = remember(plugin, "Ivan used to live in Oulu")
    vault.archive(chat(plugin), b.id)
    data = json.loads(await say(cmd, host, "!memory export l2"))
    assert data["scope_key"] == "bot-1:group_123" and data["user_key"] == "bot-1:group_123"
    assert data["statuses"] == ["active", "archived", "superseded"] and data["count"] == 2
    first = next(e for e in data["episodes"] if e["id"] == a.id)
    upstream_fields = {"id", "content", "tags", "importance", "timestamp", "sender_id",
                       "sender_name", "source", "status", "superseded_by"}  # fmt: skip
    assert upstream_fields <= set(first)
    assert (first["content"], first["tags"], first["importance"], first["status"]) == (
        "Ivan speaks Finnish", ["language"], 4, "active",
    )  # fmt: skip
    active = json.loads(await say(cmd, host, "!memory e l2 --status active"))
    assert [e["id"] for e in active["episodes"]] == [a.id] and active["statuses"] == ["active"]
    assert await say(cmd, host, "!memory export l2 junk") == (
        "Usage: !memory export [l2] [--include-superseded] [--include-archived] "
        "[--all-statuses] [--status <status>]"
    )


UPSTREAM_L2 = {
    "version": 1,
    "exported_at": "2026-03-20T10:00:00Z",
    "scope_key": "bot-x:group_9",
    "user_key": "bot-x:group_9",
    "collection_id": "kb-1",
    "statuses": ["active", "archived", "deleted", "superseded"],
    "episodes": [
        {
            "id": "3f2a9c0d1b7e",
            "content": "Judy   likes  hiking in   the Alps",
            "tags": ["hobby", "travel"],
            "importance": 4,
            "timestamp": "2026-03-14T08:30:00Z",
            "sender_id": "u42",
            "sender_name": "Judy  Smith",
            "source": "agent",
            "status": "active",
            "superseded_by": None,
        },
        {
            "id": "aa11bb22cc33",
            "content": "Judy moved to Bern",
            "tags": [],
            "importance": "2",
            "timestamp": "2026-03-10T00:00:00Z",
            "sender_id": "",
            "sender_name": "",
            "source": "import",
            "status": "archived",
            "superseded_by": None,
        },
    ],
    "count": 2,
}


async def test_import_upstream_json_with_spaces_inside_strings(plugin, host):
    cmd = command(plugin)
    vault, engine = plugin.memory.require()
    text = "!memory import l2 " + json.dumps(UPSTREAM_L2, indent=2)
    assert await say(cmd, host, text) == "[Memory] Imported 2 L2 episode(s)."
    episodes = {s.episode.body: s.episode for s in vault.load_episodes(chat(plugin))[0]}
    # LangBot split the message on whitespace: runs of spaces come back as one, as upstream.
    judy = episodes["Judy likes hiking in the Alps"]
    assert judy.tags == ("hobby", "travel") and judy.importance == 4
    assert judy.speaker == Speaker("u42", "Judy Smith")
    assert f"{judy.created_at:%Y-%m-%dT%H:%M:%S}" == "2026-03-14T08:30:00"
    assert episodes["Judy moved to Bern"].status == "archived"
    assert [r.doc.episode_id for r in engine.search(SearchQuery("hiking Alps", chat(plugin)))] == [
        judy.id
    ]
    assert not engine.search(
        SearchQuery("hiking Alps", chat(plugin, OTHER))
    )  # user_key in JSON ignored
    again = await say(cmd, host, text)
    assert again == "[Memory] Imported 0 L2 episode(s). Skipped 2 already in this chat."
    bare = '!memory import l2 [{"content": "a bare list item"}]'
    assert await say(cmd, host, bare) == "[Memory] Imported 1 L2 episode(s)."
    assert "import" in await say(cmd, host, "!memory audit")


@pytest.mark.parametrize(
    ("text", "reply"),
    [
        ("!memory import", "Usage: !memory import l2 <json>"),
        ("!memory import l2", "Usage: !memory import l2 <json>"),
        ("!memory import l1 []", "Usage: !memory import l2 <json>"),
        ('!memory import l2 {"episodes": 3}', "L2 import JSON must be a list or an object with "
         "episodes."),
        ("!memory import l2 [1, 2]", "Each imported episode must be an object."),
        ('!memory import l2 [{"content": "  "}]', "[Memory] episode 1: content cannot be empty"),
        ('!memory import l2 [{"content": "x", "importance": "high"}]',
         "[Memory] episode 1: importance must be an integer from 1 to 5"),
        ('!memory import l2 [{"content": "x", "timestamp": "yesterday"}]',
         "[Memory] episode 1: invalid timestamp "
         "'yesterday'; use ISO-8601 such as 2026-03-14T00:00:00Z, or epoch seconds / "
         "milliseconds"),
    ],
)  # fmt: skip
async def test_import_errors(plugin, host, text, reply):
    assert await say(command(plugin), host, text) == reply
    vault, _ = plugin.memory.require()
    assert vault.load_episodes(chat(plugin))[0] == []  # nothing half-imported


async def test_import_invalid_json(plugin, host):
    reply = await say(command(plugin), host, '!memory import l2 [{"content": }]')
    assert reply.startswith("Invalid JSON: Expecting value: line 1 column")


async def test_export_import_round_trip_between_chats(plugin, host):
    cmd = command(plugin)
    vault, _ = plugin.memory.require()
    remember(plugin, "Kim's dog is called Biscuit\n\nHe is a beagle.", tags=["pet"], importance=5,
             speaker=Speaker("u3", "Kim Lee"))  # fmt: skip
    gone = remember(plugin, "Kim had a cat once")
    vault.archive(chat(plugin), gone.id)
    exported = await say(cmd, host, "!memory export l2")
    reply = await say(cmd, host, f"!memory import l2 {exported}", launcher_id=OTHER)
    assert reply == "[Memory] Imported 2 L2 episode(s)."

    def shape(launcher_id):
        return sorted(
            (e.body, e.tags, e.importance, e.created_at, e.status, e.speaker)
            for e in (s.episode for s in vault.load_episodes(chat(plugin, launcher_id))[0])
        )

    assert shape(OTHER) == shape("123")
    back = json.loads(await say(cmd, host, "!memory export l2", launcher_id=OTHER))
    assert back["scope_key"] == "bot-1:group_456" and back["count"] == 2


# -- history --------------------------------------------------------------------------------


async def test_history_of_remembered_then_archived_memory(plugin, host):
    cmd = command(plugin)
    ep = remember(plugin, "Leo is allergic to peanuts")
    await say(cmd, host, f"!memory archive {ep.id}")
    lines = (await say(cmd, host, f"!memory history {ep.id}")).splitlines()
    assert lines[0].startswith(f"[Memory History] {ep.id} (bots/bot-1/sessions/group_123/")
    assert lines[0].endswith("), 2 commit(s), newest first:")
    assert lines[1].endswith(f"archive bot-1:group_123 {ep.id}")
    assert lines[2].endswith(f"remember bot-1:group_123 {ep.id}")
    theirs = remember(plugin, "other chat", launcher_id=OTHER)
    assert "not found" in await say(cmd, host, f"!memory history {theirs.id}")
    assert "not valid" in await say(cmd, host, "!memory history ../../.git/config")
    assert await say(cmd, host, "!memory history") == "Usage: !memory history <episode_id>"


async def test_history_without_git(tmp_path):
    host = FakeHost()
    plug = await started_plugin(host, tmp_path / "memory", git_autocommit=False)
    try:
        ep = remember(plug, "No git here")
        reply = await say(command(plug), host, f"!memory history {ep.id}")
    finally:
        plug.memory.close()
    assert reply.startswith(f"[Memory] No history for {ep.id}: the vault at ")
    assert "is not a git repository" in reply


# -- health ---------------------------------------------------------------------------------


@pytest.mark.parametrize("isolation", ["session", "bot"])
async def test_health_probe_passes_and_leaves_nothing_behind(tmp_path, isolation):
    host = FakeHost()
    host.register_memory_kb()
    plug = await started_plugin(host, tmp_path / "memory", isolation=isolation)
    try:
        root = plug.memory.settings.vault_path
        vault, engine = plug.memory.require()
        remember(plug, "a real memory of this chat")
        head, status = git(root, "rev-parse", "HEAD"), git(root, "status", "--porcelain")
        audit_before = vault.layout.audit_path(chat(plug)).read_text()
        chunks_before = engine.manifest.chunk_ids()
        lines = (await say(command(plug), host, "!memory health")).splitlines()
        assert lines[0] == "[Memory Health]"
        assert all(line.startswith("- OK: ") for line in lines[1:-1]), lines
        assert any("isolation probe PASS" in line and isolation in line for line in lines)
        assert any("cleaned up" in line for line in lines)
        assert lines[-1].startswith("Result: OK")
        # no probe files, commits, audit lines or index entries remain
        assert probe_leftovers(root) == []
        assert git(root, "rev-parse", "HEAD") == head
        assert git(root, "status", "--porcelain") == status
        assert vault.layout.audit_path(chat(plug)).read_text() == audit_before
        assert engine.manifest.chunk_ids() == chunks_before
        assert all("health" not in p for p in engine.manifest.entries())
        assert [s.episode.body for s in vault.load_episodes(chat(plug))[0]] == [
            "a real memory of this chat"
        ]
    finally:
        plug.memory.close()


async def test_health_probe_sweeps_a_killed_probe_and_reports_problems(plugin, host):
    root = plugin.memory.settings.vault_path
    stale = root / "bots" / "__memvault_health_dead_a" / "sessions" / "__health" / "episodes"
    stale.mkdir(parents=True)
    (stale / "ep_x.md").write_text("left by a killed probe\n")
    broken = root / "bots" / "bot-1" / "sessions" / "group_123" / "episodes" / "2026" / "bad.md"
    broken.parent.mkdir(parents=True)
    broken.write_text("---\nimportance: [\n---\nbody\n")
    plugin.memory.warnings.append("an example warning")
    host.register_memory_kb()
    host.pipeline_kbs = []
    text = await say(command(plugin), host, "!memory health")
    assert "- WARN: an example warning" in text
    assert "- WARN: MemVault knowledge base kb-memvault is not attached to this pipeline" in text
    assert "- WARN: vault files: 1 problem(s)" in text and "bad.md:" in text
    assert "isolation probe PASS" in text
    assert text.splitlines()[-1].startswith("Result: WARN")
    assert probe_leftovers(root) == []


async def test_health_probe_failure_is_reported_and_cleaned_up(plugin, host, monkeypatch):
    _, engine = plugin.memory.require()
    root = plugin.memory.settings.vault_path
    real_search = engine.search

    def leaky_search(ask):  # FAKE fault: ignores the scope's user_key
        from dataclasses import replace

        results = real_search(ask)
        scope = ask.scope
        for side in ("a", "b"):
            other = type(scope)(scope.bot[:-1] + side, scope.session, scope.isolation)
            if scope.bot and scope.bot.startswith("__memvault_health_"):
                results += real_search(replace(ask, scope=other))
        return results

    monkeypatch.setattr(engine, "search", leaky_search)
    text = await say(command(plugin), host, "!memory health")
    assert "- ERROR: isolation probe FAIL: search in scope a returned" in text
    assert "isolation probe cleaned up" in text
    assert text.splitlines()[-1].startswith("Result: ERROR")
    assert probe_leftovers(root) == []


async def test_health_when_memory_is_unavailable(tmp_path):
    host = FakeHost()
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    plug = await started_plugin(host, blocker / "vault")
    text = await say(command(plug), host, "!memory health")
    assert "- ERROR: vault" in text and "is not writable" in text
    assert "cannot be used" in text  # the start-up warning
    assert "- ERROR: memory is unavailable" in text
    assert text.splitlines()[-1].startswith("Result: ERROR")
    listed = await say(command(plug), host, "!memory list")
    assert listed.startswith("[Memory] memory is unavailable:") and "!memory health" in listed


# -- every error becomes a reply ----------------------------------------------------------


async def test_unexpected_errors_still_reply(plugin, host, monkeypatch, caplog):
    _, engine = plugin.memory.require()

    def broken(*a, **kw):  # FAKE fault in the index
        raise OSError("disk on fire")

    monkeypatch.setattr(engine, "search", broken)
    reply = await say(command(plugin), host, "!memory search anything")
    assert reply == (
        "[Memory] search failed (OSError); the details are in the plugin log. Run !memory health."
    )
    assert "memvault=command_failed sub=search scope=bot-1:group_123" in caplog.text


async def test_plugin_that_never_started_still_replies(host):
    import main

    plug = main.MemVaultPlugin()
    plug.plugin_runtime_handler = host
    reply = await say(command(plug), host, "!memory")
    assert reply.startswith("[Memory] MemVault did not start")


async def test_bot_uuid_comes_from_the_host(tmp_path):
    host = FakeHost(bot_uuid="bot-7")
    plug = await started_plugin(host, tmp_path / "memory")
    try:
        text = await say(command(plug), host, "!memory")
    finally:
        plug.memory.close()
    assert "Session: bot-7:group_123" in text
    assert A.GET_BOT_UUID.value in host.calls


HELD = "another MemVault process (pid 9) has held the vault lock for 30s: wait for it to finish"
MOVED = "notes.md changed on disk since you opened it: reload it and apply your change again"


@pytest.mark.parametrize(
    ("fault", "reply"),
    [
        (LockTimeoutError(HELD), f"[Memory] {HELD}"),  # busy is a conflict (vault.errors)
        (ConflictError(MOVED), f"[Memory] {MOVED}"),
    ],
)  # fmt: skip
async def test_vault_contention_becomes_a_retry_hint(plugin, host, monkeypatch, fault, reply):
    vault, _ = plugin.memory.require()
    ep = remember(plugin, "Mia's locker is number 12")

    def contended(*a, **kw):  # FAKE contention on the vault lock / the file
        raise fault

    monkeypatch.setattr(vault, "archive", contended)
    assert await say(command(plugin), host, f"!memory archive {ep.id}") == reply
