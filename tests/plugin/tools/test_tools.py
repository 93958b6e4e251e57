"""The four memory tools through the SDK's Tool.call with a real Session and the fake host,
over a real vault and real indexes in tmp_path: upstream messages and return shapes."""

from __future__ import annotations

import pytest

from tests.plugin.recall_parse import ids as recalled_ids
from tests.plugin.recall_parse import parse as parse_recall
from vault.files import audit
from vault.format.model import Speaker
from vault.writes.new_episode import NewEpisode

# tests/plugin/conftest.py `plugin_embedder`: what is recalled here is what the model finds.
EMBEDDER = "model"

KB = "kb-memvault"
NO_KB = "Error: no memory knowledge base configured. Create one first."
NOT_IN_PIPELINE = "Error: memory knowledge base is not configured for the current pipeline."


def tool(plugin, name):
    import importlib

    module = importlib.import_module(f"components.tools.{name}")
    cls = {
        "remember": "Remember",
        "recall_memory": "RecallMemory",
        "update_profile": "UpdateProfile",
        "forget": "Forget",
    }[name]
    instance = getattr(module, cls)()
    instance.plugin = plugin
    return instance


async def call(plugin, host, name, params, launcher_id="123", query_id=7):
    return await tool(plugin, name).call(params, host.session("group", launcher_id), query_id)


def scope(plugin, session="group_123", bot="bot-1"):
    return plugin.memory.scope(session, bot)


@pytest.fixture
def opted_in(host):
    host.register_memory_kb(KB)
    return host


# --------------------------------------------------------------------------- opt-in


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("remember", {"content": "x"}),
        ("recall_memory", {"query": "x"}),
        ("update_profile", {"field": "notes", "action": "set", "value": "x"}),
    ],
)
async def test_tools_need_the_memory_kb_in_this_pipeline(plugin, host, name, params):
    assert await call(plugin, host, name, params) == NO_KB
    host.register_memory_kb(KB)
    host.pipeline_kbs = []
    assert await call(plugin, host, name, params) == NOT_IN_PIPELINE


async def test_forget_needs_a_kb_but_not_the_pipeline(plugin, host):
    assert await call(plugin, host, "forget", {"episode_id": "ep_1"}) == (
        "Error: no memory knowledge base configured."
    )
    host.register_memory_kb(KB)
    host.pipeline_kbs = []
    assert await call(plugin, host, "forget", {"episode_id": ""}) == (
        "Error: episode_id is required."
    )


# --------------------------------------------------------------------------- remember


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "Error: content is required."),
        ({"content": ""}, "Error: content is required."),
        ({"content": "   "}, "Error: content is required."),
        ({"content": ["x"]}, "Error: content must be a string."),
        ({"content": "x", "tags": "travel"}, "Error: tags must be a list of strings."),
        ({"content": "x", "importance": 9}, "Error: importance must be an integer from 1 to 5."),
        ({"content": "x", "importance": True}, "Error: importance must be an integer from 1 to 5."),
        ({"content": "x", "key": 3}, "Error: key must be a string."),
        ({"content": "x", "category": "gossip"}, "Error: category must be one of identity"),
    ],
)
async def test_remember_rejects_bad_parameters(plugin, opted_in, params, message):
    assert (await call(plugin, opted_in, "remember", params)).startswith(message)


async def test_remember_writes_through_the_vault_and_is_recalled_in_the_same_turn(plugin, opted_in):
    content = "Alice's flight to Tokyo is next Tuesday"
    params = {
        "content": content,
        "tags": ["travel"],
        "importance": "4",
        "key": "alice_flight",
        "category": "plan",
    }
    assert await call(plugin, opted_in, "remember", params, query_id=31) == f"Remembered: {content}"

    vault, _ = plugin.memory.require()
    (stored,) = vault.list_episodes(scope(plugin)).items
    episode = stored.episode
    assert (episode.body, episode.tags, episode.importance) == (content, ("travel",), 4)
    assert (episode.key, episode.category, episode.source) == ("alice_flight", "plan", "agent")
    assert episode.speaker == Speaker("u1", "Alice")
    entries, _ = audit.read(vault.layout.audit_path(scope(plugin)))
    assert [(e.operation, e.source, e.query_id) for e in entries] == [("remember", "agent", 31)]

    text = await call(plugin, opted_in, "recall_memory", {"query": "Tokyo flight"})
    counts, found = parse_recall(text)
    assert counts == (1, 0, 1)  # the agent's memory is not verified until a person says so
    assert found[0].id == episode.id and found[0].text == content and found[0].unverified
    day = f"{episode.created_at:%Y-%m-%d}"
    assert found[0].meta == f"high · plan · {day} · Alice · #travel"  # importance 4 -> high


