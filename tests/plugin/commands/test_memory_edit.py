"""`!memory edit <id> <text>` and `!memory profile edit ...` through the SDK's real Command
(FAKE host, a real vault with git and real indexes) (issue 24 item 3): the console's edit
rules, commit, audit and redaction, from chat, inside this chat only."""

from __future__ import annotations

import contextlib

from langbot_plugin.api.proxies.execute_context import ExecuteContextProxy

from indexer.retrieval.search_query import SearchQuery
from tests.plugin.commands.test_command import OTHER, chat, command, remember, say
from tests.plugin.commands.test_memory_bulk import commits, ops
from vault.files import audit
from vault.format.model import Speaker
from vault.writes.profile_edit import ProfileEdit

EDIT_USAGE = "Usage: !memory edit <episode_id> <new text>"
PROFILE_EDIT_USAGE = (
    "Usage: !memory profile edit [session|speaker <sender_id>] "
    "<name|traits|preferences|notes> [set|add|remove] <value>"
)


def hand_edit_before_lock(monkeypatch, vault, path, text: str) -> None:
    """A person saves `path` by hand just before the command's write takes the vault lock."""
    hold = vault.lock.hold
    done: list[bool] = []

    @contextlib.contextmanager
    def racing():
        if not done:
            done.append(True)
            path.write_text(text, encoding="utf-8")
        with hold():
            yield

    monkeypatch.setattr(vault.lock, "hold", racing)


async def say_as_langbot(cmd, host, text: str) -> str:
    """As LangBot 4.11.2 builds the context: the message split on single spaces
    (pkg/command/cmdmgr.py), so a double space is an empty parameter and a newline stays
    inside one."""
    ctx = host.command("!memory")
    words = text[1:].split(" ")
    data = ctx.model_dump()
    data.update(
        command_text=text[1:],
        full_command_text=text,
        params=words[1:],
        crt_params=words[1:],
        plugin_runtime_handler=host,
    )
    proxy = ExecuteContextProxy.model_validate(data)
    replies = [r.text async for r in cmd._execute(proxy)]
    assert len(replies) == 1, replies
    return replies[0]


# -- !memory edit -----------------------------------------------------------------------------


async def test_edit_replaces_the_text_with_one_commit_and_audit_line(plugin, host):
    cmd = command(plugin)
    vault, engine = plugin.memory.require()
    ep = remember(plugin, "Omar is vegetarian", speaker=Speaker("u1", "Omar"), tags=["food"])
    count = commits(vault.root)
    reply = await say(cmd, host, f"!memory edit {ep.id} Omar is vegan since March")
    assert reply == f"[Memory] Episode {ep.id} edited. Now: Omar is vegan since March"
    after = vault.find_episode(chat(plugin), ep.id).episode
    assert after.body == "Omar is vegan since March"
    assert (after.tags, after.speaker, after.created_at) == (ep.tags, ep.speaker, ep.created_at)
    assert commits(vault.root) == count + 1 and ("edit", ep.id) in ops(vault, chat(plugin))
    entry = audit.read(vault.layout.audit_path(chat(plugin)))[0][-1]
    assert (entry.operation, entry.source) == ("edit", "user")
    # read-your-writes: the next search finds the new words, not the old ones
    found = engine.search(SearchQuery("vegan since March", chat(plugin)))
    assert [r.doc.episode_id for r in found][:1] == [ep.id]
    again = await say(cmd, host, f"!memory edit {ep.id} Omar is vegan since March")
    assert again == f"[Memory] Episode {ep.id} already says that: nothing changed."
    assert commits(vault.root) == count + 1


async def test_edit_keeps_the_text_as_langbot_splits_it(plugin, host):
    cmd = command(plugin)
    vault, _ = plugin.memory.require()
    ep = remember(plugin, "Ann plays chess")
    reply = await say_as_langbot(cmd, host, f"!memory edit  {ep.id} Ann plays  chess\non Sundays")
    assert reply.startswith(f"[Memory] Episode {ep.id} edited.")
    assert vault.find_episode(chat(plugin), ep.id).episode.body == "Ann plays  chess\non Sundays"


