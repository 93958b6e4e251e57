"""/recall/test (issue 24, item 7) through the one dispatcher and the real standalone server,
on a real vault and real indexes: what `memvault console` shows for a message typed as a
speaker of a chat, its settings, refusals of hostile requests, and isolation: a test from one
chat never shows another chat's memories, whatever the message (property)."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from console.api import dispatch
from console.context import ConsoleContext
from console.errors import ApiError
from console.server import ConsoleServer
from indexer.engine import Engine
from vault.format.model import Speaker
from vault.layout.keys import ScopeId
from vault.writes.create import init_vault
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault
from vault.writes.profile_edit import ProfileEdit
from vault.writes.snapshots import snapshot_path, write_snapshot

A = ScopeId("bot-a", "group_1")
SIBLING = ScopeId("bot-a", "group_2")  # another chat of the same bot
TWIN = ScopeId("bot-b", "group_1")  # the same session name under another bot
MINE = ("Alice is going to Beijing next week", "Alice's locker code is 2718")
THEIRS = {
    SIBLING: ("Carol is going to Beijing next week too", "Carol's locker code is 9999"),
    TWIN: ("Dave is going to Beijing next week as well", "Dave's locker code is 1234"),
}


def body(scope: ScopeId, text: str, **extra: object) -> dict[str, object]:
    return {"scope": {"bot": scope.bot, "session": scope.session}, "text": text, **extra}


@pytest.fixture(scope="module")
def world(tmp_path_factory, console_embedder) -> Iterator[tuple[ConsoleContext, dict]]:
    root = tmp_path_factory.mktemp("recall-test") / "vault"
    init_vault(root, git=True)
    vault = Vault(root, git=True)
    ids: dict[str, str] = {}
    alice = Speaker("u1", "Alice")
    for text in MINE:
        ids[text] = vault.remember(NewEpisode(A, text, speaker=alice)).id
    for scope, texts in THEIRS.items():
        for text in texts:
            ids[text] = vault.remember(NewEpisode(scope, text, priority="critical")).id
    vault.update_profile(ProfileEdit(A, "name", "set", "Project chat"))
    vault.update_profile(ProfileEdit(A, "traits", "add", "early riser", speaker="u1"))
    engine = Engine.open(root, embedder=console_embedder)
    engine.reconcile()
    yield ConsoleContext(vault=vault, engine=engine), ids
    engine.close()


def test_a_message_gets_the_chats_blocks_with_the_plugins_defaults(world):
    ctx, ids = world
    shown = dispatch(ctx, "/recall/test", body(A, "When is Alice going to Beijing?", speaker="u1",
                                                speaker_name="Alice"))  # fmt: skip
    assert shown["settings_from"] == "defaults" and shown["recorded"] is False
    assert shown["settings"]["top_k"] == 3 and shown["settings"]["recall_gate"] == "on"
    blocks = {b["block"]: b["text"] for b in shown["blocks"]}
    assert list(blocks) == ["profile", "memories"]  # no event types: no key-events block
    assert "Project chat" in blocks["profile"] and "early riser" in blocks["profile"]
    assert shown["recalled_ids"][0] == ids[MINE[0]] and MINE[0] in blocks["memories"]
    assert shown["gate"].startswith("gate: passed") and shown["why"] is None
    assert all(b["target"] == "default_prompt" for b in shown["blocks"])


def test_a_greeting_shows_the_gate_and_the_reason(world):
    ctx, _ = world
    shown = dispatch(ctx, "/recall/test", body(A, "hi!", speaker="u1"))
    assert shown["gate"] == "gate: skipped: greeting"
    assert shown["nothing_injected"]["words"] == "gate (greeting)"
    assert [b["block"] for b in shown["blocks"]] == ["profile"]


THEIR_TEXT = [t for texts in THEIRS.values() for t in texts]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    message=st.one_of(
        st.sampled_from(THEIR_TEXT),
        st.sampled_from(["Beijing?", "locker code", "Carol", "Dave", "who is going to Beijing?"]),
        st.text(min_size=1, max_size=60),
    ),
    speaker=st.sampled_from(["", "u1", "u2"]),
)
def test_a_test_from_one_chat_never_shows_another_chats_memory(world, message, speaker):
    ctx, ids = world
    try:
        shown = dispatch(ctx, "/recall/test", body(A, message, speaker=speaker or None))
    except ApiError as refused:  # a message of NULs only, and such: refused, never a leak
        assert refused.code == "bad_request"
        return
    text = "\n".join(b["text"] for b in shown["blocks"])
    theirs = {ids[t] for t in THEIR_TEXT}
    named = {*shown["recalled_ids"], *shown["episode_ids"], *shown["critical_ids"]}
    assert not named & theirs
    assert not [t for t in THEIR_TEXT if t in text]
    assert not [i for i in theirs if i in text]
    # ...and the other chats' own tests do see theirs (the property is not vacuous).
    twin = dispatch(ctx, "/recall/test", body(TWIN, "Dave's locker code"))
    assert ids[THEIRS[TWIN][1]] in twin["critical_ids"]


def test_an_episode_id_of_another_chat_as_the_message_finds_nothing(world):
    ctx, ids = world
    for text in THEIR_TEXT:
        shown = dispatch(ctx, "/recall/test", body(A, ids[text]))
        assert ids[text] not in json.dumps(shown["blocks"]) and shown["recalled_ids"] == []


def test_the_settings_of_the_chats_last_turn_are_used_standalone(world):
    ctx, _ = world
    turn = {"top_k": 1, "half_life_days": 30.0, "injection_chars": 4000, "relevance_floor": 0.2,
            "recall_gate": "off", "event_types": [], "events_injected": 5,
            "linked_people": False}  # fmt: skip
    try:
        kb_ids = ["../../bots/bot-b", 7, "x" * 5000]  # a hand-edited snapshot
        write_snapshot(ctx.vault.root, A, {"query_id": 3, "turn_settings": turn, "kb_ids": kb_ids})
        shown = dispatch(ctx, "/recall/test", body(A, "Beijing locker code", speaker="u1"))
        assert shown["settings_from"] == "last_turn" and shown["settings"] == turn
        assert len(shown["recalled_ids"]) == 1 and shown["gate"] == "gate: off"
        assert shown["kb_ids"] == ["../../bots/bot-b"]  # a library scope of its own, empty
        odd = {**turn, "top_k": True, "relevance_floor": 7}
        write_snapshot(ctx.vault.root, A, {"query_id": 4, "turn_settings": odd})
        again = dispatch(ctx, "/recall/test", body(A, "Beijing"))
        assert again["settings_from"] == "defaults"
    finally:
        snapshot_path(ctx.vault.root, A).unlink()


def test_without_an_index_the_test_says_why_nothing_would_be_injected(world):
    ctx, _ = world
    broken = ConsoleContext(vault=ctx.vault, engine=None, warnings=["index cannot be opened (x)"])
    shown = dispatch(broken, "/recall/test", body(A, "Beijing?"))
    assert shown["blocks"] == []
    assert shown["nothing_injected"]["words"] == "index unavailable (index cannot be opened (x))"


@pytest.fixture(scope="module")
def served(world) -> Iterator[str]:
    ctx, _ = world
    server = ConsoleServer(ctx, port=0, token="t0k3n")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.port}/api/console"
    server.shutdown()


def http(url: str, payload: dict) -> tuple[int, dict]:
    request = urllib.request.Request(
        url,
        data=json.dumps({"endpoint": "/recall/test", "body": payload}).encode(),
        headers={"X-MemVault-Token": "t0k3n", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as refused:
        return refused.code, json.load(refused)


@pytest.mark.parametrize(
    ("payload", "status", "words"),
    [
        (body(ScopeId("bot-a", "group_404"), "hi"), 404, "bot bot-a has no chat group_404"),
        (body(ScopeId("bot-c", "group_1"), "hi"), 404, "bot bot-c has no chat group_1"),
        (body(A, "x" * 4001), 400, "`text` is 4001 characters: at most 4000"),
        (body(A, "hi", speaker="a" * 2000), 400, "at most 1024"),
        (body(A, "hi", speaker_name=["Alice"]), 400, "`speaker_name` must be a string"),
        ({"text": "hi"}, 400, "`scope` is missing"),
    ],
)
def test_hostile_requests_get_the_status_and_a_message_saying_what_to_send(
    served, payload, status, words
):
    code, answer = http(served, payload)
    assert code == status and words in answer["error"], answer
    assert len(answer["error"]) < 300


def test_the_server_answers_a_recall_test(served):
    code, answer = http(served, body(A, "When is Alice going to Beijing?"))
    assert code == 200 and MINE[0] in json.dumps(answer["data"]["blocks"], ensure_ascii=False)