async def test_remember_a_correction_supersedes_the_old_memory(plugin, opted_in):
    old = "Alice's flight to Tokyo is on Tuesday"
    await call(plugin, opted_in, "remember", {"content": old})
    new = "Alice's flight to Tokyo is on Tuesday, correction: Wednesday"
    await call(plugin, opted_in, "remember", {"content": new, "tags": ["correction"]})
    vault, _ = plugin.memory.require()
    superseded = vault.list_episodes(scope(plugin), status="superseded").items
    assert [s.episode.body for s in superseded] == [old]
    _, active = parse_recall(
        await call(plugin, opted_in, "recall_memory", {"query": "Tokyo flight"})
    )
    assert [a.text for a in active] == [new]


# --------------------------------------------------------------------------- recall_memory


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"query": 5}, "Error: query must be a string (or leave it out to list memories)."),
        ({"query": "x", "top_k": 0}, "Error: top_k must be a positive integer."),
        ({"query": "x", "top_k": "3"}, "Error: top_k must be a positive integer."),
        ({"query": "x", "speaker_id": 1}, "Error: speaker_id must be a string."),
        ({"query": "x", "speaker_name": []}, "Error: speaker_name must be a string."),
        ({"query": "x", "time_after": 2026}, "Error: time_after must be a string."),
        ({"query": "x", "time_before": {}}, "Error: time_before must be a string."),
        ({"query": "x", "source": 1}, "Error: source must be a string."),
        ({"query": "x", "status": 1}, "Error: status must be a string."),
        (
            {"query": "x", "status": "gone"},
            "Error: status must be one of active, superseded, archived, or deleted.",
        ),
        (
            {"query": "x", "importance_min": 6},
            "Error: importance_min must be an integer between 1 and 5.",
        ),
        (
            {"query": "x", "time_after": "last week"},
            "Error: invalid timestamp 'last week'. Use ISO-8601 such as 2026-03-14T00:00:00Z",
        ),
    ],
)
async def test_recall_rejects_bad_parameters(plugin, opted_in, params, message):
    assert await call(plugin, opted_in, "recall_memory", params) == message


async def test_recall_filters_and_exact_id(plugin, opted_in):
    vault, _ = plugin.memory.require()
    sc = scope(plugin)
    alice = vault.remember(
        NewEpisode(sc, "Alice likes the blue tram", speaker=Speaker("u1", "Alice"))
    )
    bob = vault.remember(
        NewEpisode(
            sc, "Bob likes the blue tram", speaker=Speaker("u2", "Bob"), importance=5, source="user"
        )
    )

    async def ids(**params):
        text = await call(plugin, opted_in, "recall_memory", {"query": "blue tram", **params})
        return recalled_ids(text)

    assert sorted(await ids()) == sorted([alice.id, bob.id])
    assert await ids(speaker_id="u2") == [bob.id]
    assert await ids(speaker_name="alice") == [alice.id]
    assert await ids(importance_min=4) == [bob.id]
    assert await ids(source="agent") == [alice.id]
    assert await ids(time_after="2999-01-01") == []
    assert sorted(await ids(time_before="2999-01-01T00:00:00Z")) == sorted([alice.id, bob.id])
    assert await ids(status="archived") == []
    assert await ids(status="deleted") == []
    exact = await call(plugin, opted_in, "recall_memory", {"query": bob.id, "speaker_id": "u1"})
    assert recalled_ids(exact)[0] == bob.id  # the exact id first, whatever the filters


async def test_recall_never_returns_another_chats_memory(plugin, opted_in):
    vault, _ = plugin.memory.require()
    other = vault.remember(NewEpisode(scope(plugin, "group_999"), "Carol's codename is Falcon"))
    # ... and says why in the words of this chat, not of the other one.
    text = await call(plugin, opted_in, "recall_memory", {"query": "Falcon codename"})
    assert text == "No relevant memories found: chat has no memories."
    text = await call(plugin, opted_in, "recall_memory", {"query": other.id})
    assert text == "No relevant memories found: chat has no memories."


# --------------------------------------------------------------------------- update_profile


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"field": "traits", "action": "add"}, "Error: field, action, and value are all required."),
        (
            {"field": "notes", "action": "remove", "value": ""},
            "Error: field, action, and value are all required.",
        ),
        ({"field": "age", "action": "set", "value": "3"}, "Error: invalid field 'age'."),
        ({"field": "name", "action": "drop", "value": "x"}, "Error: invalid action 'drop'."),
        (
            {"field": "name", "action": "set", "value": "x", "scope": "group"},
            "Error: invalid scope. Use 'session' or 'speaker'.",
        ),
        (
            {"field": "traits", "action": "set", "value": "x", "fact_key": 1},
            "Error: fact_key must be a string.",
        ),
        (
            {"field": "notes", "action": "set", "value": "x", "fact_key": "k"},
            "Error: fact_key is only supported for 'traits' and 'preferences'.",
        ),
        (
            {"field": "traits", "action": "set", "value": "x", "previous_value": 1},
            "Error: previous_value must be a string.",
        ),
    ],
)
async def test_update_profile_rejects_bad_parameters(plugin, opted_in, params, message):
    assert await call(plugin, opted_in, "update_profile", params) == message