async def test_edit_of_another_chats_id_is_not_found_in_this_chat(plugin, host):
    cmd = command(plugin)
    vault, _ = plugin.memory.require()
    theirs = remember(plugin, "Bea's secret hobby is falconry", launcher_id=OTHER)
    before = vault.find_episode(chat(plugin, OTHER), theirs.id).path.read_bytes()
    count = commits(vault.root)
    reply = await say(cmd, host, f"!memory edit {theirs.id} Bea hates birds")
    assert reply.startswith(f"[Memory] Episode {theirs.id} not found in this chat: nothing")
    assert "falconry" not in reply and "group_456" not in reply
    assert vault.find_episode(chat(plugin, OTHER), theirs.id).path.read_bytes() == before
    assert commits(vault.root) == count


async def test_a_short_or_ambiguous_id_is_refused(plugin, host):
    cmd = command(plugin)
    vault, _ = plugin.memory.require()
    ep = remember(plugin, "Carl works nights")
    stored = vault.find_episode(chat(plugin), ep.id)
    short = ep.id[:-3]
    reply = await say(cmd, host, f"!memory edit {short} Carl works days")
    assert reply.startswith(f"[Memory] Episode {short} not found in this chat: nothing")
    assert "1 id(s) of this chat start with it: give the whole id" in reply
    copy = stored.path.with_name("copy.md")
    copy.write_bytes(stored.path.read_bytes())
    reply = await say(cmd, host, f"!memory edit {ep.id} Carl works days")
    assert stored.rel in reply and vault.layout.rel(copy) in reply and "nothing" in reply
    assert "Carl works nights" in stored.path.read_text() and "nights" in copy.read_text()


async def test_edit_never_overwrites_a_file_changed_since_it_was_read(plugin, host, monkeypatch):
    cmd = command(plugin)
    vault, _ = plugin.memory.require()
    ep = remember(plugin, "Dana lives in Lyon")
    path = vault.find_episode(chat(plugin), ep.id).path
    mine = path.read_text(encoding="utf-8").replace("Lyon", "Lyon, near the river")
    hand_edit_before_lock(monkeypatch, vault, path, mine)
    count = commits(vault.root)
    reply = await say(cmd, host, f"!memory edit {ep.id} Dana lives in Paris")
    assert reply.startswith(f"[Memory] Episode {ep.id} changed on disk while this edit ran")
    assert f"!memory show {ep.id}" in reply and "nothing was written" in reply
    assert path.read_text(encoding="utf-8") == mine
    assert commits(vault.root) == count


async def test_a_secret_in_the_new_text_is_redacted_and_said(plugin, host):
    cmd = command(plugin)
    vault, _ = plugin.memory.require()
    ep = remember(plugin, "Eve's wifi is in the hallway")
    reply = await say(cmd, host, f"!memory edit {ep.id} Eve's wifi password is Zq7-hunter2-x9")
    body = vault.find_episode(chat(plugin), ep.id).episode.body
    assert body == "Eve's wifi password is [redacted:password]"
    assert reply.endswith(
        "\nA secret was redacted before saving (password): stored as [redacted:password]."
    )
    assert "hunter2" not in reply and "hunter2" not in vault.find_episode(
        chat(plugin), ep.id
    ).path.read_text(encoding="utf-8")
    plain = await say(cmd, host, f"!memory edit {ep.id} Eve's wifi is on the fridge")
    assert "redacted" not in plain


async def test_edit_without_its_arguments_answers_usage(plugin, host):
    cmd = command(plugin)
    ep = remember(plugin, "Finn likes jazz")
    assert await say(cmd, host, "!memory edit") == EDIT_USAGE
    assert await say(cmd, host, f"!memory edit {ep.id}") == EDIT_USAGE
    assert await say_as_langbot(cmd, host, f"!memory edit {ep.id}  ") == EDIT_USAGE
    help_text = await say(cmd, host, "!memory help")
    assert "!memory edit <id> <new text> - replace a memory's text" in help_text
    assert "profile edit [session|speaker <sender_id>]" in help_text


# -- !memory profile edit ---------------------------------------------------------------------