async def test_update_profile_speaker_and_session(plugin, opted_in):
    text = await call(
        plugin,
        opted_in,
        "update_profile",
        {"field": "preferences", "action": "set", "value": "espresso", "fact_key": "coffee"},
    )
    # The new speaker profile is named after the sender (sender_name), its name being empty.
    assert text == "Speaker profile updated.\nName: Alice\nPreferences: coffee: espresso"
    text = await call(
        plugin,
        opted_in,
        "update_profile",
        {
            "field": "preferences",
            "action": "set",
            "value": "oat flat white",
            "fact_key": "coffee",
            "previous_value": "espresso",
        },
    )
    assert text.splitlines() == [
        "Speaker profile updated.",
        "Name: Alice",
        "Preferences: coffee: oat flat white",
        "Recent preference update (coffee): now oat flat white; previously espresso",
    ]
    text = await call(
        plugin,
        opted_in,
        "update_profile",
        {"field": "notes", "action": "add", "value": "Plans the spring release"},
    )
    assert text == "Session profile updated.\nNotes: Plans the spring release"

    vault, _ = plugin.memory.require()
    assert vault.read_profile(scope(plugin), "u1").preferences == ("coffee: oat flat white",)
    entries, _ = audit.read(vault.layout.audit_path(scope(plugin)))
    assert {(e.operation, e.source, e.query_id) for e in entries} == {
        ("update_profile", "agent", 7)
    }


async def test_update_profile_speaker_needs_a_speaker(plugin, opted_in):
    del opted_in.query_vars["sender_id"]
    params = {"field": "traits", "action": "add", "value": "nurse"}
    assert await call(plugin, opted_in, "update_profile", params) == (
        "Error: current speaker is unavailable."
    )


async def test_update_profile_vault_rules_come_back_as_errors(plugin, opted_in):
    params = {"field": "traits", "action": "remove", "value": "never added"}
    text = await call(plugin, opted_in, "update_profile", params)
    assert text.startswith("Error: traits has no item 'never added'")


# --------------------------------------------------------------------------- forget


async def test_forget_deletes_inside_the_scope_only(plugin, opted_in):
    vault, _ = plugin.memory.require()
    mine = vault.remember(NewEpisode(scope(plugin), "Alice's locker code is 17"))
    theirs = vault.remember(NewEpisode(scope(plugin, "group_999"), "Carol's locker is 42"))

    text = await call(plugin, opted_in, "forget", {"episode_id": theirs.id})
    assert text.startswith(f"Error: no episode {theirs.id} in this chat's memory")
    assert vault.list_episodes(scope(plugin, "group_999")).total == 1

    assert await call(plugin, opted_in, "forget", {"episode_id": mine.id}, query_id=9) == (
        f"Deleted episode {mine.id}."
    )
    assert vault.list_episodes(scope(plugin)).total == 0
    entries, _ = audit.read(vault.layout.audit_path(scope(plugin)))
    assert (entries[-1].operation, entries[-1].source, entries[-1].query_id) == (
        "forget",
        "agent",
        9,
    )
    assert await call(plugin, opted_in, "recall_memory", {"query": "locker code"}) == (
        "No relevant memories found: chat has no memories."
    )


async def test_forget_rejects_an_id_that_is_not_an_id(plugin, opted_in):
    text = await call(plugin, opted_in, "forget", {"episode_id": "../../etc/passwd"})
    assert text.startswith("Error: episode id '../../etc/passwd' is not valid")


async def test_tools_see_the_opt_in_after_the_injector_ran(plugin, host, opted_in):
    """On LangBot 4.11.2 list_pipeline_knowledge_bases answers from `_knowledge_base_uuids`
    (found on the real host); the injector leaves that variable alone, so the tools still
    see the pipeline's opt-in in the same turn."""
    from langbot_plugin.api.entities import events

    from tests.plugin.injection.test_injector import injector_for

    host.kbs_from_query_var = True
    ctx = host.prompt_event()
    (handler,) = injector_for(plugin).registered_handlers[events.PromptPreProcessing]
    await handler(ctx)
    assert host.query_vars["_knowledge_base_uuids"] == [KB, "kb-other"]
    reply = await call(plugin, host, "remember", {"content": "Alice likes jasmine tea"})
    assert reply.startswith("Remembered"), reply
    found = await call(plugin, host, "recall_memory", {"query": "jasmine tea"})
    assert "jasmine" in found