async def test_profile_edit_defaults_to_the_askers_profile_and_slots(plugin, host):
    cmd = command(plugin)
    vault, _ = plugin.memory.require()
    count = commits(vault.root)
    reply = await say(cmd, host, "!memory profile edit traits night owl")
    assert reply == "[Memory] Speaker u1 profile traits (add) saved. Now: night owl"
    assert vault.read_profile(chat(plugin), "u1").traits == ("night owl",)
    await say(cmd, host, "!memory profile edit preferences coffee: oat flat white")
    reply = await say(cmd, host, "!memory profile edit preferences coffee: black")
    assert reply == "[Memory] Speaker u1 profile preferences (add) saved. Now: coffee: black"
    assert vault.read_profile(chat(plugin), "u1").preferences == ("coffee: black",)
    reply = await say(cmd, host, "!memory profile edit session name Team chat")
    assert reply == "[Memory] Session profile name (set) saved. Now: Team chat"
    assert vault.read_profile(chat(plugin)).name == "Team chat"
    assert commits(vault.root) == count + 4
    entries = audit.read(vault.layout.audit_path(chat(plugin)))[0][-4:]
    assert [(e.operation, e.source) for e in entries] == [("update_profile", "user")] * 4
    same = await say(cmd, host, "!memory profile edit session name Team chat")
    assert same == "[Memory] Session profile name already says that: nothing changed."
    removed = await say(cmd, host, "!memory profile edit traits remove night owl")
    assert removed == "[Memory] Speaker u1 profile traits (remove) saved. Now: (empty)"
    assert "Name: Team chat" in await say(cmd, host, "!memory profile")


async def test_profile_edit_of_a_speaker_stays_in_this_chat(plugin, host):
    cmd = command(plugin)
    vault, _ = plugin.memory.require()
    vault.update_profile(ProfileEdit(chat(plugin), "traits", "add", "kind", speaker="u2"))
    vault.update_profile(ProfileEdit(chat(plugin, OTHER), "traits", "add", "shy", speaker="u3"))
    reply = await say(cmd, host, "!memory profile edit speaker u2 name Bob")
    assert reply == "[Memory] Speaker u2 profile name (set) saved. Now: Bob"
    assert vault.read_profile(chat(plugin), "u2").name == "Bob"
    elsewhere = await say(cmd, host, "!memory profile edit speaker u3 name Carol")
    assert elsewhere.startswith("[Memory] Speaker u3 has no profile in this chat: nothing")
    assert not vault.profile_path(chat(plugin), "u3").exists()
    assert vault.read_profile(chat(plugin, OTHER), "u3").name is None


async def test_profile_edit_refusals_and_usage(plugin, host):
    cmd = command(plugin)
    vault, _ = plugin.memory.require()
    assert await say(cmd, host, "!memory profile edit") == PROFILE_EDIT_USAGE
    assert await say(cmd, host, "!memory profile edit session name") == PROFILE_EDIT_USAGE
    assert await say(cmd, host, "!memory profile edit speaker") == PROFILE_EDIT_USAGE
    bad = await say(cmd, host, "!memory profile edit session hobbies chess")
    assert bad.startswith("[Memory] 'hobbies' is not a profile field: use name, traits,")
    assert (await say(cmd, host, "!memory profile frob")).startswith("Usage: !memory profile |")
    host.query_vars.pop("sender_id")
    anonymous = await say(cmd, host, "!memory profile edit traits calm")
    assert anonymous.startswith("[Memory] LangBot did not say who you are")
    assert not vault.layout.speakers_dir(chat(plugin)).exists()


async def test_profile_edit_redacts_a_secret_and_says_so(plugin, host):
    cmd = command(plugin)
    vault, _ = plugin.memory.require()
    reply = await say(
        cmd, host, "!memory profile edit session notes the router password is Zq7-hunter2-x9"
    )
    assert reply.endswith(
        "\nA secret was redacted before saving (password): stored as [redacted:password]."
    )
    assert "hunter2" not in reply
    assert "hunter2" not in vault.profile_path(chat(plugin)).read_text(encoding="utf-8")
    assert vault.read_profile(chat(plugin)).notes == "the router password is [redacted:password]"


async def test_profile_edit_never_overwrites_a_file_changed_since_it_was_read(
    plugin, host, monkeypatch
):
    cmd = command(plugin)
    vault, _ = plugin.memory.require()
    vault.update_profile(ProfileEdit(chat(plugin), "name", "set", "Team chat"))
    path = vault.profile_path(chat(plugin))
    mine = path.read_text(encoding="utf-8").replace("Team chat", "Hiking club")
    hand_edit_before_lock(monkeypatch, vault, path, mine)
    count = commits(vault.root)
    reply = await say(cmd, host, "!memory profile edit session name Chess club")
    assert reply.startswith("[Memory] Session profile changed on disk while this edit ran")
    assert path.read_text(encoding="utf-8") == mine and commits(vault.root) == count
